// The cost shortcuts of src/xds/server/plan.ts give the full walk's answer, and skip the walk: a
// stream holding the type snapshot's shared map (holdsExactly, with namesWithin's memo per
// subscription and snapshot), and a Delta request that only added names (planAdded). The oracle
// is the same plan on an equivalent state the shortcut does not apply to (a copy of the held map,
// or no record of what was added), never a helper of plan.ts.
import { afterEach, describe, expect, test, vi } from "vitest";
import type { TypeSnapshot } from "../../../src/xds/cache/snapshot.js";
import type { Held } from "../../../src/xds/server/memory.js";
import { HeldMap } from "../../../src/xds/server/held-map.js";
import {
  ABSENT,
  markQuiet,
  NOTHING,
  onlyAdded,
  planDelta,
  planSotw,
  type Plan,
  type TypeState,
} from "../../../src/xds/server/plan.js";
import type { Subscription } from "../../../src/xds/server/subscription.js";
import { CLUSTER_TYPE_URL } from "../../../src/xds/resource/type-urls.js";
import { ALPHA, BETA } from "../../envoy/proxy-fixture.js";
import { countWalks } from "../../support/walks.js";
import { delta, keysOf, snapshotFor, sotw, typeOf, typeState } from "./plan-fixtures.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const CDS = typeOf(snapshotFor([ALPHA, BETA]), CLUSTER_TYPE_URL);
const NAMES = [...CDS.resources.keys()].sort();
const [A = "", B = ""] = NAMES;
const WITHOUT_B: TypeSnapshot = { ...CDS, resources: new Map([...CDS.resources].filter(([n]) => n !== B)) };

/** The map a stream holding every resource of `snap` shares with the others: a wildcard stream's first answer. */
function sharedMap(snap: TypeSnapshot): ReadonlyMap<string, Held> {
  const next = planSotw(typeState(CLUSTER_TYPE_URL, sotw([])), snap, NOTHING)?.next;
  if (next === undefined) throw new Error("no first answer");
  return next;
}

/** A stream that was answered with `held` at the snapshot's version and has nothing pending. */
const settled = (subscription: Subscription, held: ReadonlyMap<string, Held>, more: Partial<TypeState> = {}) => ({
  ...typeState(CLUSTER_TYPE_URL, subscription, held),
  firstPending: false,
  subscriptionChanged: false,
  lastVersion: CDS.version,
  ...more,
});

/** What a plan tells the client and what it leaves the client holding (by content). */
const projection = (plan: Plan | undefined) =>
  plan && {
    version: plan.version,
    changed: plan.changed.map((r) => r.name),
    removed: plan.removed,
    count: plan.count,
    next: [...plan.next]
      .map(([n, h]) => [n, h.version, h.res?.version])
      .sort(([x], [y]) => String(x).localeCompare(String(y))),
  };
/** The state a plan leaves behind, by content. */
const after = (ts: TypeState) => ({
  narrowed: ts.narrowed,
  firstPending: ts.firstPending,
  held: [...ts.held].map(([n, h]) => [n, h.version]).sort(([x], [y]) => String(x).localeCompare(String(y))),
});

