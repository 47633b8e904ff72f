// planSotw and planDelta alone (src/xds/server/plan.ts): what a stream sends next for one type,
// from a real cached snapshot (rendered, encoded) and a client state, without a stream.
// Rules: docs/xds-protocol.md#rule-7 (no empty pushes), #rule-9 (wildcards), #rule-18 (removals).
import fc from "fast-check";
import { describe, expect, test, vi } from "vitest";
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import type { CachedResource, TypeSnapshot } from "../../../src/xds/cache/snapshot.js";
import type { Held } from "../../../src/xds/server/memory.js";
import {
  ABSENT,
  incrementalInSotw,
  isQuiet,
  markQuiet,
  NOTHING,
  onlyAdded,
  planDelta,
  planSotw,
  waitingFor,
  type TypeState,
} from "../../../src/xds/server/plan.js";
import { HeldMap } from "../../../src/xds/server/held-map.js";
import { typeState } from "./plan-fixtures.js";
import { Subscription } from "../../../src/xds/server/subscription.js";
import {
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
} from "../../../src/xds/resource/type-urls.js";
import { ALPHA, BETA, GAMMA } from "../../envoy/proxy-fixture.js";
import { GROUP, publish, rendered } from "./fixtures.js";
import { countWalks } from "../../support/walks.js";
import { checkEnvoySnapshot } from "../../../src/envoy/snapshot.js";
import { holdingAll, keysOf, snapshotFor, typeOf } from "./plan-fixtures.js";

function clusters(): TypeSnapshot {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  publish(cache, GROUP, rendered([ALPHA, BETA]));
  const cds = cache.getSnapshot(GROUP)?.types.get(CLUSTER_TYPE_URL);
  if (cds === undefined) throw new Error("no CDS in the snapshot");
  return cds;
}

const CDS = clusters();
const NAMES = [...CDS.resources.keys()].sort();
const [A = "", B = ""] = NAMES;

const state = (subscription: Subscription, held?: ReadonlyMap<string, Held>): TypeState =>
  typeState(CLUSTER_TYPE_URL, subscription, held);

const sotw = (names: readonly string[]): Subscription => Subscription.NONE.sotw(names, true, true).subscription;
const delta = (names: readonly string[]): Subscription => Subscription.NONE.delta(names, [], true, true).subscription;
const holding = (names: readonly string[]): Map<string, Held> =>
  new Map(names.map((n) => [n, { version: CDS.resources.get(n)?.version ?? "", res: CDS.resources.get(n) }]));
const sorted = (rs: readonly CachedResource[]): string[] => rs.map((r) => r.name).sort();

