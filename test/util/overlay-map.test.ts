import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changedKeys, OverlayMap, patchMap, REMOVED, type Removed } from "../../src/util/overlay-map.js";

/** A batch: keys 0–599 set to a value or removed. */
const batch = fc.array(fc.tuple(fc.nat(599), fc.option(fc.nat(9), { nil: undefined })), {
  minLength: 0,
  maxLength: 40,
});

function changesOf(b: readonly [number, number | undefined][]): Map<number, string | Removed> {
  return new Map(b.map(([k, v]) => [k, v === undefined ? REMOVED : `v${String(v)}`]));
}

/** The same batch applied to a plain copy: the oracle. */
function applied(m: ReadonlyMap<number, string>, changes: ReadonlyMap<number, string | Removed>): Map<number, string> {
  const out = new Map(m);
  for (const [k, v] of changes) {
    if (v === REMOVED) out.delete(k);
    else out.set(k, v);
  }
  return out;
}

function sortedEntries(m: ReadonlyMap<number, string>): [number, string][] {
  return [...m].sort((a, b) => a[0] - b[0]);
}

describe("patchMap", () => {
  it("reads as a plain map with every batch applied, and leaves each earlier version as it was (up to 150 batches)", () => {
    fc.assert(
      fc.property(fc.array(batch, { minLength: 1, maxLength: 150 }), (batches) => {
        const start = new Map(Array.from({ length: 300 }, (_, i) => [i, `s${String(i)}`] as const));
        let map: ReadonlyMap<number, string> = start;
        let oracle: Map<number, string> = new Map(start);
        const versions: [ReadonlyMap<number, string>, [number, string][]][] = [];
        for (const b of batches) {
          const changes = changesOf(b);
          const next = patchMap(map, changes);
          const nextOracle = applied(oracle, changes);
          expect(next.size).toBe(nextOracle.size);
          expect(sortedEntries(next)).toEqual(sortedEntries(nextOracle));
          const reads = (m: ReadonlyMap<number, string>) =>
            Array.from({ length: 600 }, (_, k) => `${String(m.has(k))} ${String(m.get(k))}`).join();
          expect(reads(next)).toBe(reads(nextOracle));
          expect(changedKeys(map, next)).toEqual(
            new Set([...changes].filter(([k, v]) => oracle.get(k) !== (v === REMOVED ? undefined : v)).map(([k]) => k)),
          );
          versions.push([next, sortedEntries(nextOracle)]);
          [map, oracle] = [next, nextOracle];
        }
        for (const [m, entries] of versions) expect(sortedEntries(m)).toEqual(entries);
      }),
      { numRuns: 30 },
    );
  });

  it("shares the map it patches while its own entries are few, and flattens past 16 + a sixteenth of it", () => {
    const base = new Map(Array.from({ length: 160 }, (_, i) => [i, "x"] as const));
    const few = patchMap(base, new Map(Array.from({ length: 25 }, (_, i) => [i, "y"] as const)));
    expect(few).toBeInstanceOf(OverlayMap);
    expect((few as OverlayMap<number, string>).base).toBe(base);
    const more = patchMap(few, new Map([[100, REMOVED]]));
    expect((more as OverlayMap<number, string>).base).toBe(base);
    expect(more.size).toBe(159);
    const flat = patchMap(more, new Map([[101, "z"]]));
    expect(flat).toBeInstanceOf(Map);
    expect(flat.get(101)).toBe("z");
    expect(flat.get(100)).toBeUndefined();
    expect(flat.get(0)).toBe("y");
    expect(flat.size).toBe(159);
  });

  it("returns the map itself for no change, and forgets a key added and removed again since the last flattening", () => {
    const base = new Map([[1, "a"]]);
    expect(patchMap(base, new Map())).toBe(base);
    const added = patchMap(base, new Map([[2, "b"]]));
    const gone = patchMap(added, new Map([[2, REMOVED]])) as OverlayMap<number, string>;
    expect(gone.own.size).toBe(0);
    expect([...gone]).toEqual([[1, "a"]]);
    expect(changedKeys(base, gone)).toEqual(new Set());
  });

  it("changedKeys compares two unrelated maps entry by entry", () => {
    const a = new Map([
      [1, "a"],
      [2, "b"],
    ]);
    const b = patchMap(
      new Map([
        [2, "b"],
        [3, "c"],
      ]),
      new Map([[4, "d"]]),
    );
    expect(changedKeys(a, b)).toEqual(new Set([1, 3, 4]));
    expect(changedKeys(b, a)).toEqual(new Set([1, 3, 4]));
  });
});
