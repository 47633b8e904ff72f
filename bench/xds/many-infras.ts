// Scenario 1, many Infras: 300 Infras × 3 Envoy streams (SotW ADS), 5 hosted clusters × 100
// workers each. One Machine changes address in one Infra; measured from the state change (before
// the model build) until all 3 of that Infra's streams received the new listener, and every push
// to another group is counted (there must be none).
//
// Two producer paths, both from src/ functions: the full path (build of the whole ClusterState,
// renderEnvoy of every Infra, setEnvoySnapshot of every group — what a pipeline without per-Infra
// change tracking does) and a per-Infra path (build, render and set of the changed Infra's slice
// only, the slice kept by the benchmark as an incremental pipeline would). The full path costs
// seconds, so it is measured a few times; the per-Infra path gives the distribution.
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { startXdsServer } from "../../src/xds/server/index.js";
import { NS } from "../../test/support/fixtures.js";
import { endedSummary, Fleet } from "./fleet.js";
import { nowMs, TYPE_CODES, type StreamSpec } from "./protocol.js";
import {
  allSynced,
  consistencyMs,
  listenerVersion,
  poll,
  publish,
  publishSlice,
  ServerLog,
  timeBuild,
} from "./publish.js";
import {
  clusterName,
  groupOf,
  infraState,
  merge,
  moveMachine,
  spareAddress,
  workerName,
  type InfraShape,
} from "./state.js";
import { median, progress, round, seeded, summary } from "./stats.js";
import type { ClusterState } from "../../src/model/types.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

/** Sizes and repetitions of scenario 1. */
export interface ManyInfrasOptions {
  readonly infras: number;
  readonly replicas: number;
  readonly clusters: number;
  readonly workers: number;
  /** Changes through the per-Infra path. */
  readonly changes: number;
  /** Changes through the full path. */
  readonly fullChanges: number;
  readonly processes: number;
}