describe("planSotw: the full subscribed set, only when it differs from what was sent", () => {
  test("the snapshot holds at least two clusters to subscribe apart", () => {
    expect(NAMES.length).toBeGreaterThanOrEqual(2);
  });

  test("a wildcard first request gets every resource, at the type's version", () => {
    const plan = planSotw(state(sotw([])), CDS, NOTHING);
    expect(plan?.version).toBe(CDS.version);
    expect([...(plan?.next.keys() ?? [])].sort()).toEqual(NAMES);
    expect([plan?.count, plan?.removed]).toEqual([NAMES.length, []]);
    // Each resource's entry, in name order: its head, then its Any bytes.
    expect(plan?.entries).toEqual([...CDS.resources.values()].flatMap((r) => r.sotwEntry));
  });

  test("explicit names get only those; an unknown name is left out", () => {
    const plan = planSotw(state(sotw([A, "no-such-cluster"])), CDS, NOTHING);
    expect([...(plan?.next.keys() ?? [])]).toEqual([A]);
    expect(sorted(plan?.changed ?? [])).toEqual([A]);
  });

  test("rule 7: the client already holds exactly this at this version: no response", () => {
    const ts = { ...state(sotw([])), held: holding(NAMES), firstPending: false, lastVersion: CDS.version };
    expect(planSotw(ts, CDS, NOTHING)).toBeUndefined();
  });

  test("the first request is answered even when the client already holds everything", () => {
    const ts = { ...state(sotw([])), held: holding(NAMES), lastVersion: CDS.version };
    const plan = planSotw(ts, CDS, NOTHING);
    expect([plan?.count, plan?.changed.length]).toEqual([NAMES.length, 0]);
  });

  test("a narrowed subscription is answered at the current version, then the flag is spent", () => {
    const ts = { ...state(sotw([A])), held: holding([A]), firstPending: false, lastVersion: "old", narrowed: true };
    expect(planSotw(ts, CDS, NOTHING)?.version).toBe(CDS.version);
    expect(ts.narrowed).toBe(false);
  });

  test("no snapshot of the type: an empty response at the version the cache gives an empty type", () => {
    const empty = typeOf(snapshotFor([GAMMA]), ROUTE_TYPE_URL);
    expect(empty.resources.size).toBe(0);
    const plan = planSotw(state(sotw([])), undefined, NOTHING);
    expect([plan?.count, plan?.next.size]).toEqual([0, 0]);
    expect(plan?.version).toBe(empty.version);
    expect(planDelta(state(delta([A])), undefined, NOTHING)?.version).toBe(empty.version);
  });
});

// Rule 14 (docs/xds-protocol.md#rule-14): clusters gone from the snapshot that the client's
// listeners still use are sent on in the full SotW set; rule 2: that set is other content than the
// snapshot's, so it has a version of its own.
describe("planSotw with retained resources: the subscribed set plus what is kept, at a version of its own", () => {
  const cdsOf = (attachments: Parameters<typeof snapshotFor>[0]) => typeOf(snapshotFor(attachments), CLUSTER_TYPE_URL);
  const [cdsAB, cdsA, cdsAG] = [cdsOf([ALPHA, BETA]), cdsOf([ALPHA]), cdsOf([ALPHA, GAMMA])];
  const betas = [...cdsAB.resources.values()].filter((r) => !cdsA.resources.has(r.name));
  const [betaApi] = betas.filter((r) => r.name.includes("kube-apiserver"));
  const retainedBeta = new Map(betas.map((r) => [r.name, r]));
  const retainedApi = new Map(betaApi ? [[betaApi.name, betaApi]] : []);
  /** A client holding alpha's and beta's clusters asks again (a first request is always answered). */
  const asked = (subscription: Subscription): TypeState => ({
    ...state(subscription, holdingAll(cdsAB.resources.values())),
    lastVersion: cdsAB.version,
  });

  test("the fixture: beta's four clusters are gone from alpha's snapshot, and from alpha and gamma's", () => {
    expect([betas.length, betas.some((r) => cdsAG.resources.has(r.name)), retainedApi.size]).toEqual([4, false, 1]);
  });

  test("every cluster of the snapshot and every kept one, at a version that is neither the snapshot's nor empty", () => {
    const plan = planSotw(asked(sotw([])), cdsA, retainedBeta);
    expect(keysOf(plan?.next ?? new Map())).toEqual([...cdsA.resources.keys(), ...retainedBeta.keys()].sort());
    expect(plan?.count).toBe(cdsA.resources.size + 4);
    expect(plan?.entries).toHaveLength(2 * (cdsA.resources.size + 4));
    expect(plan?.version).not.toBe(cdsA.version);
    expect(plan?.version).not.toBe(cdsAB.version);
    expect(plan?.version).not.toBe("");
  });

  test("rule 7: the client already holds the snapshot's clusters and the kept ones: no response", () => {
    expect(planSotw({ ...asked(sotw([])), firstPending: false }, cdsA, retainedBeta)).toBeUndefined();
  });

  test("the version changes with the snapshot and with what is kept, and only then", () => {
    const version = (snap: TypeSnapshot, retained: ReadonlyMap<string, CachedResource>) =>
      planSotw(asked(sotw([])), snap, retained)?.version;
    const v = version(cdsA, retainedBeta);
    expect(version(cdsA, retainedBeta)).toBe(v);
    expect(version(cdsAG, retainedBeta)).not.toBe(v);
    expect(version(cdsA, retainedApi)).not.toBe(v);
  });

  test("no snapshot of the type: what is kept is still sent", () => {
    const plan = planSotw(asked(sotw([])), undefined, retainedBeta);
    expect(keysOf(plan?.next ?? new Map())).toEqual([...retainedBeta.keys()].sort());
    expect(plan?.version).not.toBe("");
  });

  test("by name: the client holds exactly the names it subscribed, even when they number as many as the snapshot", () => {
    const [dropped = ""] = cdsA.resources.keys();
    const names = [...[...cdsA.resources.keys()].filter((n) => n !== dropped), betaApi?.name ?? ""];
    expect(names.length).toBe(cdsA.resources.size);
    const plan = planSotw(asked(sotw(names)), cdsA, retainedApi);
    expect(keysOf(plan?.next ?? new Map())).toEqual([...names].sort());
    expect(plan?.next.get(betaApi?.name ?? "")?.res).toBe(betaApi);
  });
});

