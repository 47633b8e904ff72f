// One Stryker JSON report (mutation-testing-report-schema) → one JSON line: the score and every
// survivor with its place, mutator and code, for bench/README.md's list.
import { readFileSync } from "node:fs";

interface Mutant {
  readonly mutatorName: string;
  readonly replacement?: string;
  readonly status: string;
  readonly location: { readonly start: { readonly line: number; readonly column: number } };
}
interface Report {
  readonly files: Record<string, { readonly source: string; readonly mutants: readonly Mutant[] }>;
}

const [reportFile = "", target = "", seconds = "0"] = process.argv.slice(2);
const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report;
const count = new Map<string, number>();
const survivors: Record<string, string>[] = [];
for (const [file, f] of Object.entries(report.files)) {
  const lines = f.source.split("\n");
  for (const m of f.mutants) {
    count.set(m.status, (count.get(m.status) ?? 0) + 1);
    if (m.status !== "Survived" && m.status !== "NoCoverage") continue;
    const { line, column } = m.location.start;
    survivors.push({
      at: `${file}:${String(line)}:${String(column)}`,
      status: m.status,
      mutator: m.mutatorName,
      code: (lines[line - 1] ?? "").trim().slice(0, 100),
      replacement: (m.replacement ?? "").replace(/\s+/g, " ").slice(0, 80),
    });
  }
}
const n = (status: string): number => count.get(status) ?? 0;
// Stryker's "total" score: detected over every valid mutant (compile and runtime errors left out).
const detected = n("Killed") + n("Timeout");
const valid = detected + n("Survived") + n("NoCoverage");
const score = valid === 0 ? null : Math.round((10_000 * detected) / valid) / 100;
console.log(
  JSON.stringify({
    target,
    score,
    killed: n("Killed"),
    timeout: n("Timeout"),
    survived: n("Survived"),
    noCoverage: n("NoCoverage"),
    seconds: Number(seconds),
    survivors,
  }),
);
