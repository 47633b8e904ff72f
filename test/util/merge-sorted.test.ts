// mergeSorted: the kept problems (in order) and the new ones (sorted) as one list, in the order a
// stable sort of the two lists one after the other gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergeSorted } from "../../src/util/merge-sorted.js";

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
});
