// The producer side as the benchmark drives it: ClusterState → renderAll (with the previous
// outputs, as serve and operator keep them) → publishSnapshots, timed per stage; and the server-side bookkeeping the
// scenarios wait on (ACKs per group and version, pushes per group).
import { build } from "../../src/model/build.js";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import type { ClusterState } from "../../src/model/types.js";
import type { SnapshotCache } from "../../src/xds/cache/index.js";
import { checkConsistency } from "../../src/envoy/validate/consistency.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import { renderAll, type Outputs } from "../../src/pipeline/outputs.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import type { PushRecord, XdsStatusView } from "../../src/xds/client-status.js";
import { nowMs } from "./protocol.js";
import { envoyInput } from "../../src/envoy/snapshot.js";

/** Stage times of one publication, in ms, and the moment it finished. */
export interface Published {
  /** The model build alone (publish: not measured, see timeBuild). */
  readonly buildMs: number;
  /** renderAll: model build plus every Infra's renderers. */
  readonly renderMs: number;
  readonly cacheMs: number;
  /** nowMs() after the last setEnvoySnapshot returned. */
  readonly doneAt: number;
  /** Node groups whose snapshot changed. */
  readonly changed: readonly string[];
}

/**
 * One Infra's slice, the way an incremental pipeline with per-Infra change tracking would publish
 * it: build of the slice, renderEnvoy, setEnvoySnapshot of its group only (other groups untouched).
 */
export function publishSlice(cache: SnapshotCache, state: ClusterState): Published {
  const t0 = nowMs();
  const model = build(state);
  const t1 = nowMs();
  const buildMs = t1 - t0;
  const rendered = model.topologies.flatMap((t) => {
    if (t.proxy === undefined) return [];
    const r = renderEnvoy(t.proxy);
    if (!r.ok)
      throw new Error(
        `render of ${t.proxy.node} refused: ${r.errors
          .slice(0, 3)
          .map((e) => e.message)
          .join("; ")}`,
      );
    return [{ group: t.proxy.node, resources: r.resources }];
  });
  const t2 = nowMs();
  const changed: string[] = [];
  for (const { group, resources } of rendered) {
    const r = cache.setSnapshot(group, envoyInput(resources));
    if (!r.ok) throw new Error(`snapshot of ${group} refused: ${r.errors.slice(0, 3).join("; ")}`);
    if (r.changed.length > 0) changed.push(group);
  }
  const t3 = nowMs();
  return { buildMs, renderMs: t2 - t1, cacheMs: t3 - t2, doneAt: t3, changed };
}

/** The last outputs published into each cache: what the real pipeline keeps between changes. */
const lastOutputs = new WeakMap<SnapshotCache, Outputs>();

/**
 * What `oooi serve` and `oooi operator` do on every change: renderAll over the whole state (model
 * build, then every Infra's proxy, DNS and DHCP — an unchanged proxy keeps its rendered resources
 * from the previous outputs) and publishSnapshots into the cache (buildMs: NaN, see timeBuild). `changes`: the keyed changes since the
 * previous call, as the watchers report them to serve and operator (else found by object identity).
 * Throws on a refused render.
 */
export function publish(cache: SnapshotCache, state: ClusterState, changes?: readonly ObjectChange[]): Published {
  if (!lastOutputs.has(cache)) cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC); // as serve and operator do
  const t0 = nowMs();
  const previous = lastOutputs.get(cache);
  // As serve without --out: no files asked for (each rendering continues from the previous one's
  // own), no status.json; a refused proxy is the child status its Infra reports.
  const out = renderAll(
    state,
    previous === undefined ? {} : { reuse: previous, ...(changes === undefined ? {} : { changes }) },
  );
  const refused = out.infras.flatMap((r) =>
    r.childStatus.filter((s) => s.kind === "ProxyServer" && s.status.conditions[0]?.status !== "True"),
  );
  if (refused.length > 0)
    throw new Error(
      `render refused: ${refused
        .map((s) => s.status.conditions[0]?.message ?? "")
        .slice(0, 3)
        .join("; ")}`,
    );
  const t1 = nowMs();
  const before = new Map(cache.groups().map((g) => [g, cache.getSnapshot(g)?.version]));
  publishSnapshots(cache, out, {
    error: (_o, msg) => {
      throw new Error(msg);
    },
  });
  const t2 = nowMs();
  lastOutputs.set(cache, out);
  const changed = cache.groups().filter((g) => before.get(g) !== cache.getSnapshot(g)?.version);
  return { buildMs: Number.NaN, renderMs: t1 - t0, cacheMs: t2 - t1, doneAt: t2, changed };
}

