// Which status a pass starts from while the attachment's cache catches up with our own write.
import { describe, expect, it } from "vitest";
import { cacheBehind, type WrittenStatus } from "../../../src/operator/apps-ingress/unobserved.js";

const mine: WrittenStatus = { readAt: "100", resultRv: "102", status: { phase: "Ready", externalIP: "192.0.2.201" } };

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
    const big = { ...mine, readAt: "9007199254740993", resultRv: "9007199254740995" };
    expect(cacheBehind("9007199254740994", big)).toBe(true);
    expect(cacheBehind("9007199254740996", big)).toBe(false);
  });

  it("with versions that are not decimal, only the version we read counts as behind", () => {
    const opaque = { ...mine, readAt: "a", resultRv: "c" };
    expect(cacheBehind("a", opaque)).toBe(true);
    expect(cacheBehind("b", opaque)).toBe(false);
    expect(cacheBehind("101", { ...mine, resultRv: undefined })).toBe(false);
  });
});
