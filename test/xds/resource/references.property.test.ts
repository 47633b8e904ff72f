// A listener's references (src/xds/resource/references.ts), continued from the version before: a
// large listener patches the counts and sorted lists of the names its chains reference at the
// chains that differ. On sequences of listeners of 256–400 chains, sharing chain objects from step
// to step while a few come and go (some steps out of order, some with a default chain), each
// continued result equals the names the chains hold, read by the test itself.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { referencesOf, type References } from "../../../src/xds/resource/references.js";
import {
  HTTP_CONNECTION_MANAGER_TYPE_URL,
  LISTENER_TYPE_URL,
  TCP_PROXY_TYPE_URL,
} from "../../../src/xds/resource/type-urls.js";

const POOL = 420;

/** Chain objects made once: most proxy to one of 150 clusters (so chains share them), some route. */
const CHAINS: object[] = Array.from({ length: POOL }, (_, i) => {
  const name = `chain-${String(i).padStart(3, "0")}`;
  if (i % 37 === 0)
    return {
      name,
      filters: [
        {
          name: "hcm",
          typed_config: {
            "@type": HTTP_CONNECTION_MANAGER_TYPE_URL,
            stat_prefix: "s",
            rds: { route_config_name: `routes-${String(i % 3)}` },
          },
        },
      ],
    };
  if (i % 41 === 0)
    return {
      name,
      filters: [
        {
          name: "tcp",
          typed_config: {
            "@type": TCP_PROXY_TYPE_URL,
            stat_prefix: "s",
            weighted_clusters: {
              clusters: [
                { name: `c-${String(i % 150)}`, weight: 1 },
                { name: `w-${String(i)}`, weight: 1 },
              ],
            },
          },
        },
      ],
    };
  return {
    name,
    filters: [
      { name: "tcp", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: `c-${String(i % 150)}` } },
    ],
  };
});

const DEFAULT_CHAIN = {
  name: "default",
  filters: [{ name: "tcp", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: "fallback" } }],
};

interface Step {
  /** Chains that come or go. */
  readonly toggled: readonly number[];
  readonly reversed: boolean;
  readonly withDefault: boolean;
}

const rare = (odds: number): fc.Arbitrary<boolean> =>
  fc.oneof({ weight: odds, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });

const run = fc.record({
  first: fc.uniqueArray(fc.nat(POOL - 1), { minLength: 260, maxLength: 400 }),
  steps: fc.array(
    fc.record({
      toggled: fc.uniqueArray(fc.nat(POOL - 1), { minLength: 0, maxLength: 12 }),
      reversed: rare(10),
      withDefault: rare(10),
    }),
    { minLength: 1, maxLength: 10 },
  ),
});

function listenerOf(chains: ReadonlySet<number>, step: Pick<Step, "reversed" | "withDefault">): object {
  const list = [...chains].sort((a, b) => a - b).map((i) => CHAINS[i] as object);
  return {
    name: "big",
    filter_chains: step.reversed ? list.reverse() : list,
    ...(step.withDefault ? { default_filter_chain: DEFAULT_CHAIN } : {}),
  };
}

/** What the chains name, read here from the fixtures' shapes: sorted, each name once. */
function expected(listener: object): References {
  const l = listener as { filter_chains: object[]; default_filter_chain?: object };
  const clusters = new Set<string>();
  const routes = new Set<string>();
  for (const chain of [...l.filter_chains, ...(l.default_filter_chain ? [l.default_filter_chain] : [])]) {
    const config = (chain as { filters: { typed_config: Record<string, unknown> }[] }).filters[0]?.typed_config ?? {};
    const rds = config["rds"] as { route_config_name: string } | undefined;
    if (rds !== undefined) routes.add(rds.route_config_name);
    if (typeof config["cluster"] === "string") clusters.add(config["cluster"]);
    const weighted = config["weighted_clusters"] as { clusters: { name: string }[] } | undefined;
    for (const w of weighted?.clusters ?? []) clusters.add(w.name);
  }
  return { clusters: [...clusters].sort(), routes: [...routes].sort(), endpoints: undefined };
}

describe("a listener's references, continued from the version before", () => {
  it("are those of the listener read whole, at every step", () => {
    fc.assert(
      fc.property(run, ({ first, steps }) => {
        const chains = new Set(first);
        let listener = listenerOf(chains, { reversed: false, withDefault: false });
        let refs = referencesOf(LISTENER_TYPE_URL, listener);
        expect(refs).toEqual(expected(listener));
        for (const step of steps) {
          for (const i of step.toggled) if (!chains.delete(i)) chains.add(i);
          listener = listenerOf(chains, step);
          refs = referencesOf(LISTENER_TYPE_URL, listener, refs);
          expect(refs).toEqual(expected(listener));
        }
      }),
      { numRuns: 150 },
    );
  });

  it("a chain that goes takes its cluster only when no other chain names it", () => {
    const listener = listenerOf(new Set(Array.from({ length: 300 }, (_, i) => i)), {
      reversed: false,
      withDefault: false,
    });
    const refs = referencesOf(LISTENER_TYPE_URL, listener);
    // chain-001 and chain-151 name c-1, chain-149 and chain-299 name c-149.
    const without = (drop: number[]): object =>
      listenerOf(new Set(Array.from({ length: 300 }, (_, i) => i).filter((i) => !drop.includes(i))), {
        reversed: false,
        withDefault: false,
      });
    const first = referencesOf(LISTENER_TYPE_URL, without([1]), refs);
    expect(first.clusters).toContain("c-1");
    const second = referencesOf(LISTENER_TYPE_URL, without([1, 151, 149, 299]), first);
    expect(second.clusters).not.toContain("c-1");
    expect(second.clusters).not.toContain("c-149");
    expect(second.clusters).toContain("c-148");
  });

  it("continued twice from one version, gives each listener's own", () => {
    const all = Array.from({ length: 300 }, (_, i) => i);
    const plain = { reversed: false, withDefault: false };
    const refs = referencesOf(LISTENER_TYPE_URL, listenerOf(new Set(all), plain));
    // chain-001 and chain-151 name c-1: after a, one does; after b, none.
    const a = listenerOf(new Set(all.filter((i) => i !== 1)), plain);
    const b = listenerOf(new Set(all.filter((i) => i !== 1 && i !== 151)), plain);
    expect(referencesOf(LISTENER_TYPE_URL, a, refs)).toEqual(expected(a));
    const fromB = referencesOf(LISTENER_TYPE_URL, b, refs);
    expect(fromB).toEqual(expected(b));
    // And on from b: chain-001 back.
    const c = listenerOf(new Set(all.filter((i) => i !== 151)), plain);
    expect(referencesOf(LISTENER_TYPE_URL, c, fromB)).toEqual(expected(c));
  });
});
