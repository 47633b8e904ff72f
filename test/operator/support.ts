// Shared rig for the operator tests: a fake API server seeded with the standalone example (plus
// the Infra's NAD), a controllable data plane, a manual clock, and fast timings.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { ClusterState } from "../../src/model/types.js";
import type { DataPlaneView } from "../../src/operator/status/dataplane.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import type { RunOperatorOptions, RunningOperator } from "../../src/operator/process/options.js";
import { runOperator } from "../../src/operator/process/run.js";
import { OPERATOR_METRICS, type OperatorMetrics } from "../../src/operator/process/metrics.js";
import { Metrics } from "../../src/metrics/index.js";
import { KubeRest } from "../../src/kube/rest.js";
import { Reconciler, type ReconcilerOptions } from "../../src/operator/writing/reconcile.js";
import { ManualClock } from "../support/manual-clock.js";
import type { Outputs } from "../../src/pipeline/outputs.js";
import {
  BUILTIN_KINDS,
  EXTERNAL_KINDS,
  FakeApiServer,
  OOOI_KINDS,
  kubeConfigFor,
  type KubeObject,
} from "../support/fake-apiserver/index.js";
import { availableStatus } from "../support/fake-apiserver/deployments.js";
import type { JsonObject } from "../support/fake-apiserver/types.js";
import type { Logger } from "../../src/util/logger.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject as WatchedObject } from "../../src/kube/rest.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/standalone/", import.meta.url));

/** The example's objects, as plain JSON. */
export function exampleObjects(): JsonObject[] {
  const out: JsonObject[] = [];
  for (const f of readdirSync(EXAMPLES)
    .filter((n) => n.endsWith(".yaml"))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(EXAMPLES, f), "utf8"))) {
      const v = doc.toJS() as JsonObject | null;
      if (v !== null) out.push(v);
    }
  }
  return out;
}

/** The watched resource each kind of the example is listed under in a snapshot's raw objects. */
const RESOURCE_OF_EXAMPLE_KIND: Readonly<Record<string, ResourceName>> = {
  Infra: "infras",
  InfraClusterAttachment: "attachments",
  HostedCluster: "hostedclusters",
  NodePool: "nodepools",
  Machine: "machines",
  VirtualMachineInstance: "vmis",
  Service: "services",
  Namespace: "namespaces",
};

/**
 * A snapshot's raw objects (one map per watched resource, keyed "<namespace>/<name>") holding each
 * example object `edit` returns; undefined leaves it out.
 */
export function exampleRaw(
  edit: (o: WatchedObject) => WatchedObject | undefined = (o) => o,
): Record<ResourceName, Map<string, WatchedObject>> {
  const raw = Object.fromEntries(WATCHED_RESOURCES.map((r) => [r.name, new Map<string, WatchedObject>()])) as Record<
    ResourceName,
    Map<string, WatchedObject>
  >;
  for (const example of exampleObjects() as WatchedObject[]) {
    const resource = RESOURCE_OF_EXAMPLE_KIND[String(example["kind"])];
    const o = resource === undefined ? undefined : edit(example);
    if (resource === undefined || o === undefined) continue;
    raw[resource].set(`${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`, o);
  }
  return raw;
}

/** The Infra's Multus NAD (a bridge on VLAN 100), which the per-component NADs copy. */
export const INFRA_NAD: JsonObject = {
  apiVersion: "k8s.cni.cncf.io/v1",
  kind: "NetworkAttachmentDefinition",
  metadata: { name: "vlan100", namespace: "clusters" },
  spec: {
    config: JSON.stringify({
      cniVersion: "0.3.1",
      name: "vlan100",
      type: "bridge",
      bridge: "br-vlan100",
      vlan: 100,
      ipam: {},
    }),
  },
};

/** A fake serving every kind the operator touches, with the example seeded. */
export async function seededFake(extra: { bookmarkIntervalMs?: number } = {}): Promise<FakeApiServer> {
  const fake = await FakeApiServer.start({
    kinds: [...BUILTIN_KINDS, ...EXTERNAL_KINDS, ...OOOI_KINDS],
    namespaces: ["default", "kube-system", "clusters", "oooi-system"],
    ...extra,
  });
  for (const o of exampleObjects()) fake.seed(o);
  fake.seed(INFRA_NAD);
  return fake;
}

/** A DataPlaneView the test steers. */
export class FakeDataPlane implements DataPlaneView {
  syncedAll = true;
  readonly nacks = new Map<string, string>();
  readonly #listeners = new Set<() => void>();

  synced(nodeGroup: string): boolean {
    return this.syncedAll && !this.nacks.has(nodeGroup);
  }

  serving(nodeGroup: string): boolean {
    return this.synced(nodeGroup);
  }

  lastNack(nodeGroup: string): string | undefined {
    return this.nacks.get(nodeGroup);
  }

  /** No client-level words: the status falls back to lastNack's text. */
  health(): string | undefined {
    return undefined;
  }

  ackedVersion(): string | undefined {
    return this.syncedAll ? "v1" : undefined;
  }