/** Runs scenario 1 and returns its result object. */
export async function manyInfras(o: ManyInfrasOptions): Promise<Record<string, unknown>> {
  // /21 per Infra: 500 workers, the servers and the DHCP pool fit with room to move workers.
  const shapes: InfraShape[] = Array.from({ length: o.infras }, (_, i) => ({
    index: i,
    base: ((10 << 24) >>> 0) + i * 2048,
    prefix: 21,
    clusters: o.clusters,
    workers: o.workers,
    layout: "interleaved" as const,
  }));
  const parts: ClusterState[] = shapes.map(infraState);
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  const server = await startXdsServer({ cache, maxStreamAgeMs: 0 });
  const log = new ServerLog(server.status);
  const address = `127.0.0.1:${String(server.port)}`;
  const fleet = Fleet.start(o.processes);
  try {
    // Each Infra is independent, so per-Infra publication sets the same snapshots as a full one
    // (the full-path changes below would push to every group if it did not).
    for (const p of parts) publishSlice(cache, p);
    const streamsOf = (i: number): number[] => Array.from({ length: o.replicas }, (_, r) => i * o.replicas + r);
    const specs: StreamSpec[] = shapes.flatMap((s) =>
      streamsOf(s.index).map((id, r) => ({
        id,
        address,
        kind: "sotw" as const,
        node: `${groupOf(s.index)}/envoy-${String(r)}`,
        group: groupOf(s.index),
      })),
    );
    const hasListener = (i: number, version: string): boolean =>
      streamsOf(i).every((id) => fleet.latest(id, TYPE_CODES.listener)?.version === version);
    const openStart = nowMs();
    for (let k = 0; k < specs.length; k += 150) {
      const batch = specs.slice(k, k + 150);
      fleet.open(batch);
      const infras = [...new Set(batch.map((s) => Math.floor(s.id / o.replicas)))];
      await fleet.until(
        () => infras.every((i) => hasListener(i, listenerVersion(cache, groupOf(i)))),
        60_000,
        "listeners on new streams",
      );
    }
    await poll(() => allSynced(server.status, specs.length), 60_000, "every stream to ACK");
    progress(`many-infras: ${String(specs.length)} streams synced in ${String(Math.round(nowMs() - openStart))} ms`);

    const pick = seeded(1);
    let moves = 0;
    // Moves one worker of a random Infra to a spare address; returns the Infra.
    const change = (): number => {
      const i = pick(o.infras);
      const c = pick(o.clusters);
      const w = pick(o.workers);
      const shape = shapes[i] as InfraShape;
      const hc = clusterName(i, c);
      parts[i] = moveMachine(
        parts[i] as ClusterState,
        `${NS}-${hc}`,
        workerName(i, c, w),
        `${hc}-workers`,
        spareAddress(shape, (moves += 1)),
      );
      return i;
    };
    let unaffectedPushes = 0;
    let unaffectedReceipts = 0;
    // One change: `produce` runs from the clock start; the change is done when the 3 streams hold
    // the new listener and the server has their ACKs.
    const measure = async (
      i: number,
      produce: () => void,
    ): Promise<{ total: number; push: number; doneAt: number; t0: number }> => {
      const group = groupOf(i);
      const mine = new Set(streamsOf(i));
      const pushMark = log.pushes.length;
      const stop = fleet.onReceipt((r) => {
        if (!mine.has(r[0])) unaffectedReceipts += 1;
      });
      const t0 = nowMs();
      produce();
      const doneAt = nowMs();
      const version = listenerVersion(cache, group);
      await fleet.until(() => hasListener(i, version), 60_000, `the new listener on ${group}`);
      const received = Math.max(...streamsOf(i).map((id) => fleet.latest(id, TYPE_CODES.listener)?.at ?? Number.NaN));
      await log.untilAcked(group, LISTENER_TYPE_URL, version, o.replicas, 60_000);
      stop();
      unaffectedPushes += log.pushes.slice(pushMark).filter((p) => p.group !== group).length;
      return { total: received - t0, push: received - doneAt, doneAt, t0 };
    };

    const incremental: number[] = [];
    const incrementalPush: number[] = [];
    const incrementalProduce: number[] = [];
    const incStages = { build: [] as number[], render: [] as number[], cache: [] as number[] };
    for (let n = 0; n < o.changes; n += 1) {
      const i = change();
      const slice = parts[i] as ClusterState;
      const r = await measure(i, () => {
        const p = publishSlice(cache, slice);
        incStages.build.push(p.buildMs);
        incStages.render.push(p.renderMs);
        incStages.cache.push(p.cacheMs);
        if (p.changed.length !== 1) throw new Error(`expected one changed group, got ${String(p.changed.length)}`);
      });
      incremental.push(r.total);
      incrementalPush.push(r.push);
      incrementalProduce.push(r.doneAt - r.t0);
    }
    progress(
      `many-infras: ${String(o.changes)} per-Infra changes done, ${String(fleet.ended.length)} streams ended so far`,
    );

    // The full path keeps its previous outputs, as serve and operator do: prime them, unmeasured.
    publish(cache, merge(parts));
    const full: number[] = [];
    const fullPush: number[] = [];
    const stages = { build: [] as number[], render: [] as number[], cache: [] as number[] };
    for (let n = 0; n < o.fullChanges; n += 1) {
      const i = change();
      const whole = merge(parts); // the state change itself, before the clock starts
      const r = await measure(i, () => {
        const p = publish(cache, whole);
        stages.render.push(p.renderMs);
        stages.cache.push(p.cacheMs);
        if (p.changed.length !== 1) throw new Error(`expected one changed group, got ${String(p.changed.length)}`);
      });
      stages.build.push(timeBuild(whole));
      full.push(r.total);
      fullPush.push(r.push);
      progress(
        `many-infras: full-path change ${String(n + 1)}/${String(o.fullChanges)}: ${String(Math.round(r.total))} ms, ${String(fleet.ended.length)} streams ended so far`,
      );
    }

    const inc = summary(incremental);
    const fullS = summary(full);
    return {
      name: "xds.many_infras",
      infras: o.infras,
      streams: specs.length,
      clusters_per_infra: o.clusters,
      workers_per_cluster: o.workers,
      // Full path: whole-state build + render of every Infra + setEnvoySnapshot of every group.
      full_changes: full.length,
      p50_ms: fullS.p50,
      p99_ms: fullS.p99,
      build_ms: round(median(stages.build)),
      render_ms: round(median(stages.render)),
      cache_ms: round(median(stages.cache)),
      full_push_p50_ms: summary(fullPush).p50,
      // Per-Infra path: the changed Infra's slice only.
      incremental_changes: incremental.length,
      incremental_p50_ms: inc.p50,
      incremental_p99_ms: inc.p99,
      incremental_max_ms: inc.max,
      incremental_produce_p50_ms: summary(incrementalProduce).p50,
      incremental_build_ms: round(median(incStages.build)),
      incremental_render_ms: round(median(incStages.render)),
      incremental_cache_ms: round(median(incStages.cache)),
      // One checkConsistency of an Infra's resources; renderEnvoy and setEnvoySnapshot each run one.
      consistency_check_ms: round(consistencyMs(parts[0] as ClusterState)),
      push_p50_ms: summary(incrementalPush).p50,
      push_p99_ms: summary(incrementalPush).p99,
      unaffected_pushes: unaffectedPushes,
      unaffected_responses_received: unaffectedReceipts,
      streams_ended: fleet.ended.length,
      ...endedSummary(fleet),
    };
  } finally {
    await fleet.closeStreams().catch(() => undefined);
    await fleet.stop();
    await server.close();
  }
}
