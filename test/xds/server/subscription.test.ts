// The Subscription type alone (src/xds/server/subscription.ts): one row per subscription rule of
// docs/xds-protocol.md#rule-9 and #rule-19, without a stream.
// https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#how-the-client-specifies-what-resources-to-return
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, test } from "vitest";
import { internedContents, Subscription, type SubscriptionChange } from "../../../src/xds/server/subscription.js";

type Step =
  | { readonly sotw: readonly string[] }
  | { readonly subscribe: readonly string[]; readonly unsubscribe?: readonly string[] };

interface Row {
  readonly name: string;
  /** The type allows the legacy wildcard (LDS, CDS; not EDS, RDS). */
  readonly legacyAllowed: boolean;
  readonly steps: readonly Step[];
  /** After the last step. */
  readonly wildcard: boolean;
  readonly names: readonly string[];
  /** added/narrowed of each step. */
  readonly changes: readonly (readonly [added: boolean, narrowed: boolean])[];
}

const rows: readonly Row[] = [
  // SotW: each request replaces the subscription.
  {
    name: "SotW LDS: an empty first request is the legacy wildcard",
    legacyAllowed: true,
    steps: [{ sotw: [] }],
    wildcard: true,
    names: [],
    changes: [[true, false]],
  },
  {
    name: "SotW EDS: an empty first request subscribes to nothing",
    legacyAllowed: false,
    steps: [{ sotw: [] }],
    wildcard: false,
    names: [],
    changes: [[false, false]],
  },
  {
    name: "SotW: a legacy wildcard stays wildcard on later empty requests (an ACK)",
    legacyAllowed: true,
    steps: [{ sotw: [] }, { sotw: [] }],
    wildcard: true,
    names: [],
    changes: [
      [true, false],
      [false, false],
    ],
  },
  {
    name: "SotW: names after a legacy wildcard end it; a later empty request is no wildcard again",
    legacyAllowed: true,
    steps: [{ sotw: [] }, { sotw: ["a"] }, { sotw: [] }],
    wildcard: false,
    names: [],
    changes: [
      [true, false],
      [true, true],
      [false, true],
    ],
  },
  {
    name: 'SotW: "*" is the explicit wildcard, beside explicit names',
    legacyAllowed: false,
    steps: [{ sotw: ["*", "b"] }],
    wildcard: true,
    names: ["b"],
    changes: [[true, false]],
  },
  {
    name: "SotW: the names replace the previous ones (b dropped, c added)",
    legacyAllowed: false,
    steps: [{ sotw: ["a", "b"] }, { sotw: ["a", "c"] }],
    wildcard: false,
    names: ["a", "c"],
    changes: [
      [true, false],
      [true, true],
    ],
  },
  {
    name: "SotW: the same names again change nothing",
    legacyAllowed: false,
    steps: [{ sotw: ["a"] }, { sotw: ["a"] }],
    wildcard: false,
    names: ["a"],
    changes: [
      [true, false],
      [false, false],
    ],
  },
  {
    name: 'SotW: dropping "*" narrows',
    legacyAllowed: true,
    steps: [{ sotw: ["*"] }, { sotw: ["a"] }],
    wildcard: false,
    names: ["a"],
    changes: [
      [true, false],
      [true, true],
    ],
  },
  {
    // Legacy wildcard only while every request was empty; after an explicit "*", an empty request is none.
    name: 'SotW LDS: an empty request after "*" is no wildcard (the stream has asked by name)',
    legacyAllowed: true,
    steps: [{ sotw: [] }, { sotw: ["*"] }, { sotw: [] }],
    wildcard: false,
    names: [],
    changes: [
      [true, false],
      [false, false],
      [false, true],
    ],
  },
  // Delta: subscribe and unsubscribe change the subscription incrementally.
  {
    name: "Delta CDS: an empty first subscribe is the legacy wildcard",
    legacyAllowed: true,
    steps: [{ subscribe: [] }],
    wildcard: true,
    names: [],
    changes: [[true, false]],
  },
  {
    name: "Delta EDS: an empty first subscribe subscribes to nothing",
    legacyAllowed: false,
    steps: [{ subscribe: [] }],
    wildcard: false,
    names: [],
    changes: [[false, false]],
  },
  {
    name: "Delta: an empty later subscribe (an ACK) keeps what there is and adds no wildcard",
    legacyAllowed: true,
    steps: [{ subscribe: ["a"] }, { subscribe: [] }],
    wildcard: false,
    names: ["a"],
    changes: [
      [true, false],
      [false, false],
    ],
  },
  {
    name: "Delta: subscribe adds to the names",
    legacyAllowed: false,
    steps: [{ subscribe: ["a"] }, { subscribe: ["b"] }],
    wildcard: false,
    names: ["a", "b"],
    changes: [
      [true, false],
      [true, false],
    ],
  },
  {
    name: 'Delta: "*" and names are tracked apart; unsubscribing "*" keeps the names',
    legacyAllowed: false,
    steps: [{ subscribe: ["*", "a"] }, { subscribe: [], unsubscribe: ["*"] }],
    wildcard: false,
    names: ["a"],
    changes: [
      [true, false],
      [false, true],
    ],
  },
  {
    name: 'Delta: unsubscribing a name keeps "*"',
    legacyAllowed: true,
    steps: [{ subscribe: ["*", "a"] }, { subscribe: [], unsubscribe: ["a"] }],
    wildcard: true,
    names: [],
    changes: [
      [true, false],
      [false, true],
    ],
  },
  {
    name: 'Delta: "*" subscribed later adds the wildcard to the names',
    legacyAllowed: false,
    steps: [{ subscribe: ["a"] }, { subscribe: ["*"] }],
    wildcard: true,
    names: ["a"],
    changes: [
      [true, false],
      [true, false],
    ],
  },
  {
    name: "Delta: subscribing a held name again adds nothing",
    legacyAllowed: false,
    steps: [{ subscribe: ["a"] }, { subscribe: ["a"] }],
    wildcard: false,
    names: ["a"],
    changes: [
      [true, false],
      [false, false],
    ],
  },
  {
    name: "Delta: unsubscribing a name never subscribed changes nothing",
    legacyAllowed: false,
    steps: [{ subscribe: ["a"] }, { subscribe: [], unsubscribe: ["zz"] }],
    wildcard: false,
    names: ["a"],
    changes: [
      [true, false],
      [false, false],
    ],
  },
  {
    // Subscribe applies before unsubscribe (go-control-plane's SetResourceSubscription does the same).
    name: "Delta: a name subscribed and unsubscribed in one request is not held, though it was asked for",
    legacyAllowed: false,
    steps: [{ subscribe: ["a"], unsubscribe: ["a"] }],
    wildcard: false,
    names: [],
    changes: [[true, false]],
  },
];

