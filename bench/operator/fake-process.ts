// The fake API server's own process, so the operator's RSS and CPU are its own. It seeds the
// generated cluster, stands in for the Deployment controller (marks Deployments available at their
// current generation) and answers the driver over IPC: Machine address changes (stamped on the
// host's monotonic clock just before the watch event is written), request counts, write lists and
// checks of the stored state.
import { APPLIED_HASH_ANNOTATION } from "../../src/operator/writing/applied.js";
import {
  BUILTIN_KINDS,
  EXTERNAL_KINDS,
  FakeApiServer,
  OOOI_KINDS,
  WRITE_VERBS,
  type KubeObject,
  type RequestRecord,
} from "../../test/support/fake-apiserver/index.js";
import { availableStatus } from "../../test/support/fake-apiserver/deployments.js";
import type { JsonObject } from "../../test/support/fake-apiserver/types.js";
import { clusterObjects, machineObject, NS, OPERATOR_NS, type Scale } from "./scale.js";
import { monoMs } from "./stats.js";

/** A desired object the driver wants checked: present with this applied hash. */
export interface ExpectedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly hash: string;
}

/** Driver → fake. */
export type FakeRequest =
  | { readonly op: "stats" }
  | { readonly op: "writes"; readonly since: number }
  | { readonly op: "changes"; readonly since: number }
  | {
      readonly op: "change";
      readonly id: number;
      readonly i: number;
      readonly a: number;
      readonly m: number;
      readonly address: string;
    }
  | { readonly op: "check"; readonly expected: readonly ExpectedObject[] }
  | { readonly op: "stop" };

/** Request counters: totals by verb, and by `"<verb> <resource>"`. */
export interface FakeStats {
  readonly requests: number;
  readonly byVerb: Record<string, number>;
  readonly byResource: Record<string, number>;
  /** Writes other than the leader-election Lease's. */
  readonly writes: number;
  /** Lease create/update calls (leader election renews every 2 s: never quiet). */
  readonly leaseWrites: number;
  /** Monotonic ms of the latest write other than the Lease's (0 before any). */
  readonly lastWriteAt: number;
  readonly deploymentStatusUpdates: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** CPU time (user + system) of this process so far. */
  readonly cpuMs: number;
}

/** One write the operator made. */
export interface WriteRecord {
  readonly at: number;
  readonly verb: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly contentType: string;
  /** How long the fake took to answer it (arrival to response), null while unanswered. */
  readonly ms: number | null;
}

/** Outcome of a check of the stored state. */
export interface CheckResult {
  readonly expected: number;
  readonly missing: string[];
  readonly stale: string[];
  /** Per kind: objects, and those whose Ready condition is True at the current generation. */
  readonly ready: Record<string, { total: number; ready: number; notReady: string[] }>;
}

/** Fake → driver. */
export type FakeReply =
  | {
      readonly type: "ready";
      readonly url: string;
      readonly objects: number;
      readonly seedMs: number;
      readonly rssBytes: number;
    }
  | { readonly type: "stats"; readonly stats: FakeStats }
  | { readonly type: "writes"; readonly writes: WriteRecord[] }
  | { readonly type: "changes"; readonly changes: Record<string, number> }
  | { readonly type: "changed"; readonly id: number; readonly at: number }
  | { readonly type: "check"; readonly result: CheckResult };

