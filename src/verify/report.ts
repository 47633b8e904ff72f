// Check results → the PASS/FAIL table a person reads (each failure followed by its cause and fix),
// or JSON for scripts. Pure.
import type { CheckResult } from "./judge.js";

/** Exit status of `oooi verify`: 1 when any check failed. */
export function verifyExitCode(results: readonly CheckResult[]): number {
  return results.some((r) => r.verdict === "FAIL") ? 1 : 0;
}

/** The results as one document for `-o json|yaml`. */
export function verifyDocument(
  results: readonly CheckResult[],
  rootCause?: string,
): { ok: boolean; rootCause?: string; results: readonly CheckResult[] } {
  return { ok: verifyExitCode(results) === 0, ...(rootCause === undefined ? {} : { rootCause }), results };
}

/** Column widths of the table, from every row it will hold (known before the first is judged). */
export interface TableLayout {
  readonly check: number;
  readonly object: number;
}

export function tableLayout(rows: readonly { readonly check: string; readonly object: string }[]): TableLayout {
  return {
    check: Math.max(5, ...rows.map((r) => r.check.length)),
    object: Math.max(6, ...rows.map((r) => r.object.length)),
  };
}

export function formatVerifyHeader(layout: TableLayout): string {
  return `${"VERDICT".padEnd(8)}${"CHECK".padEnd(layout.check + 2)}${"OBJECT".padEnd(layout.object + 2)}DETAIL\n`;
}

/** One result's row, and on failure its cause and fix; `color` highlights the verdict with ANSI colours. */
export function formatVerifyRow(r: CheckResult, layout: TableLayout, color: boolean): string {
  const code = r.verdict === "PASS" ? 32 : r.verdict === "FAIL" ? 31 : 33;
  const verdict = color ? `\u001b[${String(code)}m${r.verdict}\u001b[0m` : r.verdict;
  const lines = [
    `${verdict}${" ".repeat(8 - r.verdict.length)}${r.check.padEnd(layout.check + 2)}${r.object.padEnd(layout.object + 2)}${r.detail}`,
  ];
  if (r.verdict === "FAIL") lines.push(`        cause: ${r.cause ?? ""}`, `        fix:   ${r.fix ?? ""}`);
  return lines.join("\n") + "\n";
}

/** The counts, and the one reason behind the failures when there is one. */
export function formatVerifySummary(results: readonly CheckResult[], rootCause?: string): string {
  const count = (v: string): number => results.filter((r) => r.verdict === v).length;
  const counts = `${String(count("PASS"))} passed, ${String(count("FAIL"))} failed, ${String(count("SKIP"))} skipped`;
  return `\n${counts}\n${rootCause === undefined ? "" : `likely cause: ${rootCause}\n`}`;
}

/** The whole table at once. */
export function formatVerifyTable(results: readonly CheckResult[], color: boolean, rootCause?: string): string {
  const layout = tableLayout(results);
  return (
    formatVerifyHeader(layout) +
    results.map((r) => formatVerifyRow(r, layout, color)).join("") +
    formatVerifySummary(results, rootCause)
  );
}
