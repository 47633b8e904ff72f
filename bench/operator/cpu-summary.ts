// Where a profiled phase spent its CPU: reads a .cpuprofile (OPERATOR_BENCH_STREAM_CPU_PROF, or
// `--cpu-prof`'s) and prints one JSON line per function, most time first — inclusive (it and what
// it called) and self, in ms, with the profile's wall time and idle time.
//   node dist-bench/bench/operator/cpu-summary.js FILE [ROWS]
// Format: Chrome DevTools' Profile (nodes with callFrame and children ids; samples and timeDeltas).
import { readFileSync } from "node:fs";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const [file, rowsArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("usage: cpu-summary.js FILE.cpuprofile [ROWS]\n");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const where = (f: CallFrame): string => {
  const url = f.url.replace(/^file:\/\/.*?\/(dist-bench|node_modules)\//, "$1/");
  return `${f.functionName === "" ? "(anonymous)" : f.functionName} ${url}:${String(f.lineNumber + 1)}`;
};

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Each sample's time is the delta to the next one (the last sample's is unknown: dropped).
const selfUs = new Map<number, number>();
for (let i = 0; i + 1 < profile.samples.length; i += 1) {
  const id = profile.samples[i] as number;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (node === undefined) continue;
  const key = where(node.callFrame);
  self.set(key, (self.get(key) ?? 0) + us);
  // Every distinct function on the stack gets the sample once (recursion counts once).
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const n = byId.get(at);
    if (n === undefined) break;
    const k = where(n.callFrame);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}

const ms = (us: number): number => Math.round(us / 100) / 10;
const idle = [...self].filter(([k]) => k.startsWith("(idle)")).reduce((s, [, us]) => s + us, 0);
process.stdout.write(
  `${JSON.stringify({ wall_ms: ms(profile.endTime - profile.startTime), idle_ms: ms(idle), gc_ms: ms([...self].filter(([k]) => k.startsWith("(garbage collector)")).reduce((s, [, us]) => s + us, 0)) })}\n`,
);
const rows = Number(rowsArg ?? 40);
for (const [key, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, rows))
  process.stdout.write(`${JSON.stringify({ inclusive_ms: ms(us), self_ms: ms(self.get(key) ?? 0), at: key })}\n`);
