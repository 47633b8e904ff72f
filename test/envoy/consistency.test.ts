import { describe, expect, test } from "vitest";
import { checkConsistency } from "../../src/envoy/validate/consistency.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { TCP_PROXY_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { richModel } from "./proxy-fixture.js";

function base(): EnvoyResources {
  const r = renderEnvoy(richModel());
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return structuredClone(r.resources);
}

const named =
  (name: string) =>
  (x: object): boolean =>
    (x as { name?: string; cluster_name?: string }).name === name ||
    (x as { cluster_name?: string }).cluster_name === name;

/** A TLS listener on `port` whose chains all proxy to "c", with the given matches. */
function listenerWith(matches: Record<string, object | undefined>, port = 443): object {
  return {
    name: `l-${port}`,
    address: { socket_address: { address: "0.0.0.0", port_value: port } },
    filter_chains: Object.entries(matches).map(([name, m]) => ({
      name,
      ...(m ? { filter_chain_match: m } : {}),
      filters: [
        {
          name: "envoy.filters.network.tcp_proxy",
          typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: "c" },
        },
      ],
    })),
  };
}

function withListeners(...listeners: object[]): EnvoyResources {
  return {
    listeners,
    clusters: [
      {
        name: "c",
        type: "EDS",
        eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" } },
        connect_timeout: "1s",
      },
    ],
    endpoints: [{ cluster_name: "c" }],
    routes: [],
  };
}

const src = (address_prefix: string, prefix_len: number): object => ({ address_prefix, prefix_len });

