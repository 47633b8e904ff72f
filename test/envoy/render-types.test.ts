// The renderers' output types (src/envoy/render/envoy-types.ts) refuse a misspelt or misplaced
// Envoy field at compile time: each `@ts-expect-error` below fails `npm run lint`'s tsc if the
// line it marks ever compiles. The runtime checks show the well-spelt values are what renders.
import { describe, expect, test } from "vitest";
import { adsConfigSource } from "../../src/envoy/render/ads.js";
import { renderClusters } from "../../src/envoy/render/clusters.js";
import { proxyFields } from "../../src/envoy/render/fields.js";
import type { Cluster, ClusterLoadAssignment, FilterChain, Listener } from "../../src/envoy/render/envoy-types.js";
import { Problems } from "../../src/model/problems.js";

describe("Envoy output types catch misspelt fields at compile time", () => {
  test("a Cluster with connect_timeout misspelt does not compile; the well-spelt one is what renders", () => {
    const good: Cluster = {
      name: "u",
      type: "EDS",
      eds_cluster_config: { eds_config: adsConfigSource() },
      connect_timeout: "5s",
    };
    const bad: Cluster = {
      name: "u",
      type: "EDS",
      eds_cluster_config: { eds_config: adsConfigSource() },
      // @ts-expect-error misspelt: Envoy's field is connect_timeout
      conect_timeout: "5s",
    };
    const upstreams = [
      {
        kind: "address" as const,
        name: "u",
        endpoints: [],
        connectTimeoutSeconds: 5,
        target: { service: "s", namespace: "n", port: 1 },
      },
    ];
    const rendered = renderClusters(
      upstreams,
      new Problems().for({ kind: "ProxyServer", namespace: "n", name: "p" }),
      proxyFields({ node: "n/p", serverIP: "192.0.2.1", backends: [], upstreams }),
    );
    expect(rendered).toEqual([good]);
    expect(rendered).not.toEqual([bad]);
  });

  test("camelCase, a wrong enum value and a misplaced field are refused too", () => {
    const assignments: ClusterLoadAssignment[] = [
      // @ts-expect-error proto3 JSON here is snake_case: cluster_name, not clusterName
      { clusterName: "u" },
    ];
    const cluster: Partial<Cluster> = {
      // @ts-expect-error oooi's clusters are EDS only
      type: "STRICT_DNS",
    };
    const chain: FilterChain = {
      name: "c",
      // @ts-expect-error server_names belongs in filter_chain_match, not on the chain
      server_names: ["x.example"],
      filters: [],
    };
    const listener: Partial<Listener> = {
      // @ts-expect-error port_value is a number
      address: { socket_address: { address: "0.0.0.0", port_value: "443" } },
    };
    expect([assignments.length, cluster.type, chain.filters, listener.address?.socket_address.address]).toEqual([
      1,
      "STRICT_DNS",
      [],
      "0.0.0.0",
    ]);
  });
});