function run(row: Row): { subscription: Subscription; changes: SubscriptionChange[] } {
  let subscription = Subscription.NONE;
  const changes: SubscriptionChange[] = [];
  for (const [i, step] of row.steps.entries()) {
    const change =
      "sotw" in step
        ? subscription.sotw(step.sotw, i === 0, row.legacyAllowed)
        : subscription.delta(step.subscribe, step.unsubscribe ?? [], i === 0, row.legacyAllowed);
    changes.push(change);
    subscription = change.subscription;
  }
  return { subscription, changes };
}

describe("Subscription follows the xDS subscription rules", () => {
  test.each(rows)("$name", (row) => {
    const { subscription, changes } = run(row);
    // NONE is every stream's start: no request changes it.
    expect([Subscription.NONE.wildcard, Subscription.NONE.legacy, Subscription.NONE.names.size]).toEqual([
      false,
      false,
      0,
    ]);
    expect(subscription.wildcard).toBe(row.wildcard);
    expect([...subscription.names].sort()).toEqual(row.names);
    expect(changes.map((c) => [c.added, c.narrowed])).toEqual(row.changes);
  });

  test("has(name): every name under the wildcard, else only the explicit ones", () => {
    const named = Subscription.NONE.sotw(["a"], true, true).subscription;
    const wildcard = Subscription.NONE.sotw(["*"], true, true).subscription;
    expect([named.has("a"), named.has("b"), wildcard.has("b"), Subscription.NONE.has("a")]).toEqual([
      true,
      false,
      true,
      false,
    ]);
  });

  test("a request never changes NONE, which every stream starts from", () => {
    Subscription.NONE.delta(["nc-a"], [], true, false).subscription.delta(["nc-b"], ["nc-a"], false, false);
    Subscription.NONE.sotw(["nc-c"], true, false);
    expect([...Subscription.NONE.names]).toEqual([]);
  });
});

