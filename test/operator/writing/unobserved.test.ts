// Whether the cache already holds a write of ours, while another writer's change can land between
// the version a write was decided on and the one it produced.
import { describe, expect, it } from "vitest";
import { cacheBehind, type OwnWrite } from "../../../src/operator/writing/unobserved.js";

const mine: OwnWrite = { seenRv: "100", resultRv: "102" };

describe("cacheBehind", () => {
  it.each([
    ["the version our write was decided on", "100", true],
    ["another writer's change made before ours (the reconcile pass's conditions)", "101", true],
    ["the version our write produced", "102", false],
    ["a later change (anyone's)", "103", false],
    ["a later change with more digits", "1000", false],
    ["an older version with fewer digits than ours", "99", true],
  ])("a cache at %s: %s", (_, rv, behind) => {
    expect(cacheBehind(rv, mine)).toBe(behind);
  });

  it("orders versions numerically beyond 2^53 (etcd revisions are int64)", () => {
    const big = { seenRv: "9007199254740993", resultRv: "9007199254740995" };
    expect(cacheBehind("9007199254740994", big)).toBe(true);
    expect(cacheBehind("9007199254740996", big)).toBe(false);
  });

  it("a write that changed nothing (the version it produced is the one it read) is held at that version", () => {
    expect(cacheBehind("100", { seenRv: "100", resultRv: "100" })).toBe(false);
  });

  it("with versions that are not decimal, or no produced version, only the version read counts as behind", () => {
    const opaque = { seenRv: "a", resultRv: "c" };
    expect(cacheBehind("a", opaque)).toBe(true);
    expect(cacheBehind("b", opaque)).toBe(false);
    expect(cacheBehind("101", { seenRv: "100" })).toBe(false);
    expect(cacheBehind("100", { seenRv: "100" })).toBe(true);
    expect(cacheBehind(undefined, mine)).toBe(false);
  });
});