/** Kinds whose every modification is described by what it changed (see describeChange). */
const LOGGED_KINDS: readonly [string, string][] = [
  ["hostedcluster.densityops.com/v1alpha1", "Infra"],
  ["hostedcluster.densityops.com/v1alpha1", "InfraClusterAttachment"],
  ["hostedcluster.densityops.com/v1alpha1", "ProxyServer"],
  ["hostedcluster.densityops.com/v1alpha1", "DNSServer"],
  ["hostedcluster.densityops.com/v1alpha1", "DHCPServer"],
  ["v1", "ConfigMap"],
  ["v1", "Service"],
  ["v1", "ServiceAccount"],
  ["v1", "PersistentVolumeClaim"],
  ["apps/v1", "Deployment"],
  ["networking.k8s.io/v1", "NetworkPolicy"],
  ["k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition"],
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function readyOf(o: JsonObject | undefined): { status?: string; reason?: string } | undefined {
  const status = o?.["status"];
  const conditions: unknown[] = isObj(status) && Array.isArray(status["conditions"]) ? status["conditions"] : [];
  const ready = conditions.find((c) => isObj(c) && c["type"] === "Ready");
  return isObj(ready)
    ? {
        ...(typeof ready["status"] === "string" ? { status: ready["status"] } : {}),
        ...(typeof ready["reason"] === "string" ? { reason: ready["reason"] } : {}),
      }
    : undefined;
}

/**
 * "<Kind>: <what changed>" for one modification: spec, data, metadata fields, each status field
 * (the Ready condition as its transition and reason). Machines and the Lease are not described.
 */
function describeChange(kind: string, before: JsonObject | undefined, after: JsonObject): string {
  if (before === undefined) return `${kind}: created`;
  const parts: string[] = [];
  for (const top of ["spec", "data"]) if (JSON.stringify(before[top]) !== JSON.stringify(after[top])) parts.push(top);
  const bm = (before["metadata"] ?? {}) as Record<string, unknown>;
  const am = (after["metadata"] ?? {}) as Record<string, unknown>;
  for (const f of ["labels", "annotations", "finalizers", "ownerReferences"])
    if (JSON.stringify(bm[f]) !== JSON.stringify(am[f])) parts.push(`metadata.${f}`);
  const bs = isObj(before["status"]) ? before["status"] : {};
  const as = isObj(after["status"]) ? after["status"] : {};
  for (const f of [...new Set([...Object.keys(bs), ...Object.keys(as)])].sort()) {
    if (JSON.stringify(bs[f]) === JSON.stringify(as[f])) continue;
    if (f !== "conditions") {
      parts.push(`status.${f}`);
      continue;
    }
    const r0 = readyOf(before);
    const r1 = readyOf(after);
    parts.push(
      r0?.status === r1?.status
        ? "status.conditions"
        : `Ready ${r0?.status ?? "-"}→${r1?.status ?? "-"} (${r1?.reason ?? ""})`,
    );
  }
  return `${kind}: ${parts.length === 0 ? "nothing but metadata bookkeeping" : parts.join(", ")}`;
}

const READY_KINDS: readonly [string, string][] = [
  ["hostedcluster.densityops.com/v1alpha1", "Infra"],
  ["hostedcluster.densityops.com/v1alpha1", "InfraClusterAttachment"],
  ["hostedcluster.densityops.com/v1alpha1", "ProxyServer"],
  ["hostedcluster.densityops.com/v1alpha1", "DNSServer"],
  ["hostedcluster.densityops.com/v1alpha1", "DHCPServer"],
];

/** Runs the fake until told to stop; `send` is process.send. */
export async function fakeMain(scale: Scale): Promise<void> {
  const send = (m: FakeReply): void => {
    process.send?.(m);
  };
  const started = monoMs();
  const fake = await FakeApiServer.start({
    kinds: [...BUILTIN_KINDS, ...EXTERNAL_KINDS, ...OOOI_KINDS],
    namespaces: ["default", "kube-system", NS, OPERATOR_NS],
    // Enough history that no watch of the run is ever answered 410 (every write is an event).
    historyLimit: 1_000_000,
    // The stand-in garbage collector scans every stored object after every write (O(objects) per
    // write: 135 s just to seed 29,200 objects, and the fake, not the operator, limiting
    // convergence). Nothing is deleted in this benchmark, so it is off.
    garbageCollector: false,
  });
  let objects = 0;
  for (const o of clusterObjects(scale)) {
    fake.seed(o);
    objects++;
  }
  const seedMs = monoMs() - started;

  // Stamp writes as they arrive (the request log itself keeps no times); the Lease's apart.
  const writes: { at: number; record: RequestRecord }[] = [];
  let leaseWrites = 0;
  const log = fake.requests;
  const add = log.add.bind(log);
  log.add = (r: RequestRecord): void => {
    add(r);
    if (!WRITE_VERBS.has(r.verb)) return;
    if (r.resource === "leases") {
      leaseWrites++;
      return;
    }
    writes.push({ at: monoMs(), record: r });
  };

  // What every write changed, from the store's own watch (events of the seeding are not described).
  const changeLog: { at: number; what: string }[] = [];
  const lastSeen = new Map<string, JsonObject>();
  for (const [apiVersion, kindName] of LOGGED_KINDS) {
    const k = fake.store.kindByGvk(apiVersion, kindName);
    if (k === undefined) continue;
    fake.store.watch(
      {
        kind: k,
        label: () => true,
        field: () => true,
        bookmarks: false,
        send: (type, event) => {
          const obj = event.copy();
          const m = (obj["metadata"] ?? {}) as { namespace?: string; name?: string };
          const key = `${kindName}/${m.namespace ?? ""}/${m.name ?? ""}`;
          if (type === "ADDED" || type === "MODIFIED") {
            changeLog.push({ at: monoMs(), what: describeChange(kindName, lastSeen.get(key), obj) });
            lastSeen.set(key, obj);
          } else if (type === "DELETED") {
            changeLog.push({ at: monoMs(), what: `${kindName}: deleted` });
            lastSeen.delete(key);
          }
        },
      },
      undefined,
    );
  }

  const deploymentKind = fake.store.kindByGvk("apps/v1", "Deployment");
  let deploymentStatusUpdates = 0;
  // The Deployment controller's part: every Deployment becomes available at its current generation.
  // Driven by a watch, as the real controller is (polling a list of every Deployment 10 times a second
  // was over half of this process's busy CPU at 30 Infras). The status is written on the next turn of
  // the event loop, not inside the store's delivery of the event, so that every watch sees events in order.
  const pending = new Set<string>();
  let flush: NodeJS.Immediate | undefined;
  const markAvailable = (): void => {
    flush = undefined;
    if (deploymentKind === undefined) return;
    for (const key of pending) {
      pending.delete(key);
      const [namespace = "", name = ""] = key.split("/");
      const d = find(fake, "apps/v1", "Deployment", namespace, name);
      if (d === undefined) continue;
      const status = availableStatus(d);
      if (status === undefined) continue;
      fake.seed({ ...d, apiVersion: "apps/v1", kind: "Deployment", status });
      deploymentStatusUpdates++;
    }
  };
  if (deploymentKind !== undefined) {
    fake.store.watch(
      {
        kind: deploymentKind,
        label: () => true,
        field: () => true,
        bookmarks: false,
        send: (type, event) => {
          if (type !== "ADDED" && type !== "MODIFIED") return;
          const obj = event.copy();
          if (availableStatus(obj) === undefined) return;
          const m = (obj["metadata"] ?? {}) as { namespace?: string; name?: string };
          pending.add(`${m.namespace ?? ""}/${m.name ?? ""}`);
          flush ??= setImmediate(markAvailable);
        },
      },
      undefined,
    );
  }

  const stats = (): FakeStats => {
    const byVerb: Record<string, number> = {};
    for (const r of log.all()) byVerb[r.verb] = (byVerb[r.verb] ?? 0) + 1;
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    return {
      cpuMs: (cpu.user + cpu.system) / 1000,
      requests: log.count(),
      byVerb,
      byResource: log.summary(),
      writes: writes.length,
      leaseWrites,
      lastWriteAt: writes[writes.length - 1]?.at ?? 0,
      deploymentStatusUpdates,
      rssBytes: mem.rss,
      heapUsedBytes: mem.heapUsed,
    };
  };

  const check = (expected: readonly ExpectedObject[]): CheckResult => {
    const missing: string[] = [];
    const stale: string[] = [];
    for (const e of expected) {
      const id = `${e.kind} ${e.namespace ?? ""}/${e.name}`;
      const o = find(fake, e.apiVersion, e.kind, e.namespace ?? "", e.name);
      if (o === undefined) missing.push(id);
      else if (
        (o["metadata"] as { annotations?: Record<string, string> }).annotations?.[APPLIED_HASH_ANNOTATION] !== e.hash
      )
        stale.push(id);
    }
    const ready: CheckResult["ready"] = {};
    for (const [apiVersion, kind] of READY_KINDS) {
      const k = fake.store.kindByGvk(apiVersion, kind);
      const items = k === undefined ? [] : fake.store.list(k, undefined, {}).items;
      const notReady = items.filter((o) => !readyNow(o)).map((o) => (o["metadata"] as { name?: string }).name ?? "");
      ready[kind] = { total: items.length, ready: items.length - notReady.length, notReady: notReady.slice(0, 5) };
    }
    return { expected: expected.length, missing: missing.slice(0, 20), stale: stale.slice(0, 20), ready };
  };

  process.on("message", (msg: FakeRequest) => {
    switch (msg.op) {
      case "stats":
        send({ type: "stats", stats: stats() });
        break;
      case "writes":
        send({
          type: "writes",
          writes: writes
            .filter((w) => w.at >= msg.since)
            .map(({ at, record: r }) => ({
              at,
              verb: r.verb,
              resource: r.resource ?? r.path,
              namespace: r.namespace ?? "",
              name: r.name ?? "",
              contentType: r.contentType ?? "",
              ms: r.ms ?? null,
            })),
        });
        break;
      case "changes": {
        const counts: Record<string, number> = {};
        for (const c of changeLog) if (c.at >= msg.since) counts[c.what] = (counts[c.what] ?? 0) + 1;
        send({
          type: "changes",
          changes: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1))),
        });
        break;
      }
      case "change": {
        const o = machineObject(msg.i, msg.a, msg.m, msg.address, scale.realistic);
        const at = monoMs();
        fake.seed(o);
        send({ type: "changed", id: msg.id, at });
        break;
      }
      case "check":
        send({ type: "check", result: check(msg.expected) });
        break;
      case "stop":
        if (flush !== undefined) clearImmediate(flush);
        void fake.stop().then(() => process.exit(0));
        break;
    }
  });
  send({ type: "ready", url: fake.url, objects, seedMs, rssBytes: process.memoryUsage().rss });
}

function find(
  fake: FakeApiServer,
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
): KubeObject | undefined {
  const k = fake.store.kindByGvk(apiVersion, kind);
  if (k === undefined) return undefined;
  try {
    return fake.store.get(k, namespace, name);
  } catch {
    return undefined;
  }
}

/** Ready condition True and observing the current generation. */
function readyNow(o: JsonObject): boolean {
  const generation = (o["metadata"] as { generation?: number }).generation;
  const status = (o["status"] ?? {}) as {
    conditions?: { type?: string; status?: string; observedGeneration?: number }[];
  };
  const ready = status.conditions?.find((c) => c.type === "Ready");
  return ready?.status === "True" && (generation === undefined || ready.observedGeneration === generation);
}
