// ChunkedList against a Map sorted afresh after every patch: the same elements in the same order,
// every index found, chunks within their bounds, and every chunk a patch did not touch
// shared with the list it came from.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChunkedList, unsharedElements, type KeyedChange } from "../../src/util/chunked-list.js";

interface Item {
  readonly key: string;
  readonly version: number;
}

const keyOf = (x: Item): string => x.key;
// Keys from a small alphabet, so patches hit existing keys as often as new ones.
const key = fc.stringMatching(/^[a-e]{1,3}$/);
const change = fc.tuple(key, fc.option(fc.nat(1000), { nil: undefined }));

function sortedOf(model: ReadonlyMap<string, Item>): Item[] {
  return [...model.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

describe("ChunkedList", () => {
  it("holds what a map sorted afresh holds, after any run of patches, at any chunk size", () => {
    const shape = fc.record({
      chunkSize: fc.integer({ min: 1, max: 9 }),
      start: fc.uniqueArray(key, { maxLength: 150 }),
      patches: fc.array(fc.array(change, { maxLength: 40 }), { maxLength: 12 }),
    });
    fc.assert(
      fc.property(shape, ({ chunkSize, start, patches }) => {
        const model = new Map(start.map((k) => [k, { key: k, version: 0 }]));
        let list = ChunkedList.of(sortedOf(model), keyOf, chunkSize);
        for (const patch of patches) {
          const keyed: KeyedChange<Item>[] = patch.map(([k, v]) => [
            k,
            v === undefined ? undefined : { key: k, version: v },
          ]);
          for (const [k, v] of keyed) {
            if (v === undefined) model.delete(k);
            else model.set(k, v);
          }
          const before = list;
          list = list.patch(keyed);
          const want = sortedOf(model);
          expect([...list]).toEqual(want);
          expect(list.length).toBe(want.length);
          for (const [i, x] of want.entries()) {
            expect(list.at(i)).toBe(x);
            expect(list.at(i - want.length)).toBe(x);
          }
          expect(list.at(want.length)).toBeUndefined();
          for (const c of list.chunks) {
            expect(c.length).toBeGreaterThan(0);
            expect(c.length).toBeLessThanOrEqual(2 * chunkSize);
          }
          // The chunks not shared hold every element that differs, and no chunk outside the
          // ones holding a changed key (or its neighbour, joined to it) is copied.
          const { a, b } = unsharedElements(before, list);
          const gone = new Set(before);
          for (const x of list) gone.delete(x);
          const came = new Set(list);
          for (const x of before) came.delete(x);
          for (const x of gone) expect([...a]).toContain(x);
          for (const x of came) expect([...b]).toContain(x);
          const touched = new Set(patch.map(([k]) => k)).size;
          expect([...b].length).toBeLessThanOrEqual(touched * 6 * chunkSize);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("returns itself for a patch that changes nothing, and shares all but the touched chunk", () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ key: String(i).padStart(5, "0"), version: 0 }));
    const list = ChunkedList.of(items, keyOf, 512);
    expect(list.patch([])).toBe(list);
    expect(
      list.patch([
        ["00007", items[7]],
        ["nope", undefined],
      ]),
    ).toBe(list);
    const next = list.patch([["04000", { key: "04000", version: 1 }]]);
    const { a, b } = unsharedElements(list, next);
    expect([...a].length).toBe(list.chunks.find((c) => c.includes(items[4000] as Item))?.length);
    expect([...b].map((x) => x.key)).toContain("04000");
    expect(next.chunks.filter((c) => !list.chunks.includes(c))).toHaveLength(1);
  });

  it("joins the chunks a patch thinned out, so that a long-lived list does not fragment", () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ key: String(i).padStart(5, "0"), version: 0 }));
    const list = ChunkedList.of(items, keyOf, 512);
    const thinned = list.patch(items.filter((_, i) => i % 100 !== 0).map((x) => [x.key, undefined] as const));
    expect(thinned.length).toBe(100);
    expect(thinned.chunks).toHaveLength(1);
  });

  it("refuses a chunk size that is not positive", () => {
    expect(() => ChunkedList.of([], keyOf, 0)).toThrow(/chunk size 0/);
  });
});
