// The indexed overlap check against the definition it replaces: Envoy's filter-chain manager
// indexes a chain under every combination of its criteria and refuses a listener as soon as a
// combination is taken (https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/listener/v3/listener_components.proto#config-listener-v3-filterchainmatch).
// The oracle below walks every combination in that order, as consistency.ts did before the index.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { chainOverlaps } from "../../src/envoy/validate/chain-overlap.js";
import {
  describeCombo,
  expandMatch,
  readChains,
  type ChainView,
  type MatchCombo,
} from "../../src/envoy/render/chain-match.js";

function comboKey(c: MatchCombo): string {
  return JSON.stringify([
    c.destinationPort,
    c.prefixRange,
    c.serverName,
    c.transportProtocol,
    c.applicationProtocol,
    c.directSourcePrefixRange,
    c.sourceType,
    c.sourcePrefixRange,
    c.sourcePort,
  ]);
}

/** Every combination of every chain, in listener order; each colliding pair reported at its first combination. */
function oracle(listener: string, chains: readonly ChainView[]): { message: string; chain: string }[] {
  const out: { message: string; chain: string }[] = [];
  const owners = new Map<string, number[]>();
  const reported = new Set<string>();
  chains.forEach((chain, i) => {
    for (const combo of expandMatch(chain.match)) {
      const key = comboKey(combo);
      const prior = owners.get(key) ?? [];
      for (const prev of prior) {
        if (reported.has(`${String(prev)}/${String(i)}`)) continue;
        reported.add(`${String(prev)}/${String(i)}`);
        out.push({
          chain: chain.name,
          message:
            prev === i
              ? `listener "${listener}": filter chain "${chain.name}" lists the same matching rules twice (${describeCombo(combo)})`
              : `listener "${listener}": filter chains "${chains[prev]?.name ?? ""}" and "${chain.name}" have overlapping matching rules (${describeCombo(combo)})`,
        });
      }
      if (!prior.includes(i)) owners.set(key, [...prior, i]);
    }
  });
  return out;
}

const indexed = (listener: string, chains: readonly ChainView[]): { message: string; chain: string }[] =>
  chainOverlaps(listener, chains).map((f) => ({ message: f.message, chain: f.at.chain ?? "" }));

// Small pools, so random chains collide often; duplicates inside a list are allowed on purpose.
const list = <T>(pool: readonly T[]): fc.Arbitrary<T[]> => fc.array(fc.constantFrom(...pool), { maxLength: 3 });
const cidr = (a: string, n: number): object => ({ address_prefix: a, prefix_len: n });
const matchArb = fc.record(
  {
    destination_port: fc.constantFrom(443, 6443),
    prefix_ranges: list([cidr("10.0.0.0", 8), cidr("10.1.0.0", 16)]),
    server_names: list(["a.example", "B.example", "*.example", "b.example"]),
    transport_protocol: fc.constantFrom("tls", "raw_buffer"),
    application_protocols: list(["h2", "http/1.1"]),
    direct_source_prefix_ranges: list([cidr("192.0.2.0", 24)]),
    source_type: fc.constantFrom("ANY", "EXTERNAL", "SAME_IP_OR_LOOPBACK"),
    // 10.0.0.1/31 and 10.0.0.0/31 are the same range once host bits are cleared.
    source_prefix_ranges: list([
      cidr("10.0.0.1", 32),
      cidr("10.0.0.2", 32),
      cidr("10.0.0.1", 31),
      cidr("10.0.0.0", 31),
    ]),
    source_ports: list([1, 2, 3]),
  },
  { requiredKeys: [] },
);
const listenerArb = fc
  .array(fc.option(matchArb, { nil: undefined }), { minLength: 0, maxLength: 12 })
  .map((matches) => ({
    name: "l",
    filter_chains: matches.map((m, i) => ({ name: `c${String(i)}`, ...(m ? { filter_chain_match: m } : {}) })),
  }));

