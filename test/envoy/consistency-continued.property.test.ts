// The consistency check continued from a clean set (src/envoy/validate/continued.ts) against the
// whole check of a deep copy (objects no memo or index has seen). Sequences of resource sets share
// their objects from step to step, as a renderer's do, while chains, clusters, assignments and
// route configurations come and go, some broken (a dangling reference, an overlap, a partial
// wildcard, a missing stat_prefix, an EDS cluster without assignment) and some lists out of order.
// The continuation must prove clean exactly the sets the whole check finds clean, and never one
// it does not; and consistencyFindings with a previous set must equal the whole check.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consistencyFindings } from "../../src/envoy/validate/consistency.js";
import { continuedClean } from "../../src/envoy/validate/continued.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { HTTP_CONNECTION_MANAGER_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../src/xds/resource/type-urls.js";

const CLUSTERS = 8;
const ROUTES = 3;

const tcpChain = (name: string, cluster: string, match: object, statPrefix = "s"): object => ({
  name,
  filter_chain_match: match,
  filters: [{ name: "tcp", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: statPrefix, cluster } }],
});
const hcm = (config: object): object[] => [
  { name: "hcm", typed_config: { "@type": HTTP_CONNECTION_MANAGER_TYPE_URL, stat_prefix: "s", ...config } },
];
const route = (cluster: string): object => ({ match: { prefix: "/" }, route: { cluster } });

/** Chain objects made once, shared by the listeners of every step. */
const CHAINS: object[] = [
  ...Array.from({ length: 10 }, (_, i) =>
    tcpChain(`a-${String(i).padStart(2, "0")}`, `c${String(i % CLUSTERS)}`, {
      server_names: [`h${String(i)}.example.com`],
      source_prefix_ranges: [{ address_prefix: `10.0.${String(i)}.0`, prefix_len: 24 }],
    }),
  ),
  // Overlaps a-03: the same server name and source range (host bits aside).
  tcpChain("b-overlap", "c3", {
    server_names: ["h3.example.com"],
    source_prefix_ranges: [{ address_prefix: "10.0.3.7", prefix_len: 24 }],
  }),
  tcpChain("b-repeat", "c1", { server_names: ["r.example.com", "r.example.com"] }),
  tcpChain("b-wildcard", "c2", { server_names: ["w*.example.com"] }),
  tcpChain("b-stat", "c2", { server_names: ["s.example.com"] }, ""),
  tcpChain("b-missing", "gone", { server_names: ["m.example.com"] }),
  {
    name: "c-rds",
    filter_chain_match: { server_names: ["rds.example.com"] },
    filters: hcm({ rds: { route_config_name: "r1" } }),
  },
  {
    name: "c-inline",
    filter_chain_match: { server_names: ["inline.example.com"] },
    filters: hcm({
      route_config: { name: "inline", virtual_hosts: [{ name: "v", domains: ["*"], routes: [route("c5")] }] },
    }),
  },
  {
    name: "c-weighted",
    filter_chain_match: { server_names: ["weighted.example.com"] },
    filters: [
      {
        name: "tcp",
        typed_config: {
          "@type": TCP_PROXY_TYPE_URL,
          stat_prefix: "s",
          weighted_clusters: {
            clusters: [
              { name: "c6", weight: 1 },
              { name: "c7", weight: 1 },
            ],
          },
        },
      },
    ],
  },
  // The second listener's own chains.
  ...Array.from({ length: 3 }, (_, i) =>
    tcpChain(`k-${String(i)}`, `c${String(i)}`, { server_names: [`k${String(i)}.example.com`] }),
  ),
];

