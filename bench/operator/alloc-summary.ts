// Where a sampled phase allocated: reads a .heapprofile (OPERATOR_BENCH_ALLOC_PROF) and prints one
// JSON line per function, most bytes first — its own allocations and those of everything it called
// (inclusive), as MiB of the sampled total.
//   node dist-bench/bench/operator/alloc-summary.js FILE [ROWS]
// Format: Chrome DevTools' SamplingHeapProfile (a call tree; each node's selfSize is what was
// allocated with that stack, scaled by the sampler).
import { readFileSync } from "node:fs";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly callFrame: CallFrame;
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const [file, rowsArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("usage: alloc-summary.js FILE.heapprofile [ROWS]\n");
  process.exit(2);
}
const { head } = JSON.parse(readFileSync(file, "utf8")) as { head: ProfileNode };

const where = (f: CallFrame): string => {
  const url = f.url.replace(/^file:\/\/.*?\/(dist-bench|node_modules)\//, "$1/");
  return `${f.functionName === "" ? "(anonymous)" : f.functionName} ${url}:${String(f.lineNumber + 1)}`;
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
/** Returns the subtree's bytes; a function recursing counts once per stack in `inclusive`. */
function walk(node: ProfileNode, onStack: Set<string>): number {
  const key = where(node.callFrame);
  self.set(key, (self.get(key) ?? 0) + node.selfSize);
  total += node.selfSize;
  const fresh = !onStack.has(key);
  if (fresh) onStack.add(key);
  let sum = node.selfSize;
  for (const c of node.children) sum += walk(c, onStack);
  if (fresh) {
    onStack.delete(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
  }
  return sum;
}
walk(head, new Set());

const mib = (b: number): number => Math.round((b / 1048576) * 10) / 10;
const rows = Number(rowsArg ?? 40);
process.stdout.write(`${JSON.stringify({ total_mib: mib(total) })}\n`);
for (const [key, bytes] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, rows))
  process.stdout.write(
    `${JSON.stringify({ inclusive_mib: mib(bytes), self_mib: mib(self.get(key) ?? 0), at: key })}\n`,
  );
