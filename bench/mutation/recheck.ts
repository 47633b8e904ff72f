// The survivors of an older Stryker report against today's tests, without a whole run: each
// Survived or NoCoverage mutant is applied to today's source (found by the text of its line in the
// report's source, so lines that moved still match), the given test files run with bail, and the
// source is restored. One JSON line per mutant: killed, survived, or gone (its line is no longer
// there, or no longer once). Run from the repository root after `npx tsc -p tsconfig.bench.json`:
//   node dist-bench/bench/mutation/recheck.js REPORT.json src/envoy/render/json-text.ts=test/envoy/render-json-text.test.ts …
// Each FILE=TESTS argument names a mutated file and the comma-separated test files to run for it.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

interface Position {
  readonly line: number;
  readonly column: number;
}
interface Mutant {
  readonly mutatorName: string;
  readonly replacement?: string;
  readonly status: string;
  readonly location: { readonly start: Position; readonly end: Position };
}
interface Report {
  readonly files: Record<string, { readonly source: string; readonly mutants: readonly Mutant[] }>;
}

const [reportFile = "", ...pairs] = process.argv.slice(2);
const testsOf = new Map(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1).split(",")]));
const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;

for (const [file, f] of Object.entries(report.files)) {
  const tests = testsOf.get(file);
  if (tests === undefined) continue;
  const then = f.source.split("\n");
  for (const m of f.mutants) {
    if (m.status !== "Survived" && m.status !== "NoCoverage") continue;
    const { start, end } = m.location;
    const was = { at: `${file}:${String(start.line)}:${String(start.column)}`, mutator: m.mutatorName };
    const today = readFileSync(file, "utf8");
    const lines = today.split("\n");
    const matches = lines.flatMap((l, i) => (l === then[start.line - 1] ? [i] : []));
    const first = matches[0];
    if (matches.length !== 1 || first === undefined) {
      console.log(JSON.stringify({ ...was, result: "gone" }));
      continue;
    }
    const span = end.line - start.line + 1;
    const text = lines.slice(first, first + span).join("\n");
    // Columns are 1-based; `end` is exclusive. Offsets into the span's joined text:
    const from = start.column - 1;
    const to = lines.slice(first, first + span - 1).reduce((n, l) => n + l.length + 1, 0) + end.column - 1;
    const mutated = text.slice(0, from) + (m.replacement ?? "") + text.slice(to);
    writeFileSync(file, [...lines.slice(0, first), mutated, ...lines.slice(first + span)].join("\n"));
    try {
      const run = spawnSync("npx", ["vitest", "run", "--bail", "1", ...tests], { encoding: "utf8" });
      const result = run.status === 0 ? "survived" : "killed";
      console.log(JSON.stringify({ ...was, line: first + 1, result, replacement: m.replacement ?? "" }));
    } finally {
      writeFileSync(file, today);
    }
  }
}