// Issue 16: the Envoys of one node group subscribe to the same names; their streams share one
// Subscription (one Set, one copy of each name) instead of holding one each.
describe("equal subscriptions are one object", () => {
  test("the same names in any order, SotW or Delta, give the same Subscription", () => {
    const a = Subscription.NONE.sotw(["eds-b", "eds-a", "eds-c"], true, false).subscription;
    const b = Subscription.NONE.sotw(["eds-c", "eds-a", "eds-b"], true, false).subscription;
    const delta = Subscription.NONE.delta(["eds-a"], [], true, false).subscription.delta(
      ["eds-c", "eds-b"],
      [],
      false,
      false,
    ).subscription;
    expect(b).toBe(a);
    expect(delta).toBe(a);
  });

  test("different content is never shared: other names, the wildcard, the legacy flag", () => {
    const named = Subscription.NONE.sotw(["x", "y"], true, true).subscription;
    const fewer = Subscription.NONE.sotw(["x"], true, true).subscription;
    const explicit = Subscription.NONE.sotw(["*"], true, true).subscription;
    const legacy = Subscription.NONE.sotw([], true, true).subscription;
    const distinct = new Set([named, fewer, explicit, legacy]);
    expect(distinct.size).toBe(4);
    expect([explicit.wildcard, explicit.legacy, legacy.wildcard, legacy.legacy]).toEqual([true, false, true, true]);
  });

  test("a request repeating the subscription keeps the very object (an ACK builds nothing)", () => {
    const first = Subscription.NONE.sotw(["p", "q"], true, false).subscription;
    const ack = first.sotw(["q", "p"], false, false);
    expect(ack.subscription).toBe(first);
    expect([ack.added, ack.narrowed]).toEqual([false, false]);
  });

  test("a repeated name is not taken for the whole set: [p, p] after {p, q} narrows to {p}", () => {
    const first = Subscription.NONE.sotw(["p", "q"], true, false).subscription;
    const change = first.sotw(["p", "p"], false, false);
    expect([...change.subscription.names]).toEqual(["p"]);
    expect([change.added, change.narrowed]).toEqual([false, true]);
  });

  test("a Subscription another stream shares is not changed by this stream's next request", () => {
    const mine = Subscription.NONE.sotw(["m", "n"], true, false).subscription;
    const theirs = Subscription.NONE.sotw(["n", "m"], true, false).subscription;
    // This stream's next subscriptions are copies of the shared names with the request applied.
    expect([...mine.sotw(["m"], false, false).subscription.names]).toEqual(["m"]);
    expect([...mine.delta(["o"], ["n"], false, false).subscription.names].sort()).toEqual(["m", "o"]);
    expect(theirs).toBe(mine);
    expect([...theirs.names]).toEqual(["m", "n"]);
  });
});

