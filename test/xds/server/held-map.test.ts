// HeldMap (src/xds/server/held-map.ts), the held state a large Delta subscription extends per
// request: it reads as the Map of the same sets would, and extending it leaves the original as it was.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { HeldMap } from "../../../src/xds/server/held-map.js";
import type { Held } from "../../../src/xds/server/memory.js";

const held = (version: string): Held => ({ version, res: undefined });
const name = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.nat(2000).map((n) => `cluster-${String(n)}`),
);
const entries = fc.array(fc.tuple(name, fc.constantFrom("", "1", "2")), { maxLength: 300 });
const sorted = (m: ReadonlyMap<string, Held>): [string, string][] =>
  [...m].map(([n, h]): [string, string] => [n, h.version]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

describe("HeldMap", () => {
  test("after any sequence of extensions it holds what a Map given the same sets holds; earlier ones are unchanged", () => {
    fc.assert(
      fc.property(entries, fc.array(entries, { maxLength: 8 }), (first, later) => {
        const expected = new Map(first.map(([n, v]) => [n, held(v)]));
        let map = HeldMap.of(expected);
        const versions: [HeldMap, [string, string][]][] = [[map, sorted(expected)]];
        for (const batch of later) {
          for (const [n, v] of batch) expected.set(n, held(v));
          map = map.with(batch.map(([n, v]) => [n, held(v)]));
          versions.push([map, sorted(expected)]);
        }
        expect(map.size).toBe(expected.size);
        for (const [n, h] of expected) {
          expect(map.has(n)).toBe(true);
          expect(map.get(n)?.version).toBe(h.version);
        }
        expect(map.has("not-held")).toBe(expected.has("not-held"));
        for (const [m, contents] of versions) expect(sorted(m)).toEqual(contents);
        expect([...map.keys()].length).toBe(expected.size);
        expect([...map.values()].length).toBe(expected.size);
        let each = 0;
        map.forEach(() => (each += 1));
        expect(each).toBe(expected.size);
      }),
      { seed: 25, numRuns: 60 },
    );
  });

  test("a HeldMap is taken as it is, another map is copied", () => {
    const plain = new Map([["a", held("1")]]);
    const map = HeldMap.of(plain);
    expect(HeldMap.of(map)).toBe(map);
    expect(map).not.toBe(plain);
    expect(Object.prototype.toString.call(map)).toBe("[object HeldMap]");
  });
});
