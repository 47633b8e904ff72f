// The Subscription type alone (src/xds/server/subscription.ts): one row per subscription rule of
// docs/xds-protocol.md#rule-9 and #rule-19, without a stream.
// https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#how-the-client-specifies-what-resources-to-return
import { describe, expect, test } from "vitest";
import { Subscription, type SubscriptionChange } from "../../../src/xds/server/subscription.js";

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

  test("a request never changes the subscription it was applied to", () => {
    const first = Subscription.NONE.delta(["a"], [], true, false).subscription;
    first.delta(["b"], ["a"], false, false);
    expect([...first.names]).toEqual(["a"]);
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
    mine.sotw(["m"], false, false);
    mine.delta(["o"], ["n"], false, false);
    expect(theirs).toBe(mine);
    expect([...theirs.names]).toEqual(["m", "n"]);
  });
});
