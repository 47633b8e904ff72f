import { describe, expect, it } from "vitest";
import { groupBy } from "../../src/util/group.js";

describe("groupBy", () => {
  it("keeps input order within each group and first-seen order of keys", () => {
    const groups = groupBy(["b1", "a1", "b2", "c1", "a2"], (s) => s[0]);
    expect([...groups]).toEqual([
      ["b", ["b1", "b2"]],
      ["a", ["a1", "a2"]],
      ["c", ["c1"]],
    ]);
  });

  it("groups 100,000 items under one key into one list of them all", () => {
    const items = Array.from({ length: 100_000 }, (_, i) => i);
    const groups = groupBy(items, () => "one");
    expect(groups.get("one")).toEqual(items);
  });
});