  /** The answers themselves: the same answers, the same stamp. */
  stamp(nodeGroup: string): string {
    return JSON.stringify([this.synced(nodeGroup), this.lastNack(nodeGroup), this.ackedVersion()]);
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Changes something and notifies. */
  update(change: (self: this) => void): void {
    change(this);
    for (const l of this.#listeners) l();
  }
}

/** Logger that drops everything (set OOOI_TEST_LOG=1 to see it). */
export const quietLogger: Logger =
  process.env["OOOI_TEST_LOG"] === "1"
    ? {
        debug: (o, m) => {
          console.log("debug", m, o);
        },
        info: (o, m) => {
          console.log("info", m, o);
        },
        warn: (o, m) => {
          console.log("warn", m, o);
        },
        error: (o, m) => {
          console.log("error", m, o);
        },
      }
    : { debug() {}, info() {}, warn() {}, error() {} };

/** Every onState call, newest last. */
export interface StateLog {
  readonly calls: { state: ClusterState; outputs: Outputs }[];
  last(): { state: ClusterState; outputs: Outputs } | undefined;
}

/** A leader's Reconciler against the API server at `url`: quiet, a manual clock, no data plane; `opts` override. */
export function leaderReconciler(url: string, opts: Partial<ReconcilerOptions> = {}): Reconciler {
  return new Reconciler({
    rest: new KubeRest(kubeConfigFor(url)),
    settings: operatorSettings({ namespace: "oooi-system" }),
    dataPlane: new FakeDataPlane(),
    clock: new ManualClock(),
    logger: quietLogger,
    metrics: new Metrics().recorder(OPERATOR_METRICS),
    isLeader: () => true,
    ...opts,
  });
}

/** An operator on the fake with test timings; returns it with its state log and metrics. */
export function startOperator(
  fake: FakeApiServer,
  opts: Partial<RunOperatorOptions> = {},
): { op: RunningOperator; states: StateLog; metrics: OperatorMetrics; dataPlane: FakeDataPlane } {
  const calls: { state: ClusterState; outputs: Outputs }[] = [];
  const metrics = new Metrics().recorder(OPERATOR_METRICS);
  const dataPlane = new FakeDataPlane();
  const op = runOperator({
    kubeConfig: kubeConfigFor(fake.url),
    settings: operatorSettings({ namespace: "oooi-system" }),
    dataPlane,
    logger: quietLogger,
    metrics,
    onState: (state, outputs) => {
      calls.push({ state, outputs });
    },
    resyncMs: 250,
    // The fake serves no hosted cluster; test/kube/apps-ingress.test.ts runs the automation for real.
    appsIngress: false,
    // No CoreDNS behind the fake's Services; test/operator/dns-ready.test.ts asks a real one.
    dnsProbe: false,
    // A quick retry for prompt take-overs after a release, but a renew deadline no stalled event
    // loop on a loaded CI machine reaches (the election's own timing is tested on a manual clock).
    leaseTiming: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 100 },
    backoff: { initialMs: 20, maxMs: 200 },
    watch: { timeoutSeconds: 30, discoveryIntervalMs: 500 },
    ...opts,
  });
  return { op, states: { calls, last: () => calls[calls.length - 1] }, metrics, dataPlane };
}

/** Sum of a counter's samples in the Prometheus exposition, optionally only those whose labels contain `filter`. */
export async function counter(metrics: OperatorMetrics, name: string, filter = ""): Promise<number> {
  let sum = 0;
  for (const line of (await metrics.render()).split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!line.includes(filter)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** A stored object (undefined when absent). */
export function stored(
  fake: FakeApiServer,
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
): KubeObject | undefined {
  const k = fake.store.kindByGvk(apiVersion, kind);
  if (k === undefined) throw new Error(`${apiVersion} ${kind} not served`);
  try {
    return fake.store.get(k, namespace, name);
  } catch {
    return undefined;
  }
}

/** Stored objects of a kind, optionally in one namespace. */
export function storedList(fake: FakeApiServer, apiVersion: string, kind: string, namespace?: string): KubeObject[] {
  const k = fake.store.kindByGvk(apiVersion, kind);
  if (k === undefined) throw new Error(`${apiVersion} ${kind} not served`);
  return fake.store.list(k, namespace, {}).items;
}

/** Plays the Deployment controller: every Deployment's status says all replicas are updated and available. */
export function markDeploymentsAvailable(fake: FakeApiServer): number {
  let n = 0;
  for (const d of storedList(fake, "apps/v1", "Deployment")) {
    const status = availableStatus(d);
    if (status === undefined) continue;
    fake.seed({ ...d, apiVersion: "apps/v1", kind: "Deployment", status });
    n++;
  }
  return n;
}

/** The Ready condition of a stored object's status. */
export function readyOf(o: KubeObject | undefined): Record<string, unknown> | undefined {
  const conditions = ((o?.["status"] ?? {}) as { conditions?: Record<string, unknown>[] }).conditions ?? [];
  return conditions.find((c) => c["type"] === "Ready");
}
