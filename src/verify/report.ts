// Check results → the PASS/FAIL table a person reads (each failure followed by its cause and fix),
// or JSON for scripts. Pure.
import type { CheckResult } from "./judge.js";

/** Exit status of `oooi verify`: 1 when any check failed. */
export function verifyExitCode(results: readonly CheckResult[]): number {
  return results.some((r) => r.verdict === "FAIL") ? 1 : 0;
}

/** The results as one document for `-o json|yaml`. */
export function verifyDocument(results: readonly CheckResult[]): { ok: boolean; results: readonly CheckResult[] } {
  return { ok: verifyExitCode(results) === 0, results };
}

/** Aligned columns; `color` highlights the verdicts with ANSI colours. */
export function formatVerifyTable(results: readonly CheckResult[], color: boolean): string {
  const paint = (verdict: string): string => {
    if (!color) return verdict;
    const code = verdict === "PASS" ? 32 : verdict === "FAIL" ? 31 : 33;
    return `\u001b[${String(code)}m${verdict}\u001b[0m`;
  };
  const checkWidth = Math.max(5, ...results.map((r) => r.check.length));
  const objectWidth = Math.max(6, ...results.map((r) => r.object.length));
  const lines = [`${"VERDICT".padEnd(8)}${"CHECK".padEnd(checkWidth + 2)}${"OBJECT".padEnd(objectWidth + 2)}DETAIL`];
  for (const r of results) {
    lines.push(
      `${paint(r.verdict)}${" ".repeat(8 - r.verdict.length)}${r.check.padEnd(checkWidth + 2)}${r.object.padEnd(objectWidth + 2)}${r.detail}`,
    );
    if (r.verdict === "FAIL") {
      lines.push(`        cause: ${r.cause ?? ""}`);
      lines.push(`        fix:   ${r.fix ?? ""}`);
    }
  }
  const count = (v: string): number => results.filter((r) => r.verdict === v).length;
  lines.push("");
  lines.push(`${String(count("PASS"))} passed, ${String(count("FAIL"))} failed, ${String(count("SKIP"))} skipped`);
  return lines.join("\n") + "\n";
}
