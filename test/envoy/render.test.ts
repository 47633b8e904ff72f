import { describe, expect, test } from "vitest";
import type { Backend, ProxyModel, AddressUpstream, Upstream } from "../../src/model/types.js";
import { renderEnvoy } from "../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../src/envoy/resources.js";
import { selectFilterChain, type ConnectionInfo } from "../../src/envoy/select.js";
import {
  ALPHA,
  BETA,
  attachmentBackends,
  type AttachmentSpec,
  proxyModel,
  richModel,
  sampleEndpoints,
} from "./proxy-fixture.js";

function ok(model: ProxyModel): EnvoyResources {
  const r = renderEnvoy(model);
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return r.resources;
}

function errors(model: ProxyModel): string[] {
  const r = renderEnvoy(model);
  return r.ok ? [] : r.errors.map((e) => e.message);
}

function names(items: readonly object[], key = "name"): unknown[] {
  return items.map((i) => (i as Record<string, unknown>)[key]);
}

function listener(res: EnvoyResources, name: string): object {
  const l = res.listeners.find((x) => (x as { name: string }).name === name);
  if (!l) throw new Error(`no listener ${name}`);
  return l;
}

const upstream = (name: string, endpoints: AddressUpstream["endpoints"] = []): Upstream => ({
  kind: "address",
  name,
  endpoints,
  connectTimeoutSeconds: 30,
  target: { service: "svc", namespace: "ns", port: 1 },
});
const backend = (b: Partial<Backend> & Pick<Backend, "name" | "port" | "upstream">): Backend => ({
  kind: "kube-apiserver",
  attachment: "ns/a",
  serverNames: [],
  sourcePrefixRanges: [],
  ...b,
});