// The file comment's cost rules: a subscription no other stream shares is changed in place (its Set
// passes on; the replaced object may not be read again), and the content is found by a hash kept
// name by name. Each test uses names of its own, so no other test's subscription is shared.
describe("a subscription only its stream holds is changed in place", () => {
  test("SotW: an ACK keeps the object; the next change takes over its Set and retires it", () => {
    const mine = Subscription.NONE.sotw(["ip-a", "ip-b"], true, false).subscription;
    const set = mine.names;
    expect(mine.sotw(["ip-b", "ip-a"], false, false).subscription).toBe(mine);
    const next = mine.sotw(["ip-a"], false, false).subscription;
    expect(next.names).toBe(set);
    expect([...next.names]).toEqual(["ip-a"]);
    expect(() => mine.names).toThrow(/replaced by its stream's next request/);
  });

  test("Delta: an ACK (nothing subscribed or unsubscribed) keeps the object; the next change retires it", () => {
    const mine = Subscription.NONE.delta(["dp-a", "dp-b"], [], true, false).subscription;
    const set = mine.names;
    expect(mine.delta([], [], false, false).subscription).toBe(mine);
    const next = mine.delta(["dp-c"], ["dp-a"], false, false).subscription;
    expect(next.names).toBe(set);
    expect([...next.names].sort()).toEqual(["dp-b", "dp-c"]);
    expect(() => mine.names).toThrow(/replaced/);
  });

  test("another stream asking for a retired subscription's names gets a new one holding them", () => {
    const mine = Subscription.NONE.sotw(["rp-a", "rp-b"], true, false).subscription;
    mine.sotw(["rp-a"], false, false);
    const theirs = Subscription.NONE.sotw(["rp-b", "rp-a"], true, false).subscription;
    expect(theirs).not.toBe(mine);
    expect([...theirs.names].sort()).toEqual(["rp-a", "rp-b"]);
  });

  test("Delta: unsubscribing down to another stream's names finds that stream's object", () => {
    const theirs = Subscription.NONE.delta(["dr-a"], [], true, false).subscription;
    const mine = Subscription.NONE.delta(["dr-a", "dr-b"], [], true, false).subscription;
    expect(mine.delta([], ["dr-b"], false, false).subscription).toBe(theirs);
  });

  test("the hash spreads names: 64 single-name subscriptions, 64 distinct values of each half", () => {
    // A constant or degenerate hash still finds equal content (the names are compared), but every
    // lookup would then scan one bucket of every stream's subscriptions.
    const subs = Array.from({ length: 64 }, (_, i) => Subscription.NONE.sotw([`hs-${String(i)}`], true, false));
    expect(new Set(subs.map((c) => c.subscription.hash.a)).size).toBe(64);
    expect(new Set(subs.map((c) => c.subscription.hash.b)).size).toBe(64);
  });
});

const gc = (() => {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
})();

/** Collects garbage until `done` (finalizers run a task after the collection), at most 50 rounds. */
async function collectUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !done(); i += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // One more round: the intern table's finalizers may run after ours.
  gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("the intern table forgets what no stream holds (it lives as long as some stream holds it)", () => {
  test("retired and dropped subscriptions leave the table; one a stream still holds stays findable", async () => {
    await collectUntil(() => false);
    const before = internedContents();
    let finalized = 0;
    const watch = new FinalizationRegistry<undefined>(() => {
      finalized += 1;
    });
    const N = 30;
    // Per i: X {a, b} retired in place (→ X' {a}), then Y {a, b} made beside retired X: two objects
    // under one content, one under another; all dropped.
    (() => {
      for (let i = 0; i < N; i += 1) {
        const [a, b] = [`gc-${String(i)}-a`, `gc-${String(i)}-b`];
        const x = Subscription.NONE.sotw([a, b], true, false).subscription;
        const retiredTo = x.sotw([a], false, false).subscription;
        const y = Subscription.NONE.sotw([a, b], true, false).subscription;
        for (const s of [x, retiredTo, y]) watch.register(s, undefined);
      }
    })();
    expect(internedContents()).toBe(before + 2 * N);
    // A stream holds Y of {k-a, k-b}; the retired X under the same content is dropped.
    const kept = (() => {
      const x = Subscription.NONE.sotw(["k-a", "k-b"], true, false).subscription;
      watch.register(x.sotw(["k-a"], false, false).subscription, undefined);
      watch.register(x, undefined);
      return Subscription.NONE.sotw(["k-a", "k-b"], true, false).subscription;
    })();
    await collectUntil(() => finalized === 3 * N + 2);
    expect(finalized).toBe(3 * N + 2);
    expect(internedContents()).toBe(before + 1);
    expect(Subscription.NONE.sotw(["k-b", "k-a"], true, false).subscription).toBe(kept);
  });

  test("a lookup between a collection and the table's cleanup skips the collected entry", async () => {
    const ref = (() => new WeakRef(Subscription.NONE.sotw(["gd-a", "gd-b"], true, false).subscription))();
    // The lookup must run in the job of the collection: the table's finalizer runs in a later task.
    let again: Subscription | undefined;
    for (let i = 0; i < 20 && again === undefined; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
      if (ref.deref() === undefined) again = Subscription.NONE.sotw(["gd-b", "gd-a"], true, false).subscription;
    }
    expect([...(again?.names ?? [])].sort()).toEqual(["gd-a", "gd-b"]);
  });
});