/** Clusters: c0–c7 in two forms each (EDS, STATIC), plus broken ones. */
const CLUSTER_OBJECTS: object[] = [
  ...Array.from({ length: CLUSTERS }, (_, i) => ({
    name: `c${String(i)}`,
    type: "EDS",
    eds_cluster_config: { service_name: `c${String(i)}` },
    connect_timeout: "1s",
  })),
  ...Array.from({ length: CLUSTERS }, (_, i) => ({ name: `c${String(i)}`, type: "STATIC", connect_timeout: "2s" })),
  { name: "c4", type: "LOGICAL_DNS", connect_timeout: "1s" },
  { name: "c0", type: "STATIC", connect_timeout: "0s" },
];
const ASSIGNMENTS: object[] = Array.from({ length: CLUSTERS }, (_, i) => ({ cluster_name: `c${String(i)}` }));
const ROUTE_OBJECTS: object[] = [
  ...Array.from({ length: ROUTES }, (_, i) => ({
    name: `r${String(i)}`,
    virtual_hosts: [{ name: "v", domains: [`r${String(i)}.example.com`], routes: [route(`c${String(i)}`)] }],
  })),
  {
    name: "r2",
    virtual_hosts: [
      { name: "v", domains: ["x.example.com"], routes: [] },
      { name: "w", domains: ["X.example.com"], routes: [] },
    ],
  },
];

const nameOf = (o: object): string => (o as { name: string }).name;

/** 600 more clusters with their assignments, named after every other: a set large enough to be continued. */
const MORE_CLUSTERS: object[] = Array.from({ length: 600 }, (_, i) => ({
  name: `z${String(i).padStart(3, "0")}`,
  type: "EDS",
  eds_cluster_config: { service_name: `z${String(i).padStart(3, "0")}` },
  connect_timeout: "1s",
}));
const MORE_ASSIGNMENTS: object[] = MORE_CLUSTERS.map((c) => ({ cluster_name: nameOf(c) }));

interface Step {
  readonly chains: readonly number[];
  readonly second: readonly number[];
  /** Per cluster name, which object (or none). */
  readonly clusters: readonly number[];
  readonly assignments: readonly boolean[];
  readonly routes: readonly number[];
  /** Clusters listed in reverse: out of order. */
  readonly reversed: boolean;
  /** Both listeners bind one address. */
  readonly sameBind: boolean;
}

const rare = <T>(usual: fc.Arbitrary<T>, other: fc.Arbitrary<T>, odds = 30): fc.Arbitrary<T> =>
  fc.oneof({ weight: odds, arbitrary: usual }, { weight: 1, arbitrary: other });

/** Mostly clean, so that clean sets follow clean sets: each kind of breakage is rare. */
const stepArb: fc.Arbitrary<Step> = fc
  .record({
    chains: fc.uniqueArray(fc.nat(9), { minLength: 1, maxLength: 10 }),
    extra: fc.subarray([15, 16, 17]),
    broken: rare(fc.constant<number[]>([]), fc.subarray([10, 11, 12, 13, 14], { minLength: 1, maxLength: 2 }), 8),
    second: fc
      .tuple(
        fc.subarray([18, 19, 20]),
        rare(fc.constant<number[]>([]), fc.subarray([0, 1, 2, 3], { maxLength: 1 }), 10),
      )
      .map(([own, shared]) => [...own, ...shared]),
    clusters: fc.array(rare(fc.constantFrom(0, 0, 0, 1), fc.constantFrom(-1, 2, 3), 40), {
      minLength: CLUSTERS,
      maxLength: CLUSTERS,
    }),
    assignments: fc.array(rare(fc.constant(true), fc.constant(false), 60), {
      minLength: CLUSTERS,
      maxLength: CLUSTERS,
    }),
    routes: fc.array(rare(fc.constant(0), fc.constantFrom(-1, 1), 20), { minLength: ROUTES, maxLength: ROUTES }),
    reversed: rare(fc.constant(false), fc.constant(true), 15),
    sameBind: rare(fc.constant(false), fc.constant(true), 15),
  })
  .map(({ chains, extra, broken, ...rest }) => ({ ...rest, chains: [...chains, ...extra, ...broken] }));

