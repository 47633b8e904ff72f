// LabelSelector checks as Kubernetes' apimachinery validation states them (ValidateLabelSelector,
// ValidateLabelName, IsValidLabelValue): a key is [prefix/]name with the prefix a DNS subdomain of
// at most 253 characters and the name at most 63 characters of letters, digits, '-', '_' and '.',
// starting and ending with a letter or digit; a value is empty or such a name; In and NotIn need a
// value, Exists and DoesNotExist take none. Each error names its field below the selector.
import { describe, expect, it } from "vitest";
import type { LabelSelector } from "../../src/api/schema.js";
import { labelKeyError, labelValueError, selectorErrors } from "../../src/model/selector.js";

const PREFIX_WORDS = "the prefix must be a DNS subdomain of at most 253 characters";
const NAME_WORDS =
  "the name must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
const keyError = (key: string, words: string): string => `${JSON.stringify(key)}: ${words}`;
const valueError = (value: string): string =>
  `${JSON.stringify(value)} is not a label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)`;

/** A DNS subdomain of exactly `n` characters (labels of 63 joined by dots). */
function subdomain(n: number): string {
  let s = "";
  while (s.length < n) s += s === "" ? "a" : s.length % 64 === 63 ? "." : "b";
  return s.endsWith(".") ? `${s.slice(0, -1)}c` : s;
}

describe("labelKeyError", () => {
  it.each<[string, string | undefined]>([
    ["team", undefined],
    ["a", undefined],
    ["a_b.c-D9", undefined],
    ["example.com/tier", undefined],
    ["kubernetes.io/metadata.name", undefined],
    [`${subdomain(253)}/x`, undefined],
    [`${subdomain(254)}/x`, PREFIX_WORDS],
    ["Example.com/x", PREFIX_WORDS],
    ["-example.com/x", PREFIX_WORDS],
    ["/x", PREFIX_WORDS],
    ["a/b/c", PREFIX_WORDS],
    ["x".repeat(63), undefined],
    ["x".repeat(64), NAME_WORDS],
    ["-team", NAME_WORDS],
    ["team_", NAME_WORDS],
    ["my team", NAME_WORDS],
    ["example.com/", NAME_WORDS],
    ["", NAME_WORDS],
  ])("%j", (key, words) => {
    expect(labelKeyError(key)).toBe(words === undefined ? undefined : keyError(key, words));
  });
});

describe("labelValueError", () => {
  it.each<[string, boolean]>([
    ["", true],
    ["infra", true],
    ["a.b_c-9", true],
    ["v".repeat(63), true],
    ["v".repeat(64), false],
    ["-infra", false],
    ["infra.", false],
    ["a b", false],
    ["a/b", false],
  ])("%j valid: %s", (value, valid) => {
    expect(labelValueError(value)).toBe(valid ? undefined : valueError(value));
  });
});

describe("selectorErrors", () => {
  it("an empty selector and a valid one have no errors", () => {
    expect(selectorErrors({})).toEqual([]);
    expect(
      selectorErrors({
        matchLabels: { team: "infra", "example.com/tier": "", z: "1" },
        matchExpressions: [
          { key: "tier", operator: "In", values: ["a", "b"] },
          { key: "tier", operator: "NotIn", values: ["c"] },
          { key: "example.com/x", operator: "Exists" },
          { key: "y", operator: "DoesNotExist", values: [] },
        ],
      }),
    ).toEqual([]);
  });

  it("matchLabels: a bad key or value, each under matchLabels.<key>, in key order", () => {
    expect(selectorErrors({ matchLabels: { "z z": "ok", b: "-bad", a: "fine", "x/": "v" } })).toEqual([
      { field: "matchLabels.b", message: valueError("-bad") },
      { field: "matchLabels.x/", message: keyError("x/", NAME_WORDS) },
      { field: "matchLabels.z z", message: keyError("z z", NAME_WORDS) },
    ]);
  });

  it("a key with both a bad name and a bad value is reported once, for its key", () => {
    expect(selectorErrors({ matchLabels: { "-k": "-v" } })).toEqual([
      { field: "matchLabels.-k", message: keyError("-k", NAME_WORDS) },
    ]);
  });

  it("matchExpressions: key, operator arity and each value, under matchExpressions[i]", () => {
    const selector: LabelSelector = {
      matchExpressions: [
        { key: "bad key", operator: "Exists" },
        { key: "t", operator: "In" },
        { key: "t", operator: "NotIn", values: [] },
        { key: "t", operator: "Exists", values: ["x"] },
        { key: "t", operator: "DoesNotExist", values: ["x", "y"] },
        { key: "t", operator: "In", values: ["ok", "-bad", "", "also bad"] },
        { key: "t", operator: "Exists" },
      ],
    };
    expect(selectorErrors(selector)).toEqual([
      { field: "matchExpressions[0].key", message: keyError("bad key", NAME_WORDS) },
      { field: "matchExpressions[1].values", message: "operator In needs at least one value" },
      { field: "matchExpressions[2].values", message: "operator NotIn needs at least one value" },
      { field: "matchExpressions[3].values", message: "operator Exists takes no values" },
      { field: "matchExpressions[4].values", message: "operator DoesNotExist takes no values" },
      { field: "matchExpressions[5].values[1]", message: valueError("-bad") },
      { field: "matchExpressions[5].values[3]", message: valueError("also bad") },
    ]);
  });

  it("matchLabels come before matchExpressions", () => {
    expect(
      selectorErrors({
        matchExpressions: [{ key: "-e", operator: "Exists" }],
        matchLabels: { "-l": "v" },
      }).map((e) => e.field),
    ).toEqual(["matchLabels.-l", "matchExpressions[0].key"]);
  });
});