// Rule 12 (docs/xds-protocol.md#rule-12): a SotW LDS or CDS response is the full set, absence is
// deletion; EDS and RDS are named, and a name left out of a response is not deleted on the client.
test.each([
  [LISTENER_TYPE_URL, false],
  [CLUSTER_TYPE_URL, false],
  [ENDPOINT_TYPE_URL, true],
  [ROUTE_TYPE_URL, true],
  ["type.googleapis.com/some.other.Type", false],
])("incrementalInSotw(%s): %s", (typeUrl, incremental) => {
  expect(incrementalInSotw(typeUrl)).toBe(incremental);
});

describe("planDelta: only what differs from what the client holds", () => {
  test("a wildcard first request gets every resource", () => {
    const plan = planDelta(state(delta([])), CDS, NOTHING);
    expect(sorted(plan?.changed ?? [])).toEqual(NAMES);
    expect(plan?.removed).toEqual([]);
  });

  test("a held resource at its version is not sent again", () => {
    const plan = planDelta(state(delta([]), holding([A])), CDS, NOTHING);
    expect(sorted(plan?.changed ?? [])).toEqual(NAMES.filter((n) => n !== A));
  });

  test("rule 18: an explicitly subscribed name that does not exist is removed, once", () => {
    const ts = state(delta([A, "no-such-cluster"]));
    const plan = planDelta(ts, CDS, NOTHING);
    expect(sorted(plan?.changed ?? [])).toEqual([A]);
    expect(plan?.removed).toEqual(["no-such-cluster"]);
    expect(plan?.next.get("no-such-cluster")).toEqual(ABSENT);
    const after = { ...ts, held: plan?.next ?? new Map<string, Held>(), firstPending: false };
    expect(planDelta(after, CDS, NOTHING)).toBeUndefined();
  });

  test("under the wildcard, a held resource gone from the snapshot is removed", () => {
    const held = new Map([...holding(NAMES), ["gone", { version: "v-gone", res: undefined }]]);
    const plan = planDelta({ ...state(delta([]), held), firstPending: false }, CDS, NOTHING);
    expect(plan?.removed).toEqual(["gone"]);
    expect(plan?.changed).toEqual([]);
    expect(plan?.next.has("gone")).toBe(false);
  });

  test("a reconnect that holds everything (resyncOnly) gets nothing, and the first request is settled", () => {
    const ts = { ...state(delta([]), holding(NAMES)), resyncOnly: true };
    expect(planDelta(ts, CDS, NOTHING)).toBeUndefined();
    expect(ts.firstPending).toBe(false);
  });

  test("a fresh stream's first request is answered even with nothing to send", () => {
    const plan = planDelta(state(delta(["no-such-cluster"]), new Map([["no-such-cluster", ABSENT]])), CDS, NOTHING);
    expect([plan?.count, plan?.removed]).toEqual([0, []]);
  });

  test("resources and removals come sorted by name, whatever order they were subscribed in", () => {
    const plan = planDelta(state(delta([B, "zz-missing", A, "aa-missing"])), CDS, NOTHING);
    expect(plan?.changed.map((r) => r.name)).toEqual([A, B]);
    expect(plan?.entries).toEqual(plan?.changed.flatMap((r) => r.deltaEntry));
    expect(plan?.removed).toEqual(["aa-missing", "zz-missing"]);
  });

  test("under the wildcard, a name told absent and then unsubscribed is forgotten, without a response", () => {
    const told = Subscription.NONE.delta(["*", "no-such-cluster"], [], true, false).subscription;
    const unsubscribed = told.delta([], ["no-such-cluster"], false, false).subscription;
    const ts = {
      ...state(unsubscribed, new Map([...holding(NAMES), ["no-such-cluster", ABSENT]])),
      firstPending: false,
    };
    expect(planDelta(ts, CDS, NOTHING)).toBeUndefined();
    expect([...ts.held.keys()].sort()).toEqual(NAMES);
  });

  test("by name, a name unsubscribed and gone from the snapshot is forgotten, not reported removed", () => {
    const held = new Map([...holding([A]), ["gone", { version: "v-gone", res: undefined }]]);
    const ts = { ...state(delta([A]), held), firstPending: false };
    expect(planDelta(ts, CDS, NOTHING)).toBeUndefined();
    expect([...ts.held.keys()]).toEqual([A]);
  });

  test("explicit names beside the wildcard are not sent twice", () => {
    const plan = planDelta(state(Subscription.NONE.delta(["*", B], [], true, false).subscription), CDS, NOTHING);
    expect(sorted(plan?.changed ?? [])).toEqual(NAMES);
  });
});

