// The one reason named under verify's table: most answers of a DNS view, or most routes, differing
// from the model point at another manifests folder; scattered failures name nothing.
import { describe, expect, it } from "vitest";
import type { CheckResult } from "../../src/verify/judge.js";
import { rootCause } from "../../src/verify/run.js";

const row = (check: string, verdict: "PASS" | "FAIL" | "SKIP", failure?: string): CheckResult =>
  ({ check, object: "clusters/x", verdict, detail: "", ...(failure === undefined ? {} : { failure }) }) as CheckResult;
const dns = (view: string, n: number, verdict: "PASS" | "FAIL", failure = "dns-wrong-answer"): CheckResult[] =>
  Array.from({ length: n }, (_, i) =>
    row(`dns ${view} n${String(i)}.example.com (from 10.0.0.1)`, verdict, verdict === "FAIL" ? failure : undefined),
  );
const routes = (n: number, verdict: "PASS" | "FAIL", failure = "route-no-chain"): CheckResult[] =>
  Array.from({ length: n }, (_, i) =>
    row(`route n${String(i)}:443 (from 10.0.0.2)`, verdict, verdict === "FAIL" ? failure : undefined),
  );

const rows: readonly { name: string; results: CheckResult[]; want: RegExp | undefined }[] = [
  { name: "all passed", results: [...dns("vlan", 5, "PASS"), ...routes(4, "PASS")], want: undefined },
  {
    name: "the VLAN view wrong, the pod view right",
    results: [...dns("vlan", 14, "FAIL"), ...dns("vlan", 1, "PASS"), ...dns("default", 15, "PASS")],
    want: /^the DNS answers differ/,
  },
  { name: "every route wrong", results: [...dns("vlan", 5, "PASS"), ...routes(6, "FAIL")], want: /^the routes differ/ },
  {
    name: "both",
    results: [...dns("default", 4, "FAIL", "dns-leak"), ...routes(3, "FAIL", "route-no-listener")],
    want: /^the DNS answers and the routes differ/,
  },
  {
    name: "one wrong answer among many",
    results: [...dns("vlan", 1, "FAIL"), ...dns("vlan", 9, "PASS")],
    want: undefined,
  },
  { name: "a single check is no pattern", results: [...dns("vlan", 1, "FAIL")], want: undefined },
  {
    name: "unreachable is said by its own row",
    results: [...dns("vlan", 5, "FAIL", "dns-unreachable")],
    want: undefined,
  },
  {
    name: "skips do not count",
    results: [...routes(2, "FAIL"), row("route skipped:443", "SKIP")],
    want: /^the routes differ/,
  },
];

describe("rootCause", () => {
  it.each(rows)("$name", ({ results, want }) => {
    const cause = rootCause(results);
    if (want === undefined) expect(cause).toBeUndefined();
    else expect(cause).toMatch(want);
  });
});
