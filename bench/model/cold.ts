// Cold rendering (issue 30, target 1): `renderAll` of a whole state with nothing to continue from —
// what `serve` and the operator do at start — at a small and a ten times larger number of Infras,
// in this process, one after the other (the smaller size first, so it also pays the JIT's warm-up).
// The CPU ratio was 9.18 with a walk of every attachment per Infra in build() and 5.59 once
// src/model/build.ts grouped them (bench/README.md); a ratio growing past 10 is work growing faster
// than the Infras.
//   npx tsc -p tsconfig.bench.json && node --max-old-space-size=12000 dist-bench/bench/model/cold.js
//   COLD_BENCH_INFRAS=300,3000 (sizes), each Infra 5 hosted clusters × 20 workers
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { renderAll } from "../../src/pipeline/outputs.js";
import { infraState, merge } from "../xds/state.js";
import { emit, progress, round } from "../xds/stats.js";

const sizes = (process.env["COLD_BENCH_INFRAS"] ?? "300,3000").split(",").map(Number);
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const figures: { infras: number; ms: number; cpu_ms: number }[] = [];
for (const infras of sizes) {
  progress(`cold: building a state of ${infras} Infras`);
  const state = merge(
    Array.from({ length: infras }, (_, i) =>
      infraState({
        index: i,
        base: ((10 << 24) >>> 0) + i * 4096,
        prefix: 20,
        clusters: 5,
        workers: 20,
        layout: "blocks",
      }),
    ),
  );
  const [t, c] = [performance.now(), cpuMs()];
  const out = renderAll(state, { now: 1 });
  figures.push({ infras, ms: round(performance.now() - t), cpu_ms: round(cpuMs() - c) });
  progress(`cold: ${infras} Infras rendered, ${out.status.length} status entries`);
}
const [small, large] = [figures[0], figures.at(-1)];
emit({
  name: "model.cold_render",
  shape: "each Infra 5 hosted clusters × 20 workers",
  sizes: figures,
  cpu_ratio_largest_to_smallest: small && large ? round(large.cpu_ms / small.cpu_ms) : null,
  infras_ratio: small && large ? round(large.infras / small.infras) : null,
  load_average: loadavg().map(round),
});