describe("holding the snapshot's shared map: the full walk's answer, without the walk", () => {
  const subscriptions: [string, "sotw" | "delta", Subscription][] = [
    ["SotW wildcard", "sotw", sotw([])],
    ["SotW, every name", "sotw", sotw(NAMES)],
    ["Delta wildcard", "delta", delta([])],
    ["Delta, every name", "delta", delta(NAMES)],
  ];

  test.each(subscriptions)("%s, nothing due: no response, and nothing as large as the type is walked", (_, p, sub) => {
    const plan = p === "sotw" ? planSotw : planDelta;
    const held = sharedMap(CDS);
    // The first stream of a subscription and snapshot checks the names once; no stream after it does.
    expect(plan(settled(sub, held), CDS, NOTHING)).toBeUndefined();
    const counted = countWalks(NAMES.length - 1);
    expect(plan(settled(sub, held), CDS, NOTHING)).toBeUndefined();
    expect(counted.walks).toBe(0);
  });

  test("a narrowed SotW request that changes nothing: no response, and the flag is spent as on the full walk", () => {
    const ts = settled(sotw([]), sharedMap(CDS), { narrowed: true });
    expect(planSotw(ts, CDS, NOTHING)).toBeUndefined();
    expect(ts.narrowed).toBe(false);
  });

  // Every combination of what is due: the stream holding the shared map answers as one holding a copy.
  const cases = (): [string, "sotw" | "delta", Subscription, Partial<TypeState>, TypeSnapshot][] => {
    const out: [string, "sotw" | "delta", Subscription, Partial<TypeState>, TypeSnapshot][] = [];
    const subs: [string, (names: readonly string[]) => Subscription][] = [
      ["sotw", sotw],
      ["delta", delta],
    ];
    for (const [protocol, make] of subs) {
      const p = protocol as "sotw" | "delta";
      const named: [string, Subscription][] = [
        ["wildcard", make([])],
        ["every name", make(NAMES)],
        ["one name", make([A])],
        ["every name and a missing one", make([...NAMES, "no-such-cluster"])],
        ["wildcard and one name", make(["*", A])],
      ];
      for (const [subName, sub] of named) {
        for (const firstPending of [false, true]) {
          for (const narrowed of [false, true]) {
            for (const lastVersion of [CDS.version, "an-older-version", `${CDS.version}+retained`]) {
              for (const resyncOnly of [false, true]) {
                for (const [snapName, snap] of [
                  ["the same snapshot", CDS],
                  ["B gone", WITHOUT_B],
                ] as const) {
                  const name = `${protocol}, ${subName}, first ${String(firstPending)}, narrowed ${String(narrowed)}, last ${lastVersion}, resync ${String(resyncOnly)}, ${snapName}`;
                  out.push([name, p, sub, { firstPending, narrowed, lastVersion, resyncOnly }, snap]);
                }
              }
            }
          }
        }
      }
    }
    return out;
  };

  test("every combination of first request, narrowing, last version and snapshot: the answer of a stream holding a copy", () => {
    const held = sharedMap(CDS);
    for (const [name, p, sub, more, snap] of cases()) {
      const plan = p === "sotw" ? planSotw : planDelta;
      const short = settled(sub, held, more);
      const full = settled(sub, new Map(held), more);
      expect(projection(plan(short, snap, NOTHING)), name).toEqual(projection(plan(full, snap, NOTHING)));
      expect(after(short), name).toEqual(after(full));
    }
  });

  test("a Delta stream holding as many names as the snapshot, but not the same ones, is not taken to hold it", () => {
    const plan = planDelta(typeState(CLUSTER_TYPE_URL, delta([...NAMES.filter((n) => n !== B), "gone"])), CDS, NOTHING);
    expect(plan?.next.size).toBe(CDS.resources.size);
    expect(keysOf(plan?.next ?? new Map())).toEqual([...NAMES.filter((n) => n !== B), "gone"].sort());
    expect(plan?.next.get("gone")).toBe(ABSENT);
  });
});

// Issue 25, row 9: a Delta request that only adds names costs what it adds (planAdded).
describe("planDelta after a request that only added names: the full walk's answer", () => {
  /** A Delta stream of `names`, answered, holding `extra` besides, found quiet; then `more` subscribed. */
  const quietThenAdded = (
    names: readonly string[],
    more: readonly string[],
    extra: readonly (readonly [string, Held])[] = [],
  ): TypeState => {
    const ts = typeState(CLUSTER_TYPE_URL, delta(names));
    const first = planDelta(ts, CDS, NOTHING);
    ts.held = new Map([...(first?.next ?? ts.held), ...extra]);
    ts.firstPending = false;
    markQuiet(ts, CDS, NOTHING);
    const change = ts.subscription.delta(more, [], false, true);
    ts.subscription = change.subscription;
    ts.addedSinceQuiet = new Set(change.addedNames);
    if (onlyAdded(ts, CDS) === undefined) throw new Error("not a request that only added names");
    return ts;
  };
  const fullWalk = (ts: TypeState): Plan | undefined => planDelta({ ...ts, addedSinceQuiet: undefined }, CDS, NOTHING);

  test("resources and removals come sorted by name, whatever order they were subscribed in", () => {
    const ts = quietThenAdded(["m-missing"], [B, "zz-missing", A, "aa-missing"]);
    const plan = planDelta(ts, CDS, NOTHING);
    expect(plan?.changed.map((r) => r.name)).toEqual([A, B]);
    expect(plan?.removed).toEqual(["aa-missing", "zz-missing"]);
    expect(projection(plan)).toEqual(projection(fullWalk(ts)));
  });

  test("a name the client already holds, at this version or as absent, is not sent again", () => {
    // The wildcard gave it A; it was told "missing" does not exist.
    const ts = quietThenAdded([], [A, "missing"], [["missing", ABSENT]]);
    const held = ts.held.get(A);
    expect(held?.version).toBe(CDS.resources.get(A)?.version);
    expect(fullWalk(ts)).toBeUndefined();
    expect(planDelta(ts, CDS, NOTHING)).toBeUndefined();
  });

  test("from 256 names on, the held map is extended (a HeldMap), below that copied; the same content either way", () => {
    const missing = (n: number): string[] =>
      Array.from({ length: n }, (_, i) => `missing-${String(i).padStart(3, "0")}`);
    for (const [held, extended] of [
      [255, true],
      [254, false],
    ] as const) {
      const ts = quietThenAdded(missing(held), ["one-more"]);
      expect(ts.held.size).toBe(held);
      const plan = planDelta(ts, CDS, NOTHING);
      expect([plan?.next.size, plan?.next instanceof HeldMap], String(held)).toEqual([held + 1, extended]);
      expect(projection(plan)).toEqual(projection(fullWalk(ts)));
    }
  });
});
