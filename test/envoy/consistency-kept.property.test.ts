// The consistency check keeps each filter chain's reference findings per chain object and name
// sets (src/envoy/validate/consistency.ts): on random sequences of resource sets that share chain objects
// while clusters and route configurations come and go, the findings are those of a check of a
// deep copy (whose chains no memo has seen), in the same order.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { consistencyFindings } from "../../src/envoy/validate/consistency.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { HTTP_CONNECTION_MANAGER_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../src/xds/resource/type-urls.js";

const CLUSTERS = ["c0", "c1", "c2", "c3"];
const ROUTES = ["r0", "r1"];

/** Chain objects made once: the same objects appear in several resource sets, as kept chains do. */
const CHAINS: object[] = [
  ...CLUSTERS.map((c, i) => ({
    name: `tcp-${String(i)}`,
    filter_chain_match: { server_names: [`h${String(i)}.example.com`] },
    filters: [{ name: "tcp", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: c } }],
  })),
  ...ROUTES.map((r, i) => ({
    name: `http-${String(i)}`,
    filter_chain_match: { server_names: [`w${String(i)}.example.com`] },
    filters: [
      {
        name: "hcm",
        typed_config: { "@type": HTTP_CONNECTION_MANAGER_TYPE_URL, stat_prefix: "s", rds: { route_config_name: r } },
      },
    ],
  })),
  {
    name: "inline",
    filter_chain_match: { server_names: ["i.example.com"] },
    filters: [
      {
        name: "hcm",
        typed_config: {
          "@type": HTTP_CONNECTION_MANAGER_TYPE_URL,
          stat_prefix: "s",
          route_config: {
            name: "inline",
            virtual_hosts: [
              { name: "v", domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: "c1" } }] },
            ],
          },
        },
      },
    ],
  },
];

interface Step {
  readonly clusters: string[];
  readonly routes: string[];
  readonly chains: number[];
  readonly second: number[];
}

const step: fc.Arbitrary<Step> = fc.record({
  clusters: fc.subarray(CLUSTERS),
  routes: fc.subarray(ROUTES),
  chains: fc.subarray(CHAINS.map((_, i) => i)),
  /** Two listeners may hold one chain object under different names. */
  second: fc.subarray(
    CHAINS.map((_, i) => i),
    { maxLength: 2 },
  ),
});

function resourcesOf(s: Step): EnvoyResources {
  const listener = (name: string, port: number, chains: number[]): object => ({
    name,
    address: { socket_address: { address: "0.0.0.0", port_value: port } },
    filter_chains: chains.map((i) => CHAINS[i]),
  });
  return {
    listeners: [listener("l-443", 443, s.chains), ...(s.second.length > 0 ? [listener("l-8443", 8443, s.second)] : [])],
    clusters: s.clusters.map((name) => ({ name, type: "STATIC", connect_timeout: "1s" })),
    endpoints: [],
    routes: s.routes.map((name) => ({ name, virtual_hosts: [] })),
  };
}

describe("consistency check with kept chain results", () => {
  it("finds what a check of a deep copy finds, in order, on every step", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 10 }), (steps) => {
        for (const s of steps) {
          const res = resourcesOf(s);
          expect(consistencyFindings(res)).toEqual(consistencyFindings(structuredClone(res)));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a chain checked again against other names reports what they lack", () => {
    const s = { clusters: CLUSTERS, routes: ROUTES, chains: [0, 4], second: [] };
    expect(consistencyFindings(resourcesOf(s)).map((f) => f.message)).toEqual([]);
    const fewer = consistencyFindings(resourcesOf({ ...s, clusters: ["c1"], routes: [] })).map((f) => f.message);
    expect(fewer).toEqual([
      'listener "l-443" filter chain "tcp-0": tcp_proxy cluster "c0" does not exist',
      'listener "l-443" filter chain "http-0": RDS route configuration "r0" does not exist',
    ]);
  });
});