/** Listener objects by content, so a listener whose chains did not change is the same object. */
const listeners = new Map<string, object>();
function listener(name: string, port: number, chains: readonly number[]): object {
  const sorted = [...chains].sort((a, b) => (nameOf(CHAINS[a] as object) < nameOf(CHAINS[b] as object) ? -1 : 1));
  const key = `${name}:${String(port)}:${sorted.join(",")}`;
  let l = listeners.get(key);
  if (l === undefined) {
    l = {
      name,
      address: { socket_address: { address: "0.0.0.0", port_value: port } },
      filter_chains: sorted.map((i) => CHAINS[i]),
    };
    listeners.set(key, l);
  }
  return l;
}

function resourcesOf(s: Step): EnvoyResources {
  const clusters: object[] = [];
  s.clusters.forEach((form, i) => {
    if (form === -1) return;
    const o =
      form === 0
        ? CLUSTER_OBJECTS[i]
        : form === 1
          ? CLUSTER_OBJECTS[CLUSTERS + i]
          : form === 2
            ? CLUSTER_OBJECTS[16]
            : CLUSTER_OBJECTS[17];
    // Forms 2 and 3 replace c4 and c0; elsewhere they keep the EDS form.
    clusters.push((form === 2 && i !== 4) || (form === 3 && i !== 0) ? (CLUSTER_OBJECTS[i] as object) : (o as object));
  });
  const routes = s.routes.flatMap((form, i) =>
    form === -1 ? [] : [ROUTE_OBJECTS[form === 1 && i === 2 ? 3 : i] as object],
  );
  return {
    listeners: [
      listener("l-443", 443, s.chains),
      ...(s.second.length > 0 ? [listener("l-6443", s.sameBind ? 443 : 6443, s.second)] : []),
    ],
    clusters: s.reversed ? clusters.reverse() : clusters,
    endpoints: ASSIGNMENTS.filter((_, i) => s.assignments[i] === true),
    routes,
  };
}

const wholeCheck = (res: EnvoyResources): readonly unknown[] => consistencyFindings(structuredClone(res));

