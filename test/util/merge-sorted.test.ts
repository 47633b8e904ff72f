// mergeSorted: the kept problems (in order) and the new ones (sorted) as one list, in the order a
// stable sort of the two lists one after the other gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  changedBetween,
  mergeSorted,
  patchSortedList,
  sortedFromLists,
  type SortedFromLists,
} from "../../src/util/merge-sorted.js";

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

  it("an edit takes its old version's place: the same objects as filtering and merging, for unique or repeated keys", () => {
    type Obj = { readonly key: number; readonly version: number };
    const byKey = (a: Obj, b: Obj) => a.key - b.key;
    fc.assert(
      fc.property(
        fc.array(fc.nat(2000), { maxLength: 400 }),
        fc.array(fc.tuple(fc.nat(399), fc.constantFrom("edit", "remove", "twice")), { maxLength: 20 }),
        fc.array(fc.integer({ min: 1990, max: 2100 }), { maxLength: 4 }),
        (keys, picks, fresh) => {
          const list = keys.map((key) => ({ key, version: 0 })).sort(byKey);
          const removed = new Set<Obj>();
          const added: Obj[] = fresh.map((key) => ({ key, version: 0 }));
          for (const [i, what] of picks) {
            const x = list[i];
            if (x === undefined || removed.has(x)) continue;
            removed.add(x);
            // "twice": two new versions of one key (neither alone may take the old one's place).
            if (what !== "remove") added.push({ key: x.key, version: 1 });
            if (what === "twice") added.push({ key: x.key, version: 2 });
          }
          added.sort(byKey);
          const expected = mergeSorted(
            list.filter((x) => !removed.has(x)),
            added,
            byKey,
          );
          const out = patchSortedList(list, removed, added, byKey);
          expect(out).toHaveLength(expected.length);
          expect(out.every((x, i) => x === expected[i])).toBe(true);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("returns the list itself when nothing changes", () => {
    const list = [{ k: 1 }, { k: 2 }];
    expect(patchSortedList(list, new Set(), [], (a, b) => a.k - b.k)).toBe(list);
  });

  it("changedBetween names what one list holds and the other does not: exactly for distinct keys in order; never less out of order", () => {
    type Item = { key: number; id: number };
    const byKey = (x: Item, y: Item) => x.key - y.key;
    const shape = fc.record({
      keys: fc.uniqueArray(fc.nat(1000), { maxLength: 400 }),
      removedAt: fc.array(fc.nat(), { maxLength: 20 }),
      replacedAt: fc.array(fc.nat(), { maxLength: 20 }),
      addedKeys: fc.uniqueArray(fc.integer({ min: 1001, max: 2000 }), { maxLength: 20 }),
      shuffled: fc.boolean(),
    });
    fc.assert(
      fc.property(shape, ({ keys, removedAt, replacedAt, addedKeys, shuffled }) => {
        let id = 0;
        const a = keys.map((key) => ({ key, id: id++ })).sort(byKey);
        const gone = new Set(removedAt.flatMap((i) => (a.length === 0 ? [] : [a[i % a.length] as Item])));
        const replaced = new Set(replacedAt.flatMap((i) => (a.length === 0 ? [] : [a[i % a.length] as Item])));
        let b = a
          .filter((x) => !gone.has(x))
          .map((x) => (replaced.has(x) ? { key: x.key, id: id++ } : x))
          .concat(addedKeys.map((key) => ({ key, id: id++ })))
          .sort(byKey);
        if (shuffled) b = [...b].reverse();
        const { removed, added, addedAt } = changedBetween(a, b, byKey);
        expect(addedAt.map((j) => b[j])).toEqual(added);
        const inB = new Set(b);
        const inA = new Set(a);
        const wantRemoved = a.filter((x) => !inB.has(x));
        const wantAdded = b.filter((x) => !inA.has(x));
        if (shuffled) {
          for (const x of wantRemoved) expect(removed).toContain(x);
          for (const x of wantAdded) expect(added).toContain(x);
        } else {
          expect(removed).toEqual(wantRemoved);
          expect(added).toEqual(wantAdded);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("sortedFromLists patched list by list holds what a sort of every list holds, in order", () => {
    // Lists come and go between steps, most kept as the same objects (an unchanged attachment's).
    type Item = { key: number; id: number };
    const byKey = (x: Item, y: Item) => x.key - y.key;
    const step = fc.record({
      drop: fc.array(fc.nat(), { maxLength: 4 }),
      add: fc.array(fc.array(fc.nat(200), { maxLength: 8 }), { maxLength: 4 }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(200), { maxLength: 8 }), { minLength: 1, maxLength: 200 }),
        fc.array(step, { minLength: 1, maxLength: 10 }),
        (start, steps) => {
          let id = 0;
          const listOf = (keys: readonly number[]): Item[] => keys.map((key) => ({ key, id: id++ }));
          let lists: (readonly Item[])[] = start.map(listOf);
          let sorted: SortedFromLists<Item> | undefined;
          for (const s of steps) {
            sorted = sortedFromLists(sorted, lists, byKey);
            const all = lists.flat();
            expect(sorted.items.map((x) => x.key)).toEqual(all.map((x) => x.key).sort((a, b) => a - b));
            expect(new Set(sorted.items)).toEqual(new Set(all));
            const gone = new Set(s.drop.map((i) => i % Math.max(1, lists.length)));
            lists = [...lists.filter((_, i) => !gone.has(i)), ...s.add.map(listOf)];
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