describe("checkConsistency", () => {
  test("a rendered rich model is consistent", () => {
    expect(checkConsistency(base())).toStrictEqual([]);
  });

  test.each<[string, (r: EnvoyResources) => void, string[]]>([
    [
      "a cluster referenced by tcp_proxy is missing",
      (r) => {
        r.clusters = r.clusters.filter((c) => !named("clusters-beta/oauth-openshift:6443")(c));
      },
      [
        'listener "https-443" filter chain "clusters/beta/oauth-openshift": tcp_proxy cluster "clusters-beta/oauth-openshift:6443" does not exist',
      ],
    ],
    [
      "a cluster referenced by a route is missing",
      (r) => {
        r.clusters = r.clusters.filter((c) => !named("vip/192.168.10.200:80")(c));
      },
      [
        'route configuration "http-80" virtual host "clusters/alpha/apps-http": cluster "vip/192.168.10.200:80" does not exist',
      ],
    ],
    [
      "a LOGICAL_DNS cluster with two endpoints (Envoy resolves exactly one name)",
      (r) => {
        const lb = (host: string): object => ({
          endpoint: { address: { socket_address: { address: host, port_value: 443 } } },
        });
        r.clusters = [
          ...r.clusters,
          {
            name: "dns/lb.example.net:443",
            connect_timeout: "5s",
            type: "LOGICAL_DNS",
            load_assignment: {
              cluster_name: "dns/lb.example.net:443",
              endpoints: [{ lb_endpoints: [lb("lb.example.net"), lb("lb2.example.net")] }],
            },
          },
        ];
      },
      ['LOGICAL_DNS cluster "dns/lb.example.net:443" must have a single locality_lb_endpoint and a single lb_endpoint'],
    ],
    [
      "a cluster has no ClusterLoadAssignment",
      (r) => {
        r.endpoints = r.endpoints.filter((c) => !named("tenant-x-gamma/konnectivity-server:8091")(c));
      },
      ['cluster "tenant-x-gamma/konnectivity-server:8091" has no ClusterLoadAssignment'],
    ],
    [
      "the RDS route configuration is missing",
      (r) => {
        r.routes = [];
      },
      ['listener "http-80" filter chain "http-80": RDS route configuration "http-80" does not exist'],
    ],
    [
      "a cluster name repeats",
      (r) => {
        r.clusters.push(structuredClone(r.clusters[0] ?? {}));
      },
      ['duplicate cluster name "clusters-alpha/ignition-server-proxy:443"'],
    ],
    [
      "a ClusterLoadAssignment repeats",
      (r) => {
        r.endpoints.push(structuredClone(r.endpoints[1] ?? {}));
      },
      ['duplicate ClusterLoadAssignment for cluster "clusters-alpha/konnectivity-server:8091"'],
    ],
    [
      "a route configuration name repeats",
      (r) => {
        r.routes.push(structuredClone(r.routes[0] ?? {}));
      },
      ['duplicate route configuration name "http-80"'],
    ],
    [
      "a listener name and its address repeat",
      (r) => {
        r.listeners.push(structuredClone(r.listeners[0] ?? {}));
      },
      ['duplicate listener name "http-80"', 'listeners "http-80" and "http-80" both bind 0.0.0.0:80'],
    ],
    [
      "two listeners bind the same port",
      (r) => {
        const copy = structuredClone(r.listeners[2] ?? {}) as { name: string };
        copy.name = "other";
        r.listeners.push(copy);
      },
      ['listeners "kube-6443" and "other" both bind 0.0.0.0:6443'],
    ],
    [
      "a domain is in two virtual hosts",
      (r) => {
        const rc = r.routes[0] as { virtual_hosts: { name: string; domains: string[] }[] };
        rc.virtual_hosts.push({
          ...structuredClone(rc.virtual_hosts[0] ?? { name: "", domains: [] }),
          name: "copy",
          domains: ["*.APPS.alpha.example.com"],
        });
      },
      [
        'route configuration "http-80": domain "*.apps.alpha.example.com" is in virtual hosts "clusters/alpha/apps-http" and "copy"',
      ],
    ],
    // The value rules of Envoy's protoc-gen-validate annotations (test/peers/envoy-check proves Envoy's side).
    [
      "a tcp_proxy has no stat_prefix",
      (r) => {
        const chain = (r.listeners[1] as { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] })
          .filter_chains[0];
        delete chain?.filters[0]?.typed_config["stat_prefix"];
      },
      ['listener "https-443" filter chain "clusters/alpha/apps-https": tcp_proxy has no stat_prefix'],
    ],
    [
      "an http_connection_manager has an empty stat_prefix",
      (r) => {
        const chain = (r.listeners[0] as { filter_chains: { filters: { typed_config: Record<string, unknown> }[] }[] })
          .filter_chains[0];
        const config = chain?.filters[0]?.typed_config;
        if (config) config["stat_prefix"] = "";
      },
      ['listener "http-80" filter chain "http-80": http_connection_manager has no stat_prefix'],
    ],
    [
      "a connect_timeout is 0s",
      (r) => {
        (r.clusters[0] as Record<string, unknown>)["connect_timeout"] = "0s";
      },
      ['cluster "clusters-alpha/ignition-server-proxy:443": connect_timeout "0s" is not greater than 0s'],
    ],
    [
      "a connect_timeout is negative",
      (r) => {
        (r.clusters[0] as Record<string, unknown>)["connect_timeout"] = "-1.500s";
      },
      ['cluster "clusters-alpha/ignition-server-proxy:443": connect_timeout "-1.500s" is not greater than 0s'],
    ],
    [
      'a cluster and its ClusterLoadAssignment are named ""',
      (r) => {
        (r.clusters[0] as Record<string, unknown>)["name"] = "";
        (r.endpoints[0] as Record<string, unknown>)["cluster_name"] = "";
      },
      [
        "a cluster has an empty name",
        "a ClusterLoadAssignment has an empty cluster_name",
        'listener "https-443" filter chain "clusters/alpha/ignition-server": tcp_proxy cluster "clusters-alpha/ignition-server-proxy:443" does not exist',
      ],
    ],
  ])("reports when %s", (_what, mutate, expected) => {
    const r = base();
    mutate(r);
    expect(checkConsistency(r)).toStrictEqual(expected);
  });
});

