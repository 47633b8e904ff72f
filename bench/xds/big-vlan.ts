// Scenario 2, one big shared VLAN: one Infra on a /16 with 500 hosted clusters × 100 workers
// (50,000 worker source addresses; XDS_BENCH_BIG_CLUSTERS=640 gives 64,000, the most a /16 holds), 3 SotW and 3 Delta ADS streams of the same node group. One
// worker changes address: time from the state change through the full model build, render and
// snapshot until every stream holds the new listener; bytes each stream received for it; what else
// the streams were sent (Delta must resend no unchanged cluster).
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { startXdsServer } from "../../src/xds/server/index.js";
import { NS } from "../../test/support/fixtures.js";
import { endedSummary, Fleet } from "./fleet.js";
import { startProfile, stopProfile } from "./profile.js";
import { nowMs, TYPE_CODES, type StreamKind, type StreamSpec } from "./protocol.js";
import { allSynced, consistencyMs, listenerVersion, poll, publish, ServerLog, timeBuild } from "./publish.js";
import { clusterName, groupOf, infraState, moveMachine, spareAddress, workerName, type InfraShape } from "./state.js";
import { median, progress, round, seeded, summary } from "./stats.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

/** Sizes and repetitions of scenario 2. */
export interface BigVlanOptions {
  readonly clusters: number;
  readonly workers: number;
  readonly replicas: number;
  readonly changes: number;
  readonly layout: InfraShape["layout"];
  /** Also time renderAll (DNS, DHCP and status too) once. */
  readonly renderAll: boolean;
  /** Write a CPU profile of the change loop (not the loading) to this file (.cpuprofile). */
  readonly cpuProfile?: string | undefined;
}

interface PerProtocol {
  latency: number[];
  bytes: number[];
  listenerResources: number[];
  /** Responses of any other type received after a change. */
  otherResponses: number;
}

/**
 * Whether the workers fit one /16 — the largest VLAN the model accepts (one broadcast domain) —
 * beside the DHCP pool and the moves' spare addresses: 64,000 workers interleaved at most; the
 * blocks layout pads each cluster to a power of two (128 for 100 workers), so 500 clusters at most.
 */
export function fitsOneVlan(clusters: number, workers: number, layout: InfraShape["layout"]): boolean {
  const perCluster = layout === "interleaved" ? workers : 2 ** Math.ceil(Math.log2(workers));
  return clusters * perCluster + 1_024 <= 2 ** 16;
}

