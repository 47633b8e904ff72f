// Model benchmark (issue 16): one worker Machine moves; the model of the whole cluster is built
// again by build() (the baseline, in the same run) or by buildIncremental() from the keyed change.
// Pure, in this process, nothing external. `npm run bench:model`; prints one JSON line per size.
//   MODEL_BENCH_CHANGES  incremental changes per size (default 200); the baseline runs a tenth of them
import { build } from "../../src/model/build.js";
import { changesBetween, type ObjectChange } from "../../src/model/incremental/infras-read.js";
import { buildFrom, buildIncremental, inputsOf, type IncrementalBuild } from "../../src/model/incremental/rebuild.js";
import type { ClusterState } from "../../src/model/types.js";
import { machine, NS } from "../../test/support/fixtures.js";
import { clusterName, infraState, merge, spareAddress, workerName, type InfraShape } from "../xds/state.js";
import { emit, progress, round, seeded, summary } from "../xds/stats.js";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";

const CHANGES = Number(process.env["MODEL_BENCH_CHANGES"] ?? "200");

function shapes(infras: number, clusters: number, workers: number): InfraShape[] {
  return Array.from({ length: infras }, (_, i) => ({
    index: i,
    base: ((10 << 24) >>> 0) + i * (infras === 1 ? 65536 : 2048),
    prefix: infras === 1 ? 16 : 21,
    clusters,
    workers,
    layout: "interleaved" as const,
  }));
}

/** The keyed change moving one seeded-random worker to a spare address, and the state after it. */
function move(
  s: ClusterState,
  shape: InfraShape,
  k: number,
  pick: (n: number) => number,
): [ObjectChange, ClusterState] {
  const c = pick(shape.clusters);
  const w = pick(shape.workers);
  const cp = `${NS}-${clusterName(shape.index, c)}`;
  const name = workerName(shape.index, c, w);
  const before = [...s.machines].find((m) => m.metadata.namespace === cp && m.metadata.name === name);
  const after = machine(cp, name, `${clusterName(shape.index, c)}-workers`, [spareAddress(shape, k)]);
  const machines = [...s.machines].map((m) => (m === before ? after : m));
  return [
    { kind: "Machine", before, after },
    { ...s, machines },
  ];
}

function run(label: string, infras: number, clusters: number, workers: number): void {
  const all = shapes(infras, clusters, workers);
  let state = merge(all.map(infraState));
  const pick = seeded(16);
  const t0 = performance.now();
  let inc: IncrementalBuild = buildFrom(state);
  const firstMs = performance.now() - t0;

  const incMs: number[] = [];
  const rebuilt: number[] = [];
  for (let k = 0; k < CHANGES; k += 1) {
    const shape = all[pick(all.length)] ?? all[0];
    if (shape === undefined) break;
    const [change, next] = move(state, shape, k, pick);
    const start = performance.now();
    inc = buildIncremental(inc, [change], inputsOf(next));
    incMs.push(performance.now() - start);
    rebuilt.push(inc.rebuilt.size);
    state = next;
  }
  // The same kind of change through the whole build, and the identity diff that turns whole
  // states into keyed changes (what a watcher that emits states would still cost).
  const fullMs: number[] = [];
  const diffMs: number[] = [];
  for (let k = 0; k < Math.max(3, Math.round(CHANGES / 10)); k += 1) {
    const shape = all[pick(all.length)] ?? all[0];
    if (shape === undefined) break;
    const [, next] = move(state, shape, CHANGES + k, pick);
    let start = performance.now();
    const full = build(next);
    fullMs.push(performance.now() - start);
    start = performance.now();
    const changes = changesBetween(state, next);
    diffMs.push(performance.now() - start);
    inc = buildIncremental(inc, changes, inputsOf(next));
    if (k === 0 && JSON.stringify(inc.result.topologies) !== JSON.stringify(full.topologies))
      throw new Error(`${label}: incremental and full builds differ`);
    state = next;
  }
  const i = summary(incMs);
  const f = summary(fullMs);
  emit({
    name: `model.${label}`,
    infras,
    clusters_per_infra: clusters,
    workers_per_cluster: workers,
    machines: state.machines.length,
    changes: incMs.length,
    incremental_p50_ms: i.p50,
    incremental_p99_ms: i.p99,
    incremental_max_ms: i.max,
    infras_rebuilt_max: Math.max(...rebuilt),
    baseline_full_build_p50_ms: f.p50,
    baseline_full_build_p99_ms: f.p99,
    baseline_runs: fullMs.length,
    ratio_p50: round(i.p50 / f.p50),
    state_diff_p50_ms: summary(diffMs).p50,
    first_build_ms: round(firstMs),
    loadavg_1m: round(loadavg()[0] ?? 0),
  });
  progress(`${label} done`);
}

run("one_infra", 1, 5, 100);
run("many_infras", 300, 5, 100);
run("big_vlan", 1, 500, 100);