describe("chainOverlaps (indexed) = the combination-by-combination walk", () => {
  test("same findings, in the same order, on random chain sets", () => {
    let withFindings = 0;
    fc.assert(
      fc.property(listenerArb, (listener) => {
        const chains = readChains(listener);
        const want = oracle("l", chains);
        if (want.length > 0) withFindings += 1;
        expect(indexed("l", chains)).toStrictEqual(want);
      }),
      { seed: 1616, numRuns: 2000 },
    );
    // The generator must exercise collisions, or the comparison proves nothing.
    expect(withFindings).toBeGreaterThan(200);
  });

  test("same findings when each check continues from the index of the previous version (random add/remove sequences)", () => {
    let withFindings = 0;
    let steps = 0;
    fc.assert(
      fc.property(
        // A pool of chain objects, and per step the positions of the pool the listener lists (in that order).
        fc.array(matchArb, { minLength: 1, maxLength: 10 }),
        fc.array(fc.array(fc.nat({ max: 9 }), { maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        (matches, versions) => {
          const pool = matches.map((m, i) => ({ name: `p${String(i)}`, filter_chain_match: m }));
          // Each version keeps most of the previous one: drop or add a chain or two.
          let listed: object[] = [];
          for (const version of versions) {
            const picked = version.map((k) => pool[k % pool.length]).filter((c) => c !== undefined);
            listed = [...listed.filter((_, i) => !version.includes(i)), ...picked.slice(0, 2)];
            const chains = readChains({ filter_chains: listed });
            const want = oracle("l", chains);
            if (want.length > 0) withFindings += 1;
            steps += 1;
            expect(indexed("l", chains)).toStrictEqual(want);
          }
        },
      ),
      { seed: 1617, numRuns: 500 },
    );
    expect(withFindings).toBeGreaterThan(100);
    expect(steps).toBeGreaterThan(1000);
  });

  test("one index serves alternating listeners that share chains", () => {
    const chain = (name: string, names: string[]): object => ({
      name,
      filter_chain_match: { server_names: names, transport_protocol: "tls" },
    });
    const [a, b, c] = [chain("a", ["x"]), chain("b", ["y"]), chain("c", ["x"])];
    const one = readChains({ filter_chains: [a, b] });
    const two = readChains({ filter_chains: [a, b, c] });
    for (let k = 0; k < 3; k += 1) {
      expect(indexed("one", one)).toStrictEqual(oracle("one", one));
      expect(indexed("two", two).map((f) => f.message)).toStrictEqual([
        'listener "two": filter chains "a" and "c" have overlapping matching rules (server_name x, transport_protocol tls)',
      ]);
    }
    // The same chain object listed twice collides with itself at every combination.
    const twice = readChains({ filter_chains: [a, a] });
    expect(indexed("l", twice)).toStrictEqual(oracle("l", twice));
    expect(indexed("l", twice)).toHaveLength(1);
  });

  test.each<[string, object[], string[]]>([
    [
      "a chain repeating a value in an inner list is reported at its first repeat",
      [{ server_names: ["x", "y"], source_ports: [1, 2, 1] }],
      ['listener "l": filter chain "c0" lists the same matching rules twice (server_name x, source_port 1)'],
    ],
    [
      "the innermost repeating list decides the combination",
      [{ server_names: ["x", "x"], source_ports: [1, 2, 2] }],
      ['listener "l": filter chain "c0" lists the same matching rules twice (server_name x, source_port 2)'],
    ],
    ["chains differing only in destination port never collide", [{ destination_port: 1 }, { destination_port: 2 }], []],
    [
      "two chains without criteria collide on any connection",
      [{}, {}],
      ['listener "l": filter chains "c0" and "c1" have overlapping matching rules (any connection)'],
    ],
  ])("%s", (_name, matches, messages) => {
    const chains = readChains({
      filter_chains: matches.map((m, i) => ({ name: `c${String(i)}`, filter_chain_match: m })),
    });
    expect(indexed("l", chains).map((f) => f.message)).toStrictEqual(messages);
    expect(oracle("l", chains).map((f) => f.message)).toStrictEqual(messages);
  });

  test("1,000 chains of 100 disjoint source ranges each: no finding, and one shared range is found", () => {
    const chains = Array.from({ length: 1000 }, (_, c) => ({
      name: `c${String(c).padStart(4, "0")}`,
      filter_chain_match: {
        transport_protocol: "tls",
        source_prefix_ranges: Array.from({ length: 100 }, (_, w) =>
          cidr(`10.${String(w)}.${String(c >> 8)}.${String(c & 255)}`, 32),
        ),
      },
    }));
    expect(chainOverlaps("l", readChains({ filter_chains: chains }))).toStrictEqual([]);
    // Rendered chains are immutable (views and the index are kept per chain object): a new version is a new object.
    const last = chains[999];
    if (last === undefined) throw new Error("1,000 chains");
    chains[999] = {
      ...last,
      filter_chain_match: {
        ...last.filter_chain_match,
        source_prefix_ranges: [...last.filter_chain_match.source_prefix_ranges, cidr("10.7.0.5", 32)],
      },
    };
    expect(indexed("l", readChains({ filter_chains: chains })).map((f) => f.message)).toStrictEqual([
      'listener "l": filter chains "c0005" and "c0999" have overlapping matching rules (transport_protocol tls, source_prefix_range 10.7.0.5/32)',
    ]);
  });
});