describe("held state is shared between streams, not copied per stream", () => {
  test("two streams holding every resource share one map; a partial one shares the resources' Held objects", () => {
    const first = planSotw(state(sotw([])), CDS, NOTHING);
    const second = planSotw(state(sotw([])), CDS, NOTHING);
    const byName = planSotw(state(sotw(NAMES)), CDS, NOTHING);
    expect(first?.next).toBeDefined();
    expect(second?.next).toBe(first?.next);
    expect(byName?.next).toBe(first?.next); // every name subscribed: the same set
    const partial = planSotw(state(sotw([A])), CDS, NOTHING);
    expect([...(partial?.next.keys() ?? [])]).toEqual([A]);
    expect(partial?.next).not.toBe(first?.next);
    expect(partial?.next.get(A)).toBe(first?.next.get(A));
    expect(partial?.next.get(A)).toStrictEqual({ version: CDS.resources.get(A)?.version, res: CDS.resources.get(A) });
  });

  test("a plan that finds nothing to send or forget keeps the held map, instead of a copy per plan", () => {
    const ts = { ...state(delta([A, B]), holding([A, B])), firstPending: false };
    const before = ts.held;
    expect(planDelta(ts, CDS, NOTHING)).toBeUndefined();
    expect(ts.held).toBe(before);
  });

  test("a Delta stream that ends up holding everything shares the map too; one with a removal does not", () => {
    const full = planDelta(state(delta([])), CDS, NOTHING);
    expect(full?.next).toBe(planSotw(state(sotw([])), CDS, NOTHING)?.next);
    const missing = planDelta(state(delta([A, "gone"])), CDS, NOTHING);
    expect(missing?.removed).toEqual(["gone"]);
    expect(missing?.next.get("gone")).toBe(ABSENT);
    expect(missing?.next.get(A)).toBe(full?.next.get(A));
  });
});

