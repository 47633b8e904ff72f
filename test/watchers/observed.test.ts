// The Kubernetes snapshot after watch events: keyed changes from the keys the reflectors reported,
// and the same state as a snapshot built from scratch (lists patched in place of a full sort).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changesBetween, type ObjectChange } from "../../src/model/incremental/infras-read.js";
import { buildObserved, patchSorted, type Observed, type PreviousObserved } from "../../src/watchers/kube/observed.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { infra, machine } from "../support/fixtures.js";

type Raw = Record<ResourceName, Map<string, KubeObject>>;

const empty = (): Raw =>
  Object.fromEntries(WATCHED_RESOURCES.map((r) => [r.name, new Map<string, KubeObject>()])) as Raw;
const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
const put = (m: Map<string, KubeObject>, o: object): void => {
  m.set(key(o as KubeObject), o as KubeObject);
};
const m = (name: string, ip: string) => machine("cp", name, "pool", [ip]) as unknown as KubeObject;
const short = (changes: readonly ObjectChange[]): string[] =>
  changes
    .map(
      (c) =>
        `${c.kind} ${(c.after ?? c.before)?.metadata.name ?? "?"} ${c.before ? "old" : "-"}→${c.after ? "new" : "-"}`,
    )
    .sort();

/** A copy of `raw` with some resources replaced (a snapshot copies only what changed). */
const next = (raw: Raw, changed: Partial<Raw>): Raw => ({ ...raw, ...changed });

describe("buildObserved after a previous snapshot", () => {
  const base = empty();
  for (const n of ["m1", "m3", "m5"]) put(base.machines, m(n, "10.0.0.1"));
  put(base.infras, infra("vlan100"));
  const first = buildObserved(base, 1);

  it("reports every object as added the first time", () => {
    expect(short(first.changes)).toEqual([
      "Infra vlan100 -→new",
      "Machine m1 -→new",
      "Machine m3 -→new",
      "Machine m5 -→new",
    ]);
  });

  it("patches the changed keys only, to the same state as a full build", () => {
    const machines = new Map(base.machines);
    put(machines, m("m2", "10.0.0.2"));
    put(machines, m("m3", "10.0.0.3"));
    machines.delete("cp/m5");
    const raw = next(base, { machines });
    const dirty = new Map<ResourceName, ReadonlySet<string>>([["machines", new Set(["cp/m2", "cp/m3", "cp/m5"])]]);
    const obs: Observed = buildObserved(raw, 2, new WeakMap(), { observed: first, dirty });
    expect(short(obs.changes)).toEqual(["Machine m2 -→new", "Machine m3 old→new", "Machine m5 old→-"]);
    expect(obs.state).toEqual(buildObserved(raw, 2).state);
    // Untouched resources keep their lists (and objects).
    expect(obs.state.infras).toBe(first.state.infras);
    expect(obs.changes.find((c) => c.after?.metadata.name === "m3")?.after).toBe(machines.get("cp/m3"));
  });

  it("without the keys (a re-list), compares the whole resource by identity", () => {
    const machines = new Map(base.machines);
    put(machines, m("m1", "10.0.0.9"));
    const raw = next(base, { machines });
    const obs = buildObserved(raw, 2, new WeakMap(), { observed: first, dirty: new Map([["machines", undefined]]) });
    expect(short(obs.changes)).toEqual(["Machine m1 old→new"]);
    expect(obs.state).toEqual(buildObserved(raw, 2).state);
  });

  it("an Infra the schema refuses is a deletion in the changes and an invalid entry in the state", () => {
    const infras = new Map<string, KubeObject>();
    put(infras, { ...infra("vlan100"), spec: { networkConfig: { cidr: "nope" } } });
    const obs = buildObserved(next(base, { infras }), 2, new WeakMap(), {
      observed: first,
      dirty: new Map([["infras", new Set(["clusters/vlan100"])]]),
    });
    expect(short(obs.changes)).toEqual(["Infra vlan100 old→-"]);
    expect(obs.state.infras).toEqual([]);
    expect(obs.state.invalid?.map((i) => i.ref.name)).toEqual(["vlan100"]);
  });
});

describe("patchSorted", () => {
  it("inserts, replaces and removes by <namespace>/<name>, keeping the order", () => {
    const list = ["a", "c", "e"].map((n) => m(n, "10.0.0.1"));
    const out = patchSorted(list, [
      { kind: "Machine", before: undefined, after: m("d", "10.0.0.4") as never },
      { kind: "Machine", before: list[0] as never, after: undefined },
      { kind: "Machine", before: undefined, after: m("f", "10.0.0.6") as never },
      { kind: "Machine", before: list[1] as never, after: m("c", "10.0.0.3") as never },
    ]);
    expect(out.map((o) => o.metadata?.name ?? "")).toEqual(["c", "d", "e", "f"]);
    expect(list.map((o) => o.metadata?.name)).toEqual(["a", "c", "e"]);
  });
});

describe("buildObserved at the size of 3,000 Infras", () => {
  it("reports 300,000 Machines as added on the first snapshot (more than a call takes as arguments)", () => {
    const raw = empty();
    for (let i = 0; i < 300_000; i++) {
      const name = `m${String(i)}`;
      raw.machines.set(`cp/${name}`, { metadata: { namespace: "cp", name } });
    }
    const obs = buildObserved(raw, 1);
    expect(obs.changes.length).toBe(300_000);
    expect(obs.state.machines.length).toBe(300_000);
  });
});

describe("buildObserved's chunked lists after runs of watch events", () => {
  it("hold what a full build holds, and changesBetween finds the changes the snapshot reported", () => {
    // More Machines than a chunk holds, so that patches cross, split and join chunks.
    const shape = fc.record({
      size: fc.integer({ min: 0, max: 3_000 }),
      steps: fc.array(
        fc.array(fc.tuple(fc.nat(3_999), fc.constantFrom("put", "edit", "delete")), { minLength: 1, maxLength: 200 }),
        { minLength: 1, maxLength: 6 },
      ),
      relist: fc.boolean(),
    });
    fc.assert(
      fc.property(shape, ({ size, steps, relist }) => {
        let raw = empty();
        const name = (i: number): string => `m${String(i).padStart(4, "0")}`;
        for (let i = 0; i < size; i++) put(raw.machines, m(name(i), "10.0.0.1"));
        let obs = buildObserved(raw, 1);
        for (const [n, step] of steps.entries()) {
          const machines = new Map(raw.machines);
          const dirty = new Set<string>();
          for (const [i, what] of step) {
            dirty.add(`cp/${name(i)}`);
            if (what === "delete") machines.delete(`cp/${name(i)}`);
            else put(machines, m(name(i), what === "put" ? "10.0.0.2" : `10.0.1.${String(n)}`));
          }
          raw = next(raw, { machines });
          const previous: PreviousObserved = {
            observed: obs,
            dirty: new Map([["machines", relist ? undefined : dirty]]),
          };
          const after = buildObserved(raw, n + 2, new WeakMap(), previous);
          expect([...after.state.machines]).toEqual([...buildObserved(raw, 1).state.machines]);
          const between = changesBetween(obs.state, after.state);
          expect(short(between)).toEqual(short(after.changes));
          for (const c of between)
            expect(after.changes.some((d) => d.before === c.before && d.after === c.after)).toBe(true);
          obs = after;
        }
      }),
      { numRuns: 60 },
    );
  });
});