describe("filter chain overlap, computed as Envoy does", () => {
  test.each<[string, Record<string, object | undefined>, string[]]>([
    [
      "identical SNI",
      { a: { server_names: ["x.example"] }, b: { server_names: ["x.example"] } },
      ['listener "l-443": filter chains "a" and "b" have overlapping matching rules (server_name x.example)'],
    ],
    [
      "a shared entry of two server_names lists (partial overlap)",
      {
        a: { server_names: ["a.example", "b.example"], transport_protocol: "tls" },
        b: { server_names: ["c.example", "b.example"], transport_protocol: "tls" },
      },
      [
        'listener "l-443": filter chains "a" and "b" have overlapping matching rules (server_name b.example, transport_protocol tls)',
      ],
    ],
    [
      "every other criterion named in the message (destination port, direct source, source type)",
      {
        a: {
          destination_port: 443,
          server_names: ["k"],
          direct_source_prefix_ranges: [src("192.0.2.0", 24)],
          source_type: "EXTERNAL",
        },
        b: {
          destination_port: 443,
          server_names: ["k"],
          direct_source_prefix_ranges: [src("192.0.2.0", 24)],
          source_type: 2,
        },
      },
      [
        'listener "l-443": filter chains "a" and "b" have overlapping matching rules (destination_port 443, server_name k, direct_source_prefix_range 192.0.2.0/24, source_type EXTERNAL)',
      ],
    ],
    ["source types written as numbers that differ", { a: { source_type: 1 }, b: { source_type: 2 } }, []],
    [
      "one IPv6 source range written in two cases (Envoy parses the address: the same range)",
      { a: { source_prefix_ranges: [src("2001:DB8::", 32)] }, b: { source_prefix_ranges: [src("2001:db8::", 32)] } },
      [
        'listener "l-443": filter chains "a" and "b" have overlapping matching rules (source_prefix_range 2001:db8::/32)',
      ],
    ],
    [
      "a shared source range among lists under the same SNI",
      {
        a: { server_names: ["k"], source_prefix_ranges: [src("10.0.0.1", 32), src("10.0.0.2", 32)] },
        b: { server_names: ["k"], source_prefix_ranges: [src("10.0.0.2", 32), src("10.0.0.3", 32)] },
      },
      [
        'listener "l-443": filter chains "a" and "b" have overlapping matching rules (server_name k, source_prefix_range 10.0.0.2/32)',
      ],
    ],
    [
      "a shared source port among lists",
      {
        a: { source_ports: [1, 2] },
        b: { source_ports: [3, 2] },
      },
      ['listener "l-443": filter chains "a" and "b" have overlapping matching rules (source_port 2)'],
    ],
    [
      "a shared ALPN among lists",
      {
        a: { application_protocols: ["h2", "http/1.1"] },
        b: { application_protocols: ["http/1.1"] },
      },
      ['listener "l-443": filter chains "a" and "b" have overlapping matching rules (application_protocol http/1.1)'],
    ],
    [
      "ranges equal once host bits are cleared",
      {
        a: { prefix_ranges: [src("10.1.2.3", 8)] },
        b: { prefix_ranges: [src("10.0.0.0", 8)] },
      },
      ['listener "l-443": filter chains "a" and "b" have overlapping matching rules (prefix_range 10.0.0.0/8)'],
    ],
    [
      "server names differing only in case",
      { a: { server_names: ["API.x"] }, b: { server_names: ["api.x"] } },
      ['listener "l-443": filter chains "a" and "b" have overlapping matching rules (server_name api.x)'],
    ],
    [
      "two chains without any criteria",
      { a: undefined, b: {} },
      ['listener "l-443": filter chains "a" and "b" have overlapping matching rules (any connection)'],
    ],
    [
      "one chain listing a server name twice",
      { a: { server_names: ["x", "x"] } },
      ['listener "l-443": filter chain "a" lists the same matching rules twice (server_name x)'],
    ],
    [
      "a third chain overlapping both others, each pair reported once",
      {
        a: { server_names: ["x", "y"] },
        b: { server_names: ["y", "x"] },
        c: { server_names: ["x"] },
      },
      [
        'listener "l-443": filter chains "a" and "b" have overlapping matching rules (server_name y)',
        'listener "l-443": filter chains "a" and "c" have overlapping matching rules (server_name x)',
        'listener "l-443": filter chains "b" and "c" have overlapping matching rules (server_name x)',
      ],
    ],
    [
      "a partial wildcard",
      { a: { server_names: ["api*.example.com"] }, b: { server_names: ["*.*.example.com"] } },
      [
        'listener "l-443" filter chain "a": server name "api*.example.com" is a partial wildcard (only a leading "*." is allowed)',
        'listener "l-443" filter chain "b": server name "*.*.example.com" is a partial wildcard (only a leading "*." is allowed)',
      ],
    ],
  ])("rejects %s", (_what, matches, expected) => {
    expect(checkConsistency(withListeners(listenerWith(matches)))).toStrictEqual(expected);
  });

  test.each<[string, Record<string, object | undefined>]>([
    [
      "same SNI, disjoint sources",
      {
        a: { server_names: ["k"], source_prefix_ranges: [src("10.0.0.1", 32)] },
        b: { server_names: ["k"], source_prefix_ranges: [src("10.0.0.2", 32)] },
      },
    ],
    [
      "nested source ranges (longest prefix wins at runtime)",
      { a: { source_prefix_ranges: [src("10.0.0.0", 8)] }, b: { source_prefix_ranges: [src("10.0.0.1", 32)] } },
    ],
    ["exact name and a wildcard covering it", { a: { server_names: ["a.apps.x"] }, b: { server_names: ["*.apps.x"] } }],
    ["a TLS-only chain and an any-transport chain", { a: { transport_protocol: "tls" }, b: {} }],
    ["different destination ports", { a: { destination_port: 443 }, b: { destination_port: 8443 } }],
    ["different source types", { a: { source_type: "SAME_IP_OR_LOOPBACK" }, b: { source_type: "EXTERNAL" }, c: {} }],
    [
      "an SNI chain and a no-SNI chain",
      { a: { server_names: ["x"] }, b: { source_prefix_ranges: [src("10.0.0.1", 32)] } },
    ],
    [
      "a single chain",
      { a: { server_names: ["x", "y"], source_prefix_ranges: [src("10.0.0.0", 8), src("10.0.0.0", 16)] } },
    ],
  ])("accepts %s", (_what, matches) => {
    expect(checkConsistency(withListeners(listenerWith(matches)))).toStrictEqual([]);
  });

  test("duplicate chain names are reported", () => {
    const l = listenerWith({ a: { server_names: ["x"] } }) as { filter_chains: object[] };
    l.filter_chains.push({ ...structuredClone(l.filter_chains[0] ?? {}), filter_chain_match: { server_names: ["y"] } });
    expect(checkConsistency(withListeners(l))).toStrictEqual(['listener "l-443": duplicate filter chain name "a"']);
  });

  test("a listener with no chains at all is reported", () => {
    expect(checkConsistency(withListeners(listenerWith({})))).toStrictEqual(['listener "l-443" has no filter chains']);
  });

  test("a default filter chain's cluster is checked too", () => {
    const l = {
      ...listenerWith({ a: { server_names: ["x"] } }),
      default_filter_chain: {
        name: "fallback",
        filters: [{ name: "t", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "s", cluster: "nope" } }],
      },
    };
    expect(checkConsistency(withListeners(l))).toStrictEqual([
      'listener "l-443" filter chain "fallback": tcp_proxy cluster "nope" does not exist',
    ]);
  });
});
