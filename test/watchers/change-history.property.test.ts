// Observed.changesSince: the keyed changes of several snapshots made one must be what comparing
// the two states by identity gives (changesBetween, the path a rendering takes without them), for
// any run of watch events; and a history that no longer holds a snapshot between says so.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changesBetween, type ObjectChange } from "../../src/model/incremental/infras-read.js";
import { buildObserved, ChangeHistory, netChanges, type Observed } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { machine, service } from "../support/fixtures.js";

type Raw = Record<ResourceName, Map<string, KubeObject>>;

const empty = (): Raw =>
  Object.fromEntries(WATCHED_RESOURCES.map((r) => [r.name, new Map<string, KubeObject>()])) as Raw;

/** One watch event: an object of a few names put (a new version) or deleted. */
const event = fc.record({
  resource: fc.constantFrom<"machines" | "services">("machines", "services"),
  name: fc.integer({ min: 0, max: 7 }),
  remove: fc.boolean(),
});

function objectOf(resource: "machines" | "services", name: number, version: number): KubeObject {
  const o =
    resource === "machines"
      ? machine("cp", `m${name}`, "pool", [`10.0.0.${version % 250}`])
      : service("cp", `s${name}`, `172.30.0.${version % 250}`, [443]);
  return o as unknown as KubeObject;
}

/** Snapshots after each batch of events, each built after the one before with the keys it touched. */
function run(
  batches: readonly (readonly { resource: "machines" | "services"; name: number; remove: boolean }[])[],
): Observed[] {
  let raw = empty();
  const out = [buildObserved(raw, 0)];
  let version = 0;
  for (const batch of batches) {
    const next = { ...raw, machines: new Map(raw.machines), services: new Map(raw.services) };
    const dirty = new Map<ResourceName, Set<string>>();
    for (const e of batch) {
      const key = `cp/${e.resource === "machines" ? "m" : "s"}${e.name}`;
      if (e.remove) next[e.resource].delete(key);
      else next[e.resource].set(key, objectOf(e.resource, e.name, ++version));
      dirty.set(e.resource, (dirty.get(e.resource) ?? new Set()).add(key));
    }
    const previous = out[out.length - 1];
    if (previous === undefined) throw new Error("no snapshot");
    out.push(buildObserved(next, out.length, new WeakMap(), { observed: previous, dirty }));
    raw = next;
  }
  return out;
}

/** Changes as comparable text: kind, key, and which version before and after (by identity). */
function described(changes: readonly ObjectChange[], versions: Map<object, number>): string[] {
  const id = (o: object | undefined): string => {
    if (o === undefined) return "-";
    if (!versions.has(o)) versions.set(o, versions.size);
    return String(versions.get(o));
  };
  return changes
    .map((c) => `${c.kind} ${(c.after ?? c.before)?.metadata.name ?? "?"} ${id(c.before)}→${id(c.after)}`)
    .sort();
}

describe("the keyed changes since an earlier snapshot", () => {
  it("are those of comparing the two states by identity, for any run of events", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(event, { minLength: 0, maxLength: 6 }), { minLength: 1, maxLength: 24 }),
        fc.nat(),
        (batches, pick) => {
          const snapshots = run(batches);
          const history = new ChangeHistory();
          for (const s of snapshots.slice(1)) history.add(s.seq, s.changes);
          const from = 1 + (pick % (snapshots.length - 1));
          const to = snapshots.length - 1;
          const got = history.since(from, to);
          const [a, b] = [snapshots[from], snapshots[to]];
          if (got === undefined || a === undefined || b === undefined) throw new Error("history lost a snapshot");
          const versions = new Map<object, number>();
          expect(described(got, versions)).toEqual(described(changesBetween(a.state, b.state), versions));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("are unknown once a snapshot between is no longer kept, or was too large to keep", () => {
    const snapshots = run([[{ resource: "machines", name: 1, remove: false }], [], [], []]);
    const small = new ChangeHistory(2);
    for (const s of snapshots.slice(1)) small.add(s.seq, s.changes);
    expect(small.since(1, 4)).toBeUndefined();
    expect(small.since(2, 4)).toEqual([]);
    const strict = new ChangeHistory(64, 0);
    strict.add(1, snapshots[1]?.changes ?? []);
    strict.add(2, []);
    expect(strict.since(0, 2)).toBeUndefined();
    expect(strict.since(1, 2)).toEqual([]);
    expect(new ChangeHistory().since(3, 2)).toBeUndefined();
  });

  it("net to nothing for an object changed and changed back to the same object", () => {
    const one = machine("cp", "m1", "pool", ["10.0.0.1"]) as unknown as ObjectChange["after"];
    const two = machine("cp", "m1", "pool", ["10.0.0.2"]) as unknown as ObjectChange["after"];
    const there = { kind: "Machine", before: one, after: two } as ObjectChange;
    const back = { kind: "Machine", before: two, after: one } as ObjectChange;
    expect(netChanges([[there], [back]])).toEqual([]);
    expect(netChanges([[there], []])).toEqual([there]);
  });
});