/**
 * The model build of `state` alone, for its share of publish's renderMs. Call it once the streams
 * hold the change: run right after publish, it would delay the push it is not part of.
 */
export function timeBuild(state: ClusterState): number {
  const t = nowMs();
  build(state);
  return nowMs() - t;
}

/** Median time of checkConsistency over the first Infra's rendered resources. */
export function consistencyMs(state: ClusterState, runs = 5): number {
  const proxy = build(state).topologies[0]?.proxy;
  if (proxy === undefined) return Number.NaN;
  const r = renderEnvoy(proxy);
  if (!r.ok) return Number.NaN;
  const times: number[] = [];
  for (let k = 0; k < runs; k += 1) {
    const t = nowMs();
    // A fresh set each time: checkConsistency remembers results per set.
    checkConsistency({ ...r.resources });
    times.push(nowMs() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)] ?? Number.NaN;
}

/** The group's current listener (LDS) version: what a stream holds once it has the change. */
export function listenerVersion(cache: SnapshotCache, group: string): string {
  return cache.getSnapshot(group)?.types.get(LISTENER_TYPE_URL)?.version ?? "";
}

/** Server-side ACKs and pushes as the status recorder reports them. */
export class ServerLog {
  readonly #acks = new Map<string, number>();
  readonly #waiters = new Set<{ ready: () => boolean; resolve: () => void }>();
  /** Every push since construction (or the last reset), in order. */
  pushes: PushRecord[] = [];

  constructor(status: XdsStatusView) {
    status.on("push", (p) => {
      this.pushes.push(p);
    });
    status.on("ack", (p) => {
      const key = ackKey(p.group, p.typeUrl, p.version);
      this.#acks.set(key, (this.#acks.get(key) ?? 0) + 1);
      for (const w of [...this.#waiters]) {
        if (w.ready()) {
          this.#waiters.delete(w);
          w.resolve();
        }
      }
    });
  }

  /** ACKs received for `version` of `typeUrl` in `group`. */
  acks(group: string, typeUrl: string, version: string): number {
    return this.#acks.get(ackKey(group, typeUrl, version)) ?? 0;
  }

  /** Resolves once `n` ACKs of that version arrived; rejects after `timeoutMs`. */
  async untilAcked(group: string, typeUrl: string, version: string, n: number, timeoutMs: number): Promise<void> {
    const ready = (): boolean => this.acks(group, typeUrl, version) >= n;
    if (ready()) return;
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(
          new Error(
            `timed out waiting for ${String(n)} ACKs of ${group} ${typeUrl} ${version} (have ${String(this.acks(group, typeUrl, version))})`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }
}

function ackKey(group: string, typeUrl: string, version: string): string {
  return `${group}\u0000${typeUrl}\u0000${version}`;
}

/** Every open stream has ACKed the last response of every type it was sent. */
export function allSynced(status: XdsStatusView, streams: number): boolean {
  const open = status.streams();
  if (open.length < streams) return false;
  return open.every((s) => s.types.every((t) => t.lastSent === undefined || t.lastAcked?.nonce === t.lastSent.nonce));
}

/** Polls `ready` every `everyMs` until it holds; rejects after `timeoutMs`. */
export async function poll(ready: () => boolean, timeoutMs: number, what: string, everyMs = 50): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!ready()) {
    if (nowMs() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