// A stream holding the type snapshot's shared map is answered without walking the type (the
// pumps of a change and of its ACKs on every stream, issue 16): only while nothing is due.
describe("holding exactly the snapshot: nothing to send, unless something is due", () => {
  const whole = (): ReadonlyMap<string, Held> => {
    const next = planSotw(state(sotw([])), CDS, NOTHING)?.next;
    if (next === undefined) throw new Error("no first plan");
    return next;
  };
  const settled = (subscription: Subscription): TypeState => ({
    ...state(subscription, whole()),
    firstPending: false,
    subscriptionChanged: false,
    lastVersion: CDS.version,
  });

  test("SotW wildcard or every name, at the type's version: no response", () => {
    expect(planSotw(settled(sotw([])), CDS, NOTHING)).toBeUndefined();
    expect(planSotw(settled(sotw(NAMES)), CDS, NOTHING)).toBeUndefined();
  });

  test("SotW: fewer names than the snapshot holds get the smaller set", () => {
    const plan = planSotw(settled(sotw([A])), CDS, NOTHING);
    expect([...(plan?.next.keys() ?? [])]).toEqual([A]);
  });

  test("SotW: a client behind the version (it was sent a version with retained resources) is told", () => {
    const plan = planSotw({ ...settled(sotw([])), lastVersion: `${CDS.version}+0123` }, CDS, NOTHING);
    expect(plan?.version).toBe(CDS.version);
    expect(plan?.count).toBe(NAMES.length);
  });

  test("SotW: a narrowed subscription is answered", () => {
    expect(planSotw({ ...settled(sotw([])), narrowed: true }, CDS, NOTHING)).toBeUndefined();
    expect(planSotw({ ...settled(sotw(NAMES)), narrowed: true, lastVersion: "older" }, CDS, NOTHING)?.count).toBe(
      NAMES.length,
    );
  });

  test("the next snapshot is walked: under the Delta wildcard a resource gone from it is removed", () => {
    const gone = { ...CDS, resources: new Map([...CDS.resources].filter(([n]) => n !== B)) };
    expect(planDelta(settled(delta([])), gone, NOTHING)?.removed).toEqual([B]);
    expect(planSotw(settled(sotw([])), gone, NOTHING)?.count).toBe(NAMES.length - 1);
  });

  test("Delta: holding everything, no response; an explicitly subscribed name that does not exist is removed", () => {
    expect(planDelta(settled(delta([])), CDS, NOTHING)).toBeUndefined();
    expect(planDelta(settled(delta(NAMES)), CDS, NOTHING)).toBeUndefined();
    const plan = planDelta(settled(delta([A, "no-such-cluster"])), CDS, NOTHING);
    expect(plan?.removed).toEqual(["no-such-cluster"]);
  });

  test("a first request is answered even when the client holds everything", () => {
    expect(planSotw({ ...settled(sotw([])), firstPending: true }, CDS, NOTHING)?.count).toBe(NAMES.length);
    expect(planDelta({ ...settled(delta([])), firstPending: true }, CDS, NOTHING)).toBeDefined();
  });
});

