// CLI start-up benchmark (issue 27, finding 9): wall time of `oooi --help` and `oooi --version`
// through the built CLI, beside `node -e 0` run alternately in the same loop as the baseline.
// `npm run build && npm run bench:cli`; one JSON line per command.
//   CLI_BENCH_ROUNDS  runs of each command (default 20)
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { emit, round, summary } from "../xds/stats.js";

const ROUNDS = Number(process.env["CLI_BENCH_ROUNDS"] ?? "20");
const MAIN = join(process.cwd(), "dist", "cli", "main.js");
const COMMANDS: Record<string, readonly string[]> = {
  "node -e 0": ["-e", "0"],
  "oooi --help": [MAIN, "--help"],
  "oooi --version": [MAIN, "--version"],
  "oooi operator --help": [MAIN, "operator", "--help"],
};

const times = new Map<string, number[]>(Object.keys(COMMANDS).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, args] of Object.entries(COMMANDS)) {
    const start = performance.now();
    const r = spawnSync(process.execPath, args, { stdio: "ignore" });
    if (r.status !== 0) throw new Error(`${name} exited ${String(r.status)}`);
    times.get(name)?.push(performance.now() - start);
  }
}
const baseline = summary(times.get("node -e 0") ?? []).p50;
for (const [name, ms] of times) {
  const s = summary(ms);
  emit({ command: name, rounds: ROUNDS, ...s, ratioToNode: round(s.p50 / baseline), load1: round(loadavg()[0] ?? 0) });
}