/** Runs scenario 2 with one address layout and returns its result object. */
export async function bigVlan(o: BigVlanOptions): Promise<Record<string, unknown>> {
  if (!fitsOneVlan(o.clusters, o.workers, o.layout))
    throw new Error(`${String(o.clusters)} × ${String(o.workers)} workers (${o.layout}) do not fit one /16 VLAN`);
  const shape: InfraShape = {
    index: 0,
    base: ((10 << 24) | (200 << 16)) >>> 0,
    prefix: 16,
    clusters: o.clusters,
    workers: o.workers,
    layout: o.layout,
  };
  let state = infraState(shape);
  const group = groupOf(0);
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  const server = await startXdsServer({ cache, maxStreamAgeMs: 0 });
  const log = new ServerLog(server.status);
  const address = `127.0.0.1:${String(server.port)}`;
  const fleet = Fleet.start(2);
  try {
    const first = publish(cache, state);
    const firstBuildMs = timeBuild(state);
    const snapshotBytes = [...(cache.getSnapshot(group)?.types.values() ?? [])].reduce((n, t) => n + t.bytes, 0);
    progress(
      `big-vlan (${o.layout}): ${String(o.clusters * o.workers)} workers published, ${String(Math.round(snapshotBytes / 1024))} KiB per node`,
    );
    const kinds: StreamKind[] = [
      ...Array<StreamKind>(o.replicas).fill("sotw"),
      ...Array<StreamKind>(o.replicas).fill("delta"),
    ];
    const specs: StreamSpec[] = kinds.map((kind, id) => ({
      id,
      address,
      kind,
      node: `${group}/envoy-${kind}-${String(id)}`,
      group,
    }));
    const holds = (version: string): boolean =>
      specs.every((s) => fleet.latest(s.id, TYPE_CODES.listener)?.version === version);
    fleet.open(specs);
    await fleet.until(() => holds(listenerVersion(cache, group)), 120_000, "the first listener on every stream");
    await poll(() => allSynced(server.status, specs.length), 120_000, "every stream to ACK");
    progress(`big-vlan (${o.layout}): ${String(specs.length)} streams synced`);

    const by: Record<"sotw" | "delta", PerProtocol> = {
      sotw: { latency: [], bytes: [], listenerResources: [], otherResponses: 0 },
      delta: { latency: [], bytes: [], listenerResources: [], otherResponses: 0 },
    };
    const all: number[] = [];
    const push: number[] = [];
    const stages = { build: [] as number[], render: [] as number[], cache: [] as number[] };
    // Where the push goes: snapshot set → the server's write to each stream (the session's
    // response assembly and grpc-js's serialization happen inside it), and that write → the
    // client's receipt (framing, the socket, the client's reassembly and decoding).
    const pushSplit = { firstWrite: [] as number[], lastWrite: [] as number[], wire: [] as number[] };
    // The server's clock (Date.now) on nowMs's scale.
    const clockOffset = Date.now() - nowMs();
    const profiler = o.cpuProfile === undefined ? undefined : await startProfile();
    const pick = seeded(2);
    for (let n = 0; n < o.changes; n += 1) {
      const c = pick(o.clusters);
      const w = pick(o.workers);
      const hc = clusterName(0, c);
      const [cp, name] = [`${NS}-${hc}`, workerName(0, c, w)];
      const before = [...state.machines].find((m) => m.metadata.namespace === cp && m.metadata.name === name);
      state = moveMachine(state, cp, name, `${hc}-workers`, spareAddress(shape, n + 1));
      const after = [...state.machines].find((m) => m.metadata.namespace === cp && m.metadata.name === name);
      // The keyed change, as the watchers hand it to serve and the operator.
      const changes: ObjectChange[] = [{ kind: "Machine", before, after }];
      const stop = fleet.onReceipt((r) => {
        if (r[1] !== TYPE_CODES.listener) by[specs[r[0]]?.kind === "delta" ? "delta" : "sotw"].otherResponses += 1;
      });
      const t0 = nowMs();
      const p = publish(cache, state, changes);
      const version = listenerVersion(cache, group);
      await fleet.until(() => holds(version), 120_000, "the new listener");
      await log.untilAcked(group, LISTENER_TYPE_URL, version, specs.length, 120_000);
      stop();
      stages.build.push(timeBuild(state));
      stages.render.push(p.renderMs);
      stages.cache.push(p.cacheMs);
      let last = 0;
      for (const s of specs) {
        const l = fleet.latest(s.id, TYPE_CODES.listener);
        if (l === undefined) continue;
        const k = s.kind === "delta" ? "delta" : "sotw";
        by[k].bytes.push(l.bytes);
        by[k].listenerResources.push(l.count);
        last = Math.max(last, l.at);
      }
      for (const k of ["sotw", "delta"] as const) {
        by[k].latency.push(
          Math.max(
            ...specs.filter((s) => s.kind === k).map((s) => fleet.latest(s.id, TYPE_CODES.listener)?.at ?? Number.NaN),
          ) - t0,
        );
      }
      all.push(last - t0);
      push.push(last - p.doneAt);
      const writes = log.pushes.filter((r) => r.typeUrl === LISTENER_TYPE_URL && r.version === version);
      const writeAt = writes.map((r) => r.sentAt - clockOffset);
      pushSplit.firstWrite.push(Math.min(...writeAt) - p.doneAt);
      pushSplit.lastWrite.push(Math.max(...writeAt) - p.doneAt);
      for (const s of specs) {
        const w = writes.find((r) => r.nodeId === s.node);
        const l = fleet.latest(s.id, TYPE_CODES.listener);
        if (w !== undefined && l !== undefined) pushSplit.wire.push(l.at - (w.sentAt - clockOffset));
      }
      progress(
        `big-vlan (${o.layout}): change ${String(n + 1)}/${String(o.changes)}: ${String(Math.round(last - t0))} ms`,
      );
    }

    if (profiler !== undefined && o.cpuProfile !== undefined) await stopProfile(profiler, o.cpuProfile);
    let renderAllMs: number | undefined;
    if (o.renderAll) {
      const t = nowMs();
      renderAll(state);
      renderAllMs = round(nowMs() - t);
    }
    const total = summary(all);
    return {
      name: "xds.big_vlan",
      layout: o.layout,
      hosted_clusters: o.clusters,
      workers: o.clusters * o.workers,
      streams: { sotw: o.replicas, delta: o.replicas },
      snapshot_bytes: snapshotBytes,
      changes: all.length,
      p50_ms: total.p50,
      p99_ms: total.p99,
      sotw_p99_ms: summary(by.sotw.latency).p99,
      delta_p99_ms: summary(by.delta.latency).p99,
      // Full rebuild of the Infra: model build + renderEnvoy (setEnvoySnapshot's encoding separate).
      render_ms: round(median(stages.build.map((b, i) => b + (stages.render[i] ?? 0)))),
      build_ms: round(median(stages.build)),
      render_envoy_ms: round(median(stages.render)),
      cache_ms: round(median(stages.cache)),
      first_render_ms: round(firstBuildMs + first.renderMs),
      ...(renderAllMs === undefined ? {} : { render_all_ms: renderAllMs }),
      push_p50_ms: summary(push).p50,
      push_p99_ms: summary(push).p99,
      // Snapshot set → first / last server write of the new listener; write → receipt per stream.
      push_first_write_p50_ms: summary(pushSplit.firstWrite).p50,
      push_last_write_p50_ms: summary(pushSplit.lastWrite).p50,
      push_last_write_p99_ms: summary(pushSplit.lastWrite).p99,
      push_wire_p50_ms: summary(pushSplit.wire).p50,
      push_wire_p99_ms: summary(pushSplit.wire).p99,
      bytes_per_push: { sotw: Math.round(median(by.sotw.bytes)), delta: Math.round(median(by.delta.bytes)) },
      listener_resources_per_push: {
        sotw: median(by.sotw.listenerResources),
        delta: median(by.delta.listenerResources),
      },
      other_responses_after_changes: { sotw: by.sotw.otherResponses, delta: by.delta.otherResponses },
      // One checkConsistency of the Infra's resources; renderEnvoy and setEnvoySnapshot each run one.
      consistency_check_ms: round(consistencyMs(state, 3)),
      streams_ended: fleet.ended.length,
      ...endedSummary(fleet),
    };
  } finally {
    await fleet.closeStreams().catch(() => undefined);
    await fleet.stop();
    await server.close();
  }
}