// Rules 15, 16 (docs/xds-protocol.md#rule-16): a changed listener waits for the clusters it uses to
// be ACKed, and for their endpoints. The answer is kept per listener for the client state it was
// given (the streams of one change share those state objects): other state, another answer.
describe("waitingFor: what a changed listener waits for, for the client state it is asked about", () => {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  publish(cache, GROUP, rendered([ALPHA, BETA]));
  const snap = cache.getSnapshot(GROUP);
  const typeOf = (t: string): TypeSnapshot => {
    const ts = snap?.types.get(t);
    if (ts === undefined) throw new Error(`no ${t}`);
    return ts;
  };
  const [lds, cds, eds] = [LISTENER_TYPE_URL, CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL].map(typeOf);
  const listeners = [...(lds?.resources.values() ?? [])];
  const all = (t: TypeSnapshot | undefined) =>
    new Map(
      [...(t?.resources ?? new Map<string, CachedResource>())].map(([n, r]) => [n, { version: r.version, res: r }]),
    );
  const typeState = (typeUrl: string, subscription: Subscription, held: ReadonlyMap<string, Held>): TypeState => ({
    ...state(subscription, held),
    typeUrl,
  });
  const wildcard = sotw([]);
  const listener = typeState(LISTENER_TYPE_URL, wildcard, new Map());

  test("the listeners use EDS clusters (so all three answers below are reachable)", () => {
    expect(listeners.some((l) => l.references.clusters.length > 0)).toBe(true);
    expect([...(cds?.resources.values() ?? [])].some((c) => c.references.endpoints !== undefined)).toBe(true);
  });

  test("clusters not ACKed, then ACKed without their endpoints, then both; the first state again", () => {
    const nothing = [typeState(CLUSTER_TYPE_URL, wildcard, new Map())];
    expect(waitingFor(listener, listeners, nothing)).toMatch(/^cluster ".*" to be acknowledged$/);
    const clustersAcked = typeState(CLUSTER_TYPE_URL, wildcard, all(cds));
    const edsNames = sotw([...(eds?.resources.keys() ?? [])]);
    const noEndpoints = [clustersAcked, typeState(ENDPOINT_TYPE_URL, edsNames, new Map())];
    expect(waitingFor(listener, listeners, noEndpoints)).toMatch(/^endpoints ".*" to be acknowledged$/);
    const ready = [clustersAcked, typeState(ENDPOINT_TYPE_URL, edsNames, all(eds))];
    expect(waitingFor(listener, listeners, ready)).toBeUndefined();
    expect(waitingFor(listener, listeners, [clustersAcked])).toBeUndefined(); // no EDS on this stream
    expect(waitingFor(listener, listeners, nothing)).toMatch(/to be acknowledged$/);
    // Sent but not yet ACKed: still waiting.
    const sentOnly = { ...clustersAcked, acked: new Map<string, Held>() };
    expect(waitingFor(listener, listeners, [sentOnly])).toMatch(/^cluster /);
  });
});

// A type whose plan found nothing is not planned again until one of its inputs moves.
describe("isQuiet / markQuiet: nothing to send until an input moves", () => {
  const quietState = (): TypeState => {
    const ts = { ...state(delta([A, B]), holding([A, B])), firstPending: false };
    expect(planDelta(ts, CDS, NOTHING)).toBeUndefined();
    markQuiet(ts, CDS, NOTHING);
    return ts;
  };

  test("the same snapshot, held map and subscription: quiet", () => {
    expect(isQuiet(quietState(), CDS)).toBe(true);
  });

  test.each<[string, (ts: TypeState) => TypeSnapshot | undefined]>([
    ["another type snapshot", () => ({ ...CDS })],
    ["no snapshot", () => undefined],
    [
      "a new held map",
      (ts) => {
        ts.held = new Map(ts.held);
        return CDS;
      },
    ],
    [
      "a new subscription",
      (ts) => {
        ts.subscription = delta([A]);
        return CDS;
      },
    ],
    [
      "a first request pending",
      (ts) => {
        ts.firstPending = true;
        return CDS;
      },
    ],
    [
      "a narrowed subscription",
      (ts) => {
        ts.narrowed = true;
        return CDS;
      },
    ],
  ])("%s: planned again", (_name, move) => {
    const ts = quietState();
    expect(isQuiet(ts, move(ts))).toBe(false);
  });

  test("not marked while something is retained, or something held is gone from the snapshot", () => {
    const retained = quietState();
    markQuiet(retained, CDS, new Map([[A, CDS.resources.get(A) as CachedResource]]));
    expect(isQuiet(retained, CDS)).toBe(false);
    const gone = {
      ...quietState(),
      held: new Map([...holding([A]), ["gone", { version: "v", res: CDS.resources.get(B) }]]),
    };
    markQuiet(gone, CDS, NOTHING);
    expect(isQuiet(gone, CDS)).toBe(false);
  });
});

