// The feed index stays what a plain map of every change says, batch after batch, over many groups
// (so that its outer maps are overlays over a shared base, and flattened again): every group's
// objects, the group count and iteration — and every earlier index stays as it was (persistent).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Machine } from "../../../src/api/external.js";
import {
  applyChanges,
  EMPTY_INDEX,
  type FeedIndex,
  type ObjectChange,
} from "../../../src/model/incremental/infras-read.js";
import { machine } from "../../support/fixtures.js";

const NAMESPACES = Array.from({ length: 120 }, (_, i) => `cp-${String(i)}`);
const NAMES = ["w0", "w1", "w2"];

/** One edit: put a version of a Machine (namespace, name, address) or delete it (null). */
const edit = fc.tuple(
  fc.nat({ max: NAMESPACES.length - 1 }),
  fc.nat({ max: NAMES.length - 1 }),
  fc.option(fc.nat({ max: 3 }), { nil: null }),
);

type Reference = Map<string, Map<string, Machine>>;

function groupsOf(index: FeedIndex): [string, string[]][] {
  return [...index.objects.Machine].map(([ns, g]): [string, string[]] => [ns, [...g.keys()].sort()]).sort();
}

function expected(ref: Reference): [string, string[]][] {
  return [...ref].map(([ns, g]): [string, string[]] => [ns, [...g.keys()].sort()]).sort();
}

function byKey(group: ReadonlyMap<string, Machine>): [string, Machine][] {
  return [...group].sort(([a], [b]) => (a < b ? -1 : 1));
}

describe("feed index", () => {
  it("equals a plain map of the changes after every batch, and earlier indexes stay as they were", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(edit, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        (batches) => {
          const ref: Reference = new Map();
          let index = EMPTY_INDEX;
          const history: [FeedIndex, [string, string[]][], Machine[]][] = [];
          for (const batch of batches) {
            const changes: ObjectChange[] = [];
            for (const [n, w, v] of batch) {
              const ns = NAMESPACES[n] ?? "";
              const id = `${ns}/${NAMES[w] ?? ""}`;
              const group = ref.get(ns) ?? new Map<string, Machine>();
              const before = group.get(id);
              const after = v === null ? undefined : machine(ns, NAMES[w] ?? "", "pool", [`10.0.0.${String(v)}`]);
              if (after === undefined) group.delete(id);
              else group.set(id, after);
              if (group.size === 0) ref.delete(ns);
              else ref.set(ns, group);
              changes.push({ kind: "Machine", before, after });
            }
            index = applyChanges(index, changes);
            expect(groupsOf(index)).toEqual(expected(ref));
            expect(index.objects.Machine.size).toBe(ref.size);
            for (const ns of NAMESPACES) {
              // A group's own order is insertion order, which means nothing: compared by key.
              const got = index.objects.Machine.get(ns);
              const want = ref.get(ns);
              expect(got === undefined ? undefined : byKey(got)).toEqual(want === undefined ? undefined : byKey(want));
              expect(index.objects.Machine.has(ns)).toBe(ref.has(ns));
            }
            history.push([index, expected(ref), [...ref.values()].flatMap((g) => [...g.values()])]);
          }
          for (const [old, groups, objects] of history) {
            expect(groupsOf(old)).toEqual(groups);
            const held = [...old.objects.Machine.values()].flatMap((g) => [...g.values()]);
            expect(new Set(held)).toEqual(new Set(objects));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
