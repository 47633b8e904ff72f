// The producer side as the benchmark drives it: ClusterState → model build → renderEnvoy per
// Infra → setEnvoySnapshot per node group, timed per stage; and the server-side bookkeeping the
// scenarios wait on (ACKs per group and version, pushes per group).
import { build } from "../../src/model/build.js";
import type { ClusterState } from "../../src/model/types.js";
import type { SnapshotCache } from "../../src/xds/cache/index.js";
import { checkConsistency } from "../../src/xds/consistency.js";
import { renderEnvoy } from "../../src/xds/render/index.js";
import { LISTENER_TYPE_URL } from "../../src/xds/render/type-urls.js";
import type { PushRecord, XdsStatusView } from "../../src/xds/status.js";
import { nowMs } from "./protocol.js";

/** Stage times of one publication, in ms, and the moment it finished. */
export interface Published {
  readonly buildMs: number;
  readonly renderMs: number;
  readonly cacheMs: number;
  /** nowMs() after the last setEnvoySnapshot returned. */
  readonly doneAt: number;
  /** Node groups whose snapshot changed. */
  readonly changed: readonly string[];
}

/**
 * Builds the model of `state`, renders every Infra's proxy and sets each node group's snapshot,
 * as a pipeline without per-Infra change tracking must. Throws on a refused render or snapshot.
 */
export function publish(cache: SnapshotCache, state: ClusterState): Published {
  const t0 = nowMs();
  const model = build(state);
  const t1 = nowMs();
  const rendered = model.topologies.flatMap((t) => {
    if (t.proxy === undefined) return [];
    const r = renderEnvoy(t.proxy);
    if (!r.ok) throw new Error(`render of ${t.proxy.node} refused: ${r.errors.slice(0, 3).join("; ")}`);
    return [{ group: t.proxy.node, resources: r.resources }];
  });
  const t2 = nowMs();
  const changed: string[] = [];
  for (const { group, resources } of rendered) {
    const r = cache.setEnvoySnapshot(group, resources);
    if (!r.ok) throw new Error(`snapshot of ${group} refused: ${r.errors.slice(0, 3).join("; ")}`);
    if (r.changed.length > 0) changed.push(group);
  }
  const t3 = nowMs();
  return { buildMs: t1 - t0, renderMs: t2 - t1, cacheMs: t3 - t2, doneAt: t3, changed };
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
    checkConsistency(r.resources);
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
    status.on("push", (p) => { this.pushes.push(p); });
    status.on("ack", (p) => {
      const key = ackKey(p.group, p.typeUrl, p.version);
      this.#acks.set(key, (this.#acks.get(key) ?? 0) + 1);
      for (const w of [...this.#waiters]) {
        if (w.ready()) { this.#waiters.delete(w); w.resolve(); }
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
      const waiter = { ready, resolve: () => { clearTimeout(timer); resolve(); } };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`timed out waiting for ${String(n)} ACKs of ${group} ${typeUrl} ${version} (have ${String(this.acks(group, typeUrl, version))})`));
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