// Issue 25, row 9: a Delta stream that adds a name per request must not cost its whole
// subscription per request. After a quiet plan, a request that only adds names is planned from
// those names alone; the answer is the one the full walk gives.
describe("planDelta after a request that only added names: those names alone", () => {
  /** A stream of `sub` that was sent its answer and found quiet, then subscribed `more`. */
  const added = (sub: Subscription, more: readonly string[]): TypeState => {
    const ts = state(sub);
    const first = planDelta(ts, CDS, NOTHING);
    if (first !== undefined) ts.held = first.next;
    ts.firstPending = false;
    markQuiet(ts, CDS, NOTHING);
    const change = ts.subscription.delta(more, [], false, true);
    ts.subscription = change.subscription;
    ts.addedSinceQuiet = new Set(change.addedNames);
    return ts;
  };
  const made = (n: number): string => `made-up-${String(n)}`;
  const names = fc.oneof(fc.constantFrom(...NAMES), fc.nat(600).map(made));
  const projection = (plan: ReturnType<typeof planDelta>) =>
    plan && {
      version: plan.version,
      changed: plan.changed.map((r) => r.name),
      removed: plan.removed,
      next: [...plan.next].sort(([a], [b]) => a.localeCompare(b)),
    };

  test("the answer equals the full walk's, with and without the wildcard, small and large", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(names, { maxLength: 400 }),
        fc.array(names, { minLength: 1, maxLength: 5 }),
        (wildcard, before, more) => {
          const sub = Subscription.NONE.delta(wildcard ? ["*", ...before] : before, [], true, false).subscription;
          const ts = added(sub, more);
          expect(onlyAdded(ts, CDS)).toBeDefined();
          const full = planDelta({ ...ts, addedSinceQuiet: undefined }, CDS, NOTHING);
          expect(projection(planDelta(ts, CDS, NOTHING))).toEqual(projection(full));
        },
      ),
      { seed: 9, numRuns: 80 },
    );
  });

  test("one more name on a stream of 5,000: one lookup, no walk of what the stream holds, the held map extended", () => {
    const many = Array.from({ length: 4999 }, (_, i) => made(i));
    // The first addition turns the stream's held map into a HeldMap (one copy); the next ones extend it.
    const ts = added(delta(many), [made(4999)]);
    ts.held = planDelta(ts, CDS, NOTHING)?.next ?? ts.held;
    markQuiet(ts, CDS, NOTHING, true);
    const change = ts.subscription.delta([made(5000)], [], false, true);
    ts.subscription = change.subscription;
    ts.addedSinceQuiet = new Set(change.addedNames);
    const before = ts.held;
    expect([before.size, before instanceof HeldMap]).toEqual([5000, true]);
    // Walks of anything as large as the subscription (the added names' own set is one long).
    const counted = countWalks(100);
    const lookups = vi.spyOn(HeldMap.prototype, "get");
    try {
      const plan = planDelta(ts, CDS, NOTHING);
      expect(plan?.removed).toEqual([made(5000)]);
      expect(counted.walks).toBe(0);
      expect(lookups.mock.calls.length).toBe(1);
      expect([plan?.next.size, before.size]).toEqual([5001, 5000]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("not after an unsubscription, a new snapshot or a new held map", () => {
    const sub = delta([A]);
    const unsubscribed = added(sub, [B]);
    expect(onlyAdded(unsubscribed, { ...CDS })).toBeUndefined();
    unsubscribed.held = new Map(unsubscribed.held);
    expect(onlyAdded(unsubscribed, CDS)).toBeUndefined();
    const quiet = added(delta([A]), []);
    markQuiet(quiet, CDS, NOTHING);
    expect(onlyAdded(quiet, CDS)).toBeUndefined();
  });
});
