// The clusters a tcp_proxy or a route sends to, read once for both the references (make-before-break)
// and the consistency check. Envoy's cluster_specifier is a oneof of `cluster` and
// `weighted_clusters` (envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy, route.v3.RouteAction).
import { describe, expect, it } from "vitest";
import { referencesOf, sentTo } from "../../../src/xds/resource/references.js";
import { checkChainRefs, checkRouteConfig } from "../../../src/envoy/validate/resource-rules.js";
import { LISTENER_TYPE_URL, ROUTE_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../../src/xds/resource/type-urls.js";

const cases: { name: string; action: object; sent: string[] }[] = [
  { name: "one cluster", action: { cluster: "a" }, sent: ["a"] },
  {
    name: "weighted clusters",
    action: {
      weighted_clusters: {
        clusters: [
          { name: "a", weight: 1 },
          { name: "b", weight: 2 },
        ],
      },
    },
    sent: ["a", "b"],
  },
  {
    name: "cluster set beside weighted clusters: the oneof's cluster",
    action: { cluster: "a", weighted_clusters: { clusters: [{ name: "b", weight: 1 }] } },
    sent: ["a"],
  },
  {
    name: "a weighted cluster without a name",
    action: { weighted_clusters: { clusters: [{ weight: 1 }, { name: "b", weight: 1 }] } },
    sent: ["", "b"],
  },
  { name: "neither", action: {}, sent: [] },
];

const tcpListener = (action: object): object => ({
  name: "l",
  filter_chains: [
    { name: "c", filters: [{ name: "t", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", ...action } }] },
  ],
});
const routeConfig = (action: object): object => ({
  name: "r",
  virtual_hosts: [{ name: "v", domains: ["*"], routes: [{ match: { prefix: "/" }, route: action }] }],
});

describe("sentTo", () => {
  it.each(cases)("$name", ({ action, sent }) => {
    expect(sentTo(action)).toEqual(sent);
  });

  it.each(cases)("$name: the references name what is sent to, but no nameless cluster", ({ action, sent }) => {
    const named = [...new Set(sent.filter((c) => c !== ""))].sort();
    expect(referencesOf(LISTENER_TYPE_URL, tcpListener(action)).clusters).toEqual(named);
    expect(referencesOf(ROUTE_TYPE_URL, routeConfig(action)).clusters).toEqual(named);
  });

  it.each(cases)("$name: the check finds missing exactly what is sent to", ({ action, sent }) => {
    const none = { clusters: new Set<string>(), routeConfigs: new Set<string>() };
    const chain = (tcpListener(action) as { filter_chains: unknown[] }).filter_chains[0];
    expect(checkChainRefs("l", "c", chain, none).map((f) => f.at.cluster)).toEqual(sent);
    expect(checkRouteConfig(routeConfig(action), none.clusters).map((f) => f.at.cluster)).toEqual(sent);
    const all = { clusters: new Set(sent), routeConfigs: new Set<string>() };
    expect(checkChainRefs("l", "c", chain, all)).toEqual([]);
    expect(checkRouteConfig(routeConfig(action), all.clusters)).toEqual([]);
  });
});
