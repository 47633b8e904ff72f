// Scenario 3, fan-out: 1,000 SotW ADS streams of one node group whose snapshot is about 100 KB.
// A worker change is rendered beforehand; the clock runs from setEnvoySnapshot until the last
// stream received the new listener. Baseline, same run, same client processes: a bare grpc-js
// server writing the very DiscoveryResponse bytes our server sends to 1,000 streams of its own,
// from the first write until the last stream received them. Rounds alternate ours / bare.
// Idle memory: the server process's RSS (after a GC) with 1,000 idle synced streams minus before.
// XDS_BENCH_HEAP_SNAPSHOT=DIR also writes V8 heap snapshots there at the three idle points (before
// any stream, with our idle streams, with the bare server's too), for `node bench/xds/heap-diff.mjs`.
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { build } from "../../src/model/build.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { serializeResponse, sotwResponse } from "../../src/xds/server/codec.js";
import { startXdsServer } from "../../src/xds/server/index.js";
import type { ClusterState } from "../../src/model/types.js";
import { NS } from "../../test/support/fixtures.js";
import { startBareServer } from "./bare.js";
import { endedSummary, Fleet } from "./fleet.js";
import { nowMs, TYPE_CODES, type StreamSpec } from "./protocol.js";
import { allSynced, consistencyMs, listenerVersion, poll, ServerLog } from "./publish.js";
import { clusterName, groupOf, infraState, moveMachine, spareAddress, workerName, type InfraShape } from "./state.js";
import { median, progress, round, seeded, summary } from "./stats.js";
import { checkEnvoySnapshot, envoyInput } from "../../src/envoy/snapshot.js";

/** Sizes and repetitions of scenario 3. */
export interface FanoutOptions {
  readonly streams: number;
  readonly clusters: number;
  readonly workers: number;
  readonly rounds: number;
  readonly processes: number;
}

/** Stream id of the warm-up stream, outside the measured ids. */
const WARMUP = 1_000_000;

function render(state: ClusterState): EnvoyResources {
  const proxy = build(state).topologies[0]?.proxy;
  if (proxy === undefined) throw new Error("no proxy");
  const r = renderEnvoy(proxy);
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("; "));
  return r.resources;
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Writes a heap snapshot named `name` when XDS_BENCH_HEAP_SNAPSHOT names a folder. */
function heapSnapshot(name: string): void {
  const dir = process.env["XDS_BENCH_HEAP_SNAPSHOT"];
  if (dir === undefined || dir === "") return;
  progress(`fanout: heap snapshot ${writeHeapSnapshot(join(dir, `${name}.heapsnapshot`))}`);
}

/** The group's current LDS DiscoveryResponse, serialized as our server serializes it. */
function listenerResponse(cache: SnapshotCache, group: string, nonce: string): Buffer {
  const typeSnap = cache.getSnapshot(group)?.types.get(LISTENER_TYPE_URL);
  const entries = [...(typeSnap?.resources.values() ?? [])].flatMap((r) => r.sotwEntry);
  return serializeResponse(sotwResponse(typeSnap?.version ?? "", LISTENER_TYPE_URL, nonce, entries));
}