describe("the consistency check continued from a clean set", () => {
  it("proves clean exactly what the whole check finds clean", () => {
    let proved = 0;
    let cleanAfterClean = 0;
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 2, maxLength: 12 }), (steps) => {
        const first = steps[0] as Step;
        let previous = resourcesOf(first);
        let previousClean = wholeCheck(previous).length === 0;
        let previousReversed = first.reversed;
        // Two listeners sharing a chain object share its overlap index: the continuation then
        // gives up (soundly) on one of them, for as long as its state lives.
        let shared = false;
        for (const s of steps) shared ||= s.second.some((i) => s.chains.includes(i));
        for (const s of steps.slice(1)) {
          const next = resourcesOf(s);
          const clean = wholeCheck(next).length === 0;
          if (previousClean) {
            const result = continuedClean(previous, next);
            // Sound: never clean where the whole check finds something.
            if (result) expect(clean).toBe(true);
            // Complete for the sets it follows: both sorted, no chain object in two listeners.
            if (clean && !s.reversed && !previousReversed && !shared) expect(result).toBe(true);
            if (clean) cleanAfterClean += 1;
            if (result) proved += 1;
          }
          previous = next;
          previousClean = clean;
          previousReversed = s.reversed;
        }
      }),
      { numRuns: 400 },
    );
    // The steps reach the continuation often: it is not a path the property skips.
    expect(proved).toBeGreaterThan(cleanAfterClean / 2);
  });

  it("gives what the whole check gives, in order, when asked with the set before", () => {
    // Padded past the size below which consistencyFindings checks whole.
    const padded = (res: EnvoyResources): EnvoyResources => ({
      ...res,
      clusters: [...res.clusters, ...MORE_CLUSTERS],
      endpoints: [...res.endpoints, ...MORE_ASSIGNMENTS],
    });
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 2, maxLength: 12 }), (steps) => {
        let previous: EnvoyResources | undefined;
        for (const s of steps) {
          const next = padded(resourcesOf(s));
          expect(consistencyFindings(next, previous)).toEqual(wholeCheck(next));
          previous = next;
        }
      }),
      { numRuns: 100 },
    );
  });

  // Paths the random steps reach too rarely to rely on.
  const chain = (i: number): object => CHAINS[i] as object;
  const eds = (i: number): object => CLUSTER_OBJECTS[i] as object;
  const set = (l443: object[], l6443: object[], clusters = [0, 1, 2, 3, 4, 5, 6, 7].map(eds)): EnvoyResources => ({
    listeners: [
      { name: "l-443", address: { socket_address: { address: "0.0.0.0", port_value: 443 } }, filter_chains: l443 },
      { name: "l-6443", address: { socket_address: { address: "0.0.0.0", port_value: 6443 } }, filter_chains: l6443 },
    ],
    clusters,
    endpoints: ASSIGNMENTS,
    routes: [],
  });

  it("does not prove clean an EDS cluster that came without its assignment", () => {
    const statics = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => CLUSTER_OBJECTS[CLUSTERS + i] as object);
    const before: EnvoyResources = { ...set([chain(0)], [chain(18)], statics), endpoints: ASSIGNMENTS.slice(1) };
    expect(consistencyFindings(before)).toEqual([]);
    const after: EnvoyResources = { ...before, clusters: [eds(0), ...statics.slice(1)] };
    expect(continuedClean(before, after)).toBe(false);
    expect(wholeCheck(after).map((f) => (f as { message: string }).message)).toEqual([
      'cluster "c0" has no ClusterLoadAssignment',
    ]);
  });

  it("does not prove clean a name listed again at the end of a list", () => {
    const before = set([chain(0)], [chain(18)]);
    expect(consistencyFindings(before)).toEqual([]);
    const after: EnvoyResources = { ...before, clusters: [...before.clusters, { ...eds(0) }] };
    expect(continuedClean(before, after)).toBe(false);
  });

  it("does not trust an overlap index another listener moved", () => {
    // Both listeners hold a-03, so their overlap indexes are one; the second then lets a-03 go.
    const first = set([chain(3)], [chain(3)]);
    expect(consistencyFindings(first)).toEqual([]);
    const second = set([chain(3)], [chain(4)]);
    expect(continuedClean(first, second)).toBe(true);
    // b-overlap overlaps a-03, which the first listener still holds.
    const third = set([chain(3), chain(10)], [chain(4)]);
    expect(continuedClean(second, third)).toBe(false);
    expect(wholeCheck(third).map((f) => (f as { message: string }).message)).toEqual([
      'listener "l-443": filter chains "a-03" and "b-overlap" have overlapping matching rules (server_name h3.example.com, source_prefix_range 10.0.3.0/24)',
    ]);
  });

  it("lets go of what a listener or a route configuration that went referenced", () => {
    const before: EnvoyResources = { ...set([chain(1)], [chain(18)]), routes: [ROUTE_OBJECTS[2] as object] };
    expect(consistencyFindings(before)).toEqual([]);
    // k-0 (the second listener's only chain) and r2 were the only ones to name c0 and c2.
    const after: EnvoyResources = {
      ...before,
      listeners: before.listeners.slice(0, 1),
      clusters: [1, 3, 4, 5, 6, 7].map(eds),
      routes: [],
    };
    expect(continuedClean(before, after)).toBe(true);
  });

  it("continues a set of 512 resources and chains or more from the one before, with the whole check's answer", () => {
    const big = (l443: object[], clusters: object[]): EnvoyResources => ({
      ...set(l443, [chain(18)], clusters),
      endpoints: [...ASSIGNMENTS, ...MORE_ASSIGNMENTS],
    });
    const all = [...[0, 1, 2, 3, 4, 5, 6, 7].map(eds), ...MORE_CLUSTERS];
    const first = big([chain(0)], all);
    expect(consistencyFindings(first)).toEqual([]);
    const second = big([chain(0), chain(1)], all);
    expect(consistencyFindings(second, first)).toEqual([]);
    // c1 goes while a-01 still names it.
    const third = big(
      [chain(0), chain(1)],
      all.filter((c) => nameOf(c) !== "c1"),
    );
    expect(consistencyFindings(third, second).map((f) => f.message)).toEqual([
      'listener "l-443" filter chain "a-01": tcp_proxy cluster "c1" does not exist',
    ]);
  });
});
