// mergeSorted: the kept problems (in order) and the new ones (sorted) as one list, in the order a
// stable sort of the two lists one after the other gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeSorted, patchSortedList } from "../../src/util/merge-sorted.js";

describe("mergeSorted", () => {
  it("orders as a stable sort of both lists, the first list's element first of equal ones", () => {
    const item = fc.record({ key: fc.nat(20), from: fc.nat() });
    const byKey = (x: { key: number }, y: { key: number }) => x.key - y.key;
    fc.assert(
      fc.property(fc.array(item, { maxLength: 300 }), fc.array(item, { maxLength: 300 }), (a, b) => {
        const first = a.map((x) => ({ ...x, list: "a" })).sort(byKey);
        const second = b.map((x) => ({ ...x, list: "b" })).sort(byKey);
        expect(mergeSorted(first, second, byKey)).toEqual([...first, ...second].sort(byKey));
      }),
      { numRuns: 300 },
    );
  });

  it("patches a list as filtering it and merging the added in would (few changes or many)", () => {
    type Item = { key: number; id: number };
    const byKey = (x: Item, y: Item) => x.key - y.key;
    const shape = fc.record({
      keys: fc.array(fc.nat(40), { minLength: 0, maxLength: 600 }),
      removedAt: fc.array(fc.nat(), { maxLength: 60 }),
      addedKeys: fc.array(fc.nat(40), { maxLength: 60 }),
      few: fc.boolean(),
    });
    fc.assert(
      fc.property(shape, ({ keys, removedAt, addedKeys, few }) => {
        let id = 0;
        const list = keys.map((key) => ({ key, id: id++ })).sort(byKey);
        // Mostly a few changes to a long list (the binary-search path), sometimes many.
        const picks = few ? removedAt.slice(0, 3) : removedAt;
        const removed = new Set(picks.flatMap((i) => (list.length === 0 ? [] : [list[i % list.length] as Item])));
        removed.add({ key: 7, id: -1 }); // not in the list: skipped
        const added = (few ? addedKeys.slice(0, 3) : addedKeys).map((key) => ({ key, id: id++ })).sort(byKey);
        const want = mergeSorted(
          list.filter((x) => !removed.has(x)),
          added,
          byKey,
        );
        expect(patchSortedList(list, removed, added, byKey)).toEqual(want);
        expect(list).toHaveLength(keys.length);
      }),
      { numRuns: 400 },
    );
  });

  it("returns the list itself when nothing changes", () => {
    const list = [{ k: 1 }, { k: 2 }];
    expect(patchSortedList(list, new Set(), [], (a, b) => a.k - b.k)).toBe(list);
  });
});