async function settle(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Runs scenario 3 and returns its result object. */
export async function fanout(o: FanoutOptions): Promise<Record<string, unknown>> {
  const shape: InfraShape = {
    index: 0,
    base: ((10 << 24) | (100 << 16)) >>> 0,
    prefix: 20,
    clusters: o.clusters,
    workers: o.workers,
    layout: "interleaved",
  };
  let state = infraState(shape);
  const group = groupOf(0);
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  const server = await startXdsServer({ cache, maxStreamAgeMs: 0 });
  const bare = await startBareServer();
  const fleet = Fleet.start(o.processes);
  try {
    const set = (res: EnvoyResources): void => {
      const r = cache.setSnapshot(group, envoyInput(res));
      if (!r.ok) throw new Error(r.errors.join("; "));
    };
    set(render(state));
    const snapshotBytes = [...(cache.getSnapshot(group)?.types.values() ?? [])].reduce((n, t) => n + t.bytes, 0);

    // Idle memory: server process before and after 1,000 synced streams.
    // Warm up the server's stream path (code, pools), then let memory settle.
    fleet.open([
      { id: WARMUP, address: `127.0.0.1:${String(server.port)}`, kind: "sotw", node: `${group}/warmup`, group },
    ]);
    await fleet.until(() => fleet.latest(WARMUP, TYPE_CODES.listener) !== undefined, 30_000, "the warm-up stream");
    await fleet.closeStreams();
    await settle(500);
    collect();
    await settle(200);
    collect();
    const before = process.memoryUsage();
    heapSnapshot("before");
    const ours: StreamSpec[] = Array.from({ length: o.streams }, (_, id) => ({
      id,
      address: `127.0.0.1:${String(server.port)}`,
      kind: "sotw" as const,
      node: `${group}/envoy-${String(id)}`,
      group,
    }));
    const holds = (specs: readonly StreamSpec[], version: string): boolean =>
      specs.every((s) => fleet.latest(s.id, TYPE_CODES.listener)?.version === version);
    for (let k = 0; k < ours.length; k += 200) {
      const batch = ours.slice(k, k + 200);
      fleet.open(batch);
      await fleet.until(() => holds(batch, listenerVersion(cache, group)), 120_000, "listeners on new streams");
    }
    await poll(() => allSynced(server.status, ours.length), 120_000, "every stream to ACK");
    await settle(2000);
    collect();
    await settle(200);
    collect();
    const idle = process.memoryUsage();
    progress(`fanout: ${String(ours.length)} streams synced and idle`);
    heapSnapshot("ours-idle");

    const bareSpecs: StreamSpec[] = Array.from({ length: o.streams }, (_, k) => ({
      id: o.streams + k,
      address: `127.0.0.1:${String(bare.port)}`,
      kind: "bare" as const,
      node: `bare-${String(k)}`,
      group: "bare",
    }));
    // The same idle measurement for the baseline: its streams get the current listener response
    // once (ours got CDS, EDS and LDS), then idle.
    const bareBefore = process.memoryUsage();
    fleet.open(bareSpecs);
    await poll(() => bare.streamCount() === o.streams, 120_000, "bare streams");
    bare.broadcast(listenerResponse(cache, group, "bare-idle"));
    await fleet.until(() => holds(bareSpecs, listenerVersion(cache, group)), 120_000, "the first bare broadcast");
    await settle(2000);
    collect();
    await settle(200);
    collect();
    const bareIdle = process.memoryUsage();
    heapSnapshot("bare-idle");
    // Made only now: it keeps every push record, which is the bench's memory, not the server's.
    const log = new ServerLog(server.status);

    const pick = seeded(3);
    const oursMs: number[] = [];
    const bareMs: number[] = [];
    const setMs: number[] = [];
    const pushMs: number[] = [];
    let pushBytes = 0;
    for (let n = 0; n < o.rounds; n += 1) {
      const c = pick(o.clusters);
      const w = pick(o.workers);
      const hc = clusterName(0, c);
      state = moveMachine(state, `${NS}-${hc}`, workerName(0, c, w), `${hc}-workers`, spareAddress(shape, n + 1));
      const next = render(state);

      const t0 = nowMs();
      set(next);
      const t1 = nowMs();
      const version = listenerVersion(cache, group);
      await fleet.until(() => holds(ours, version), 120_000, "the new listener on every stream");
      const last = Math.max(...ours.map((s) => fleet.latest(s.id, TYPE_CODES.listener)?.at ?? Number.NaN));
      oursMs.push(last - t0);
      setMs.push(t1 - t0);
      pushMs.push(last - t1);
      await log.untilAcked(group, LISTENER_TYPE_URL, version, ours.length, 120_000);

      // The same response bytes as ours (same version, type, resources), written by the bare server.
      const bytes = listenerResponse(cache, group, `bare-${String(n)}`);
      pushBytes = bytes.length;
      const b0 = nowMs();
      bare.broadcast(bytes);
      await fleet.until(() => holds(bareSpecs, version), 120_000, "the bare broadcast on every stream");
      bareMs.push(Math.max(...bareSpecs.map((s) => fleet.latest(s.id, TYPE_CODES.listener)?.at ?? Number.NaN)) - b0);
      await settle(50); // the bare clients' answers, so they are not read during the next round
    }
    const o50 = median(oursMs);
    const b50 = median(bareMs);
    return {
      name: "xds.fanout",
      streams: o.streams,
      snapshot_bytes: snapshotBytes,
      bytes_per_push: pushBytes,
      rounds: oursMs.length,
      p50_ms: round(o50),
      p99_ms: summary(oursMs).p99,
      baseline_p50_ms: round(b50),
      baseline_p99_ms: summary(bareMs).p99,
      ratio_vs_baseline: round(o50 / b50),
      set_snapshot_p50_ms: round(median(setMs)),
      // Without setEnvoySnapshot's encoding and checks: the server's part alone.
      push_only_ratio: round(median(pushMs) / b50),
      rss_per_stream_kb: round((idle.rss - before.rss) / o.streams / 1024),
      heap_per_stream_kb: round((idle.heapUsed - before.heapUsed) / o.streams / 1024),
      baseline_rss_per_stream_kb: round((bareIdle.rss - bareBefore.rss) / o.streams / 1024),
      baseline_heap_per_stream_kb: round((bareIdle.heapUsed - bareBefore.heapUsed) / o.streams / 1024),
      external_per_stream_kb: round((idle.external - before.external) / o.streams / 1024),
      gc_exposed: typeof (globalThis as { gc?: unknown }).gc === "function",
      consistency_check_ms: round(consistencyMs(state)),
      streams_ended: fleet.ended.length,
      ...endedSummary(fleet),
    };
  } finally {
    await fleet.closeStreams().catch(() => undefined);
    await fleet.stop();
    await bare.close();
    await server.close();
  }
}