describe("renderEnvoy output shape", () => {
  test("a single apiserver backend renders exactly one listener, cluster and assignment in Envoy's JSON form", () => {
    const res = ok({
      node: "ns/p",
      serverIP: "192.0.2.1",
      backends: [
        backend({
          name: "ns/a/kube-apiserver",
          port: 6443,
          serverNames: ["api.a.example.com"],
          upstream: "cp/kube-apiserver:6443",
        }),
      ],
      upstreams: [
        {
          kind: "address",
          name: "cp/kube-apiserver:6443",
          endpoints: [{ address: "10.0.0.9", port: 6443 }],
          connectTimeoutSeconds: 2.5,
          target: { service: "svc", namespace: "ns", port: 1 },
        },
      ],
    });
    expect(res).toStrictEqual({
      listeners: [
        {
          name: "kube-6443",
          address: { socket_address: { address: "0.0.0.0", port_value: 6443 } },
          listener_filters: [
            {
              name: "envoy.filters.listener.tls_inspector",
              typed_config: {
                "@type": "type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
              },
            },
          ],
          filter_chains: [
            {
              name: "ns/a/kube-apiserver",
              filter_chain_match: { server_names: ["api.a.example.com"], transport_protocol: "tls" },
              filters: [
                {
                  name: "envoy.filters.network.tcp_proxy",
                  typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                    stat_prefix: "ns_a_kube-apiserver",
                    cluster: "cp/kube-apiserver:6443",
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: "cp/kube-apiserver:6443",
          type: "EDS",
          eds_cluster_config: { eds_config: { ads: {}, resource_api_version: "V3" } },
          connect_timeout: "2.500s",
        },
      ],
      endpoints: [
        {
          cluster_name: "cp/kube-apiserver:6443",
          endpoints: [
            {
              lb_endpoints: [{ endpoint: { address: { socket_address: { address: "10.0.0.9", port_value: 6443 } } } }],
            },
          ],
        },
      ],
      routes: [],
    });
  });

  test("apps HTTP renders an http-80 listener using RDS over ADS with the router filter, and one virtual host per cluster", () => {
    const res = ok(richModel());
    expect(listener(res, "http-80")).toStrictEqual({
      name: "http-80",
      address: { socket_address: { address: "0.0.0.0", port_value: 80 } },
      filter_chains: [
        {
          name: "http-80",
          filters: [
            {
              name: "envoy.filters.network.http_connection_manager",
              typed_config: {
                "@type":
                  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                stat_prefix: "http-80",
                rds: { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: "http-80" },
                // HTTP semantics unchanged: WebSocket upgrades pass.
                upgrade_configs: [{ upgrade_type: "websocket" }],
                http_filters: [
                  {
                    name: "envoy.filters.http.router",
                    typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    expect(res.routes).toStrictEqual([
      {
        name: "http-80",
        ignore_port_in_host_matching: true,
        virtual_hosts: [
          {
            name: "clusters/alpha/apps-http",
            domains: ["*.apps.alpha.example.com"],
            // No route timeout: Envoy's default 15 s would cut long responses.
            routes: [{ match: { prefix: "/" }, route: { cluster: "vip/192.168.10.200:80", timeout: "0s" } }],
          },
        ],
      },
    ]);
  });

  // A target known only by hostname: Envoy resolves it (LOGICAL_DNS), one endpoint inside the
  // cluster, nothing over EDS (envoyproxy.io arch_overview/upstream/service_discovery#logical-dns).
  const dnsUpstream = (name: string, hostname: string, port: number, connectTimeoutSeconds = 30): Upstream => ({
    kind: "dns",
    name,
    hostname,
    port,
    connectTimeoutSeconds,
    target: { service: hostname, namespace: undefined, port },
  });
  const appsByHostname = (upstreams: Upstream[]): ProxyModel => ({
    node: "ns/p",
    serverIP: "192.0.2.1",
    backends: [
      backend({
        name: "ns/a/apps-http",
        kind: "apps-http",
        port: 80,
        serverNames: ["*.apps.a.example.com"],
        upstream: "dns/lb.example.net:80",
      }),
      backend({
        name: "ns/a/apps-https",
        kind: "apps-https",
        port: 443,
        serverNames: ["*.apps.a.example.com"],
        upstream: "dns/lb.example.net:443",
      }),
    ],
    upstreams,
  });

  test("a DNS upstream whose port is out of range is reported on every rendering of the same objects", () => {
    const model = appsByHostname([
      dnsUpstream("dns/lb.example.net:443", "lb.example.net", 65536),
      dnsUpstream("dns/lb.example.net:80", "lb.example.net", 80),
    ]);
    const first = errors(model);
    expect(first.some((e) => e.includes("65536"))).toBe(true);
    expect(errors(model)).toStrictEqual(first);
  });

  test.each([1, 65535])("a DNS upstream on port %i (a bound of the schema's 1–65535) renders", (port) => {
    const res = ok(
      appsByHostname([
        dnsUpstream("dns/lb.example.net:443", "lb.example.net", port),
        dnsUpstream("dns/lb.example.net:80", "lb.example.net", 80),
      ]),
    );
    expect(JSON.stringify(res.clusters[0])).toContain(`"port_value":${String(port)}`);
  });

  test("a DNS upstream renders a LOGICAL_DNS cluster with its one endpoint inline and no ClusterLoadAssignment", () => {
    const res = ok(
      appsByHostname([
        dnsUpstream("dns/lb.example.net:443", "lb.example.net", 443),
        dnsUpstream("dns/lb.example.net:80", "lb.example.net", 80),
      ]),
    );
    const cluster = (port: number): object => ({
      name: `dns/lb.example.net:${port}`,
      type: "LOGICAL_DNS",
      dns_lookup_family: "V4_ONLY",
      load_assignment: {
        cluster_name: `dns/lb.example.net:${port}`,
        endpoints: [
          {
            lb_endpoints: [
              { endpoint: { address: { socket_address: { address: "lb.example.net", port_value: port } } } },
            ],
          },
        ],
      },
      connect_timeout: "30s",
    });
    expect(res.clusters).toStrictEqual([cluster(443), cluster(80)]);
    expect(res.endpoints).toStrictEqual([]);
    const tls = res.listeners.find((l) => (l as { name: string }).name === "https-443");
    expect(JSON.stringify(tls)).toContain('"cluster":"dns/lb.example.net:443"');
    expect(JSON.stringify(res.routes)).toContain('"cluster":"dns/lb.example.net:80"');
  });

  test.each<[string, Upstream[], string[]]>([
    [
      "a DNS upstream with port 0",
      [
        dnsUpstream("dns/lb.example.net:443", "lb.example.net", 443),
        dnsUpstream("dns/lb.example.net:80", "lb.example.net", 0),
      ],
      [
        'upstream "dns/lb.example.net:80": port 0 is out of range',
        'LOGICAL_DNS cluster "dns/lb.example.net:80": its endpoint needs a hostname and a port',
      ],
    ],
    [
      "a DNS upstream with no hostname",
      [dnsUpstream("dns/lb.example.net:443", "", 443), dnsUpstream("dns/lb.example.net:80", "lb.example.net", 80)],
      ['LOGICAL_DNS cluster "dns/lb.example.net:443": its endpoint needs a hostname and a port'],
    ],
    [
      "a DNS upstream with a zero connect timeout",
      [
        dnsUpstream("dns/lb.example.net:443", "lb.example.net", 443, 0),
        dnsUpstream("dns/lb.example.net:80", "lb.example.net", 80),
      ],
      ['upstream "dns/lb.example.net:443": connect timeout 0s is not a positive duration'],
    ],
  ])("%s is refused", (_name, upstreams, expected) => {
    expect(errors(appsByHostname(upstreams))).toEqual(expected);
  });

  test("resources are sorted by name and no listener has a default filter chain", () => {
    const res = ok(richModel());
    expect(names(res.listeners)).toStrictEqual(["http-80", "https-443", "kube-6443"]);
    const clusterNames = names(res.clusters) as string[];
    expect(clusterNames).toStrictEqual([...clusterNames].sort());
    expect(names(res.endpoints, "cluster_name")).toStrictEqual(clusterNames);
    for (const l of res.listeners) {
      expect(l).not.toHaveProperty("default_filter_chain");
      const chains = names((l as { filter_chains: object[] }).filter_chains) as string[];
      expect(chains).toStrictEqual([...chains].sort());
    }
  });

  test("a chain without SNI matches TLS from its source ranges only", () => {
    const res = ok(richModel());
    const chains = (listener(res, "kube-6443") as { filter_chains: { name: string; filter_chain_match?: object }[] })
      .filter_chains;
    expect(chains.find((c) => c.name === "clusters/beta/kubernetes-service")?.filter_chain_match).toStrictEqual({
      transport_protocol: "tls",
      source_prefix_ranges: [
        { address_prefix: "192.168.10.30", prefix_len: 32 },
        { address_prefix: "192.168.10.40", prefix_len: 30 },
      ],
    });
    expect(chains.find((c) => c.name === "clusters/alpha/kubernetes-hostname")).toBeUndefined();
  });

  test("an upstream without endpoints still gets an (empty) ClusterLoadAssignment", () => {
    const res = ok(richModel());
    expect(res.endpoints).toContainEqual({ cluster_name: "tenant-x-gamma/konnectivity-server:8091" });
  });

  test("endpoints are deduplicated and sorted numerically, not as text", () => {
    const res = ok({
      node: "n",
      serverIP: "192.0.2.1",
      backends: [backend({ name: "b", port: 443, serverNames: ["x.example"], upstream: "u" })],
      upstreams: [
        upstream("u", [
          { address: "10.0.0.12", port: 443 },
          { address: "10.0.0.7", port: 443 },
          { address: "10.0.0.12", port: 443 },
          { address: "10.0.0.7", port: 80 },
        ]),
      ],
    });
    const lb = (
      res.endpoints[0] as { endpoints: { lb_endpoints: { endpoint: { address: { socket_address: unknown } } }[] }[] }
    ).endpoints[0]?.lb_endpoints.map((e) => e.endpoint.address.socket_address);
    expect(lb).toStrictEqual([
      { address: "10.0.0.7", port_value: 80 },
      { address: "10.0.0.7", port_value: 443 },
      { address: "10.0.0.12", port_value: 443 },
    ]);
  });

  test("a listener with no backends is omitted, and http-80 exists only with port-80 backends", () => {
    const res = ok(proxyModel([{ ...BETA }], sampleEndpoints));
    expect(names(res.listeners)).toStrictEqual(["https-443", "kube-6443"]);
    expect(res.routes).toStrictEqual([]);
    const only443 = ok({
      node: "n",
      serverIP: "192.0.2.1",
      backends: [backend({ name: "b", port: 443, serverNames: ["x.example"], upstream: "u" })],
      upstreams: [upstream("u")],
    });
    expect(names(only443.listeners)).toStrictEqual(["https-443"]);
    expect(ok({ node: "n", serverIP: "192.0.2.1", backends: [], upstreams: [] })).toStrictEqual({
      listeners: [],
      clusters: [],
      endpoints: [],
      routes: [],
    });
  });
});

describe("renderEnvoy determinism", () => {
  function shuffled(model: ProxyModel): ProxyModel {
    // Reverse every list, including those inside backends and upstreams.
    return {
      ...model,
      backends: [...model.backends].reverse().map((b) => ({
        ...b,
        serverNames: [...b.serverNames].reverse(),
        sourcePrefixRanges: [...b.sourcePrefixRanges].reverse(),
      })),
      upstreams: [...model.upstreams]
        .reverse()
        .map((u) => (u.kind === "address" ? { ...u, endpoints: [...u.endpoints].reverse() } : u)),
    };
  }

  test("the same model in a different order renders byte-identical JSON", () => {
    const a = JSON.stringify(renderEnvoy(richModel()));
    const b = JSON.stringify(renderEnvoy(shuffled(richModel())));
    expect(b).toBe(a);
    expect(JSON.stringify(renderEnvoy(richModel()))).toBe(a);
  });

  test("rendering does not mutate its input", () => {
    const model = richModel();
    const before = JSON.stringify(model);
    renderEnvoy(shuffled(model));
    renderEnvoy(model);
    expect(JSON.stringify(model)).toBe(before);
  });
});

describe("renderEnvoy refuses what Envoy would reject or misroute", () => {
  test("two attachments claiming the same hostname yield an overlap error naming both chains", () => {
    const twin = { ...BETA, name: "beta-twin", cp: "clusters-beta-twin", workers: [] };
    const model = proxyModel([BETA, twin], sampleEndpoints);
    expect(errors(model)).toStrictEqual([
      'listener "https-443": filter chains "clusters/beta-twin/ignition-server" and "clusters/beta/ignition-server" have overlapping matching rules (server_name ignition.beta.example.com, transport_protocol tls)',
      'listener "https-443": filter chains "clusters/beta-twin/konnectivity-server" and "clusters/beta/konnectivity-server" have overlapping matching rules (server_name konnectivity.beta.example.com, transport_protocol tls)',
      'listener "https-443": filter chains "clusters/beta-twin/oauth-openshift" and "clusters/beta/oauth-openshift" have overlapping matching rules (server_name oauth.beta.example.com, transport_protocol tls)',
      'listener "kube-6443": filter chains "clusters/beta-twin/kube-apiserver" and "clusters/beta/kube-apiserver" have overlapping matching rules (server_name api.beta.example.com, transport_protocol tls)',
      'listener "kube-6443": filter chains "clusters/beta-twin/kube-apiserver-internal" and "clusters/beta/kube-apiserver-internal" have overlapping matching rules (server_name api-int.beta.example.com, transport_protocol tls)',
    ]);
  });

  test("worker ranges of two attachments conflict only when identical: nested ranges pass (longest prefix routes)", () => {
    const delta: AttachmentSpec = {
      namespace: "clusters",
      name: "delta",
      domain: "delta.example.com",
      cp: "clusters-delta",
      workers: ["192.168.10.21/32"],
    };
    const errs = errors(proxyModel([ALPHA, delta], sampleEndpoints));
    // kubernetes-hostname shares SNI names and 192.168.10.21 ∈ 192.168.10.20/31 — but different
    // prefixes are different trie keys, so Envoy accepts it and routes by longest prefix.
    expect(errs).toStrictEqual([]);
    const same = proxyModel([ALPHA, { ...delta, workers: ["192.168.10.20/31"] }], sampleEndpoints);
    expect(errors(same)).toContain(
      'listener "kube-6443": filter chains "clusters/alpha/kubernetes-service" and "clusters/delta/kubernetes-service" have overlapping matching rules (transport_protocol tls, source_prefix_range 192.168.10.20/31)',
    );
  });

  test("unusable model values are reported, not rendered", () => {
    const model: ProxyModel = {
      node: "n",
      serverIP: "192.0.2.1",
      backends: [
        backend({
          name: "b",
          port: 443,
          serverNames: ["x.example"],
          sourcePrefixRanges: ["10.0.0.1/24", "nonsense"],
          upstream: "u",
        }),
        backend({
          name: "h",
          port: 80,
          serverNames: ["*.apps.x"],
          sourcePrefixRanges: ["10.0.0.0/24"],
          upstream: "u",
        }),
      ],
      upstreams: [
        {
          kind: "address",
          name: "u",
          endpoints: [
            { address: "kube-apiserver.cp.svc", port: 6443 },
            { address: "10.0.0.1", port: 0 },
          ],
          connectTimeoutSeconds: 0,
          target: { service: "svc", namespace: "ns", port: 1 },
        },
      ],
    };
    const expected = [
      'backend "b": source prefix range "10.0.0.1/24" is not an IPv4 CIDR',
      'backend "b": source prefix range "nonsense" is not an IPv4 CIDR',
      'backend "h": source prefix ranges are not supported on the HTTP listener',
      'upstream "u": connect timeout 0s is not a positive duration',
      'upstream "u": endpoint address "kube-apiserver.cp.svc" is not an IPv4 address',
      'upstream "u": endpoint port 0 is out of range',
    ];
    expect(errors(model)).toStrictEqual(expected);
    // The same objects rendered again (the renderer keeps only what rendered without a problem): said again.
    expect(errors(model)).toStrictEqual(expected);
  });

  test("an upstream with one refused endpoint is reported on every rendering of the same objects", () => {
    for (const endpoint of [
      { address: "not-an-address", port: 443 },
      { address: "10.0.0.2", port: 70000 },
    ]) {
      const model: ProxyModel = {
        node: "n",
        serverIP: "192.0.2.1",
        backends: [backend({ name: "b", port: 443, serverNames: ["x.example"], upstream: "u" })],
        upstreams: [
          {
            kind: "address",
            name: "u",
            endpoints: [{ address: "10.0.0.1", port: 443 }, endpoint],
            connectTimeoutSeconds: 30,
            target: { service: "svc", namespace: "ns", port: 443 },
          },
        ],
      };
      const first = errors(model);
      expect(first).toHaveLength(1);
      expect(errors(model)).toStrictEqual(first);
    }
  });

  test("a backend whose upstream is missing is reported as a dangling tcp_proxy cluster", () => {
    expect(
      errors({
        node: "n",
        serverIP: "192.0.2.1",
        backends: [backend({ name: "b", port: 443, serverNames: ["x.example"], upstream: "gone" })],
        upstreams: [],
      }),
    ).toStrictEqual(['listener "https-443" filter chain "b": tcp_proxy cluster "gone" does not exist']);
  });
});

describe("rendered listeners route connections as docs/reference.md#backends says", () => {
  // Rendered in each test (not at collection): a mutation run credits a test only with what it runs.
  const pick = (
    name: string,
    conn: Omit<ConnectionInfo, "destinationPort" | "transportProtocol"> & Partial<ConnectionInfo>,
  ): string | undefined => {
    const port = Number(name.slice(name.lastIndexOf("-") + 1));
    return selectFilterChain(listener(ok(richModel()), name), {
      destinationPort: port,
      destinationIp: "192.168.10.5",
      // A TLS client that sends no SNI (one dialling the kubernetes Service by IP) is still TLS.
      transportProtocol: "tls",
      ...conn,
    })?.cluster;
  };

  test.each([
    ["kube-6443", "192.168.10.20", "api.alpha.example.com", "clusters-alpha/kube-apiserver:6443"],
    ["kube-6443", "10.99.0.1", "api-int.beta.example.com", "clusters-beta/kube-apiserver:6443"],
    ["kube-6443", "192.168.10.21", undefined, "clusters-alpha/kube-apiserver:6443"],
    ["kube-6443", "192.168.10.42", undefined, "clusters-beta/kube-apiserver:6443"],
    ["kube-6443", "192.168.10.99", undefined, undefined],
    ["kube-6443", "192.168.10.20", "api.unknown.example.com", "clusters-alpha/kube-apiserver:6443"],
    ["https-443", "192.168.10.21", "kubernetes.default.svc", "clusters-alpha/kube-apiserver:6443"],
    ["https-443", "192.168.10.30", "kubernetes", "clusters-beta/kube-apiserver:6443"],
    ["https-443", "192.168.10.99", "kubernetes.default", undefined],
    ["https-443", "192.168.10.99", "oauth.beta.example.com", "clusters-beta/oauth-openshift:6443"],
    ["https-443", "10.0.0.1", "console-openshift-console.apps.alpha.example.com", "vip/192.168.10.200:443"],
    ["https-443", "10.0.0.1", "apps.alpha.example.com", undefined],
    ["https-443", "10.0.0.1", "oauth.gamma.example.org", "tenant-x-gamma/oauth-openshift:6443"],
    ["https-443", "10.0.0.1", undefined, undefined],
  ])("%s from %s with SNI %s reaches %s", (name, sourceIp, serverName, cluster) => {
    expect(pick(name, serverName === undefined ? { sourceIp } : { sourceIp, serverName })).toBe(cluster);
  });

  test("the kubernetes-service chain is reached by TLS without SNI from a worker, never by plain TCP", () => {
    expect(pick("kube-6443", { sourceIp: "192.168.10.20" })).toBe("clusters-alpha/kube-apiserver:6443");
    expect(pick("kube-6443", { sourceIp: "192.168.10.20", transportProtocol: "raw_buffer" })).toBeUndefined();
  });

  test("the HTTP listener's chain has no tcp_proxy cluster", () => {
    expect(
      selectFilterChain(listener(ok(richModel()), "http-80"), {
        destinationPort: 80,
        sourceIp: "10.0.0.1",
        transportProtocol: "raw_buffer",
      }),
    ).toStrictEqual({ name: "http-80", cluster: undefined });
  });

  test("the fixture covers every backend kind", () => {
    expect(new Set(attachmentBackends(ALPHA).map((b) => b.kind)).size).toBe(9);
  });
});
