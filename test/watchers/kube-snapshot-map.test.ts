// ClusterWatcher's frozen views of the reflectors' live Maps (src/watchers/kube/snapshot-map.ts):
// after any sequence of sets, deletes, relists and snapshots, each view equals a fresh copy of the
// live Map at its time — and still does after the live Map moved on and later views were taken;
// changedKeys between two views names exactly the keys whose values differ.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changedKeys } from "../../src/util/overlay-map.js";
import { SnapshotMap } from "../../src/watchers/kube/snapshot-map.js";

type Op =
  | { readonly op: "set"; readonly key: string; readonly value: number }
  | { readonly op: "delete"; readonly key: string }
  | { readonly op: "relist"; readonly keys: readonly string[] }
  | { readonly op: "snapshot" };

const key = fc.integer({ min: 0, max: 80 }).map((n) => `ns/m-${String(n)}`);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("set" as const), key, value: fc.integer() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("delete" as const), key }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("relist" as const), keys: fc.array(key, { maxLength: 60 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("snapshot" as const) }) },
);

/** Everything a consumer of Observed.raw can ask, as plain values. */
function seen(m: ReadonlyMap<string, number>, probes: readonly string[]) {
  const forEach: [string, number][] = [];
  m.forEach((v, k) => forEach.push([k, v]));
  return {
    size: m.size,
    entries: [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
    keys: [...m.keys()].sort(),
    values: [...m.values()].sort((a, b) => a - b),
    iterated: [...m].length,
    forEach: forEach.length,
    get: probes.map((k) => m.get(k)),
    has: probes.map((k) => m.has(k)),
  };
}

describe("SnapshotMap", () => {
  it("every view equals a copy of the live Map taken at its time, however the live Map moved on since", () => {
    const probes = Array.from({ length: 81 }, (_, n) => `ns/m-${String(n)}`);
    fc.assert(
      fc.property(fc.array(op, { minLength: 20, maxLength: 400, size: "max" }), (ops) => {
        let live = new Map<string, number>();
        let view = SnapshotMap.copy(live);
        let dirty: Set<string> | undefined = new Set();
        const taken: [SnapshotMap<number>, Map<string, number>][] = [[view, new Map(live)]];
        for (const o of ops) {
          if (o.op === "set") {
            live.set(o.key, o.value);
            dirty?.add(o.key);
          } else if (o.op === "delete") {
            live.delete(o.key);
            dirty?.add(o.key);
          } else if (o.op === "relist") {
            live = new Map(o.keys.map((k, i) => [k, i]));
            dirty = undefined;
          } else {
            view = view.next(live, dirty);
            dirty = new Set();
            taken.push([view, new Map(live)]);
          }
        }
        for (const [v, copy] of taken) expect(seen(v, probes)).toEqual(seen(copy, probes));
        // changedKeys between views (the reconcile pass's scope): by their deltas while they share a
        // base, entry by entry across a copy — the same keys either way.
        for (const [i, [a, aCopy]] of taken.entries())
          for (const [b, bCopy] of taken.slice(i + 1, i + 6)) {
            const differ = probes.filter((k) => aCopy.get(k) !== bCopy.get(k));
            expect([...changedKeys(a, b)].sort()).toEqual(differ.sort());
          }
      }),
      { seed: 16, numRuns: 150 },
    );
  });

  it("a deleted key is absent even while its base still holds it, and a re-added one is present once", () => {
    const live = new Map([
      ["a", 1],
      ["b", 2],
    ]);
    const first = SnapshotMap.copy(live);
    live.delete("a");
    const second = first.next(live, ["a"]);
    live.set("a", 3);
    live.set("c", 4);
    const third = second.next(live, ["a", "c"]);
    expect([second.size, second.has("a"), second.get("a"), [...second.keys()]]).toEqual([1, false, undefined, ["b"]]);
    expect([third.size, [...third.entries()]]).toEqual([
      3,
      [
        ["a", 3],
        ["b", 2],
        ["c", 4],
      ],
    ]);
    expect([...first.entries()]).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
  });
});
