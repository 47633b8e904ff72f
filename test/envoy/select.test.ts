import { describe, expect, test } from "vitest";
import { TCP_PROXY_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { selectFilterChain, type ConnectionInfo } from "../../src/envoy/select.js";

/** A listener whose chain NAME proxies to cluster "to-NAME", with the given filter_chain_match. */
function listener(matches: Record<string, object | undefined>, extra: object = {}): object {
  return {
    name: "l",
    address: { socket_address: { address: "0.0.0.0", port_value: 443 } },
    filter_chains: Object.entries(matches).map(([name, m]) => ({
      name,
      ...(m ? { filter_chain_match: m } : {}),
      filters: [
        {
          name: "envoy.filters.network.tcp_proxy",
          typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: name, cluster: `to-${name}` },
        },
      ],
    })),
    ...extra,
  };
}

const src = (address_prefix: string, prefix_len: number): object => ({ address_prefix, prefix_len });

function conn(c: Partial<ConnectionInfo> = {}): ConnectionInfo {
  return {
    destinationPort: 443,
    destinationIp: "192.0.2.1",
    sourceIp: "10.0.0.5",
    sourcePort: 40000,
    transportProtocol: "tls",
    ...c,
  };
}

function pick(l: object, c: Partial<ConnectionInfo>): string | undefined {
  return selectFilterChain(l, conn(c))?.name;
}

describe("selectFilterChain: server names", () => {
  const l = listener({
    exact: { server_names: ["api.apps.example.com"] },
    apps: { server_names: ["*.apps.example.com"] },
    domain: { server_names: ["*.example.com"] },
    tld: { server_names: ["*.com"] },
    none: undefined,
  });

  test.each([
    ["api.apps.example.com", "exact"],
    ["console.apps.example.com", "apps"],
    ["a.b.apps.example.com", "apps"],
    ["apps.example.com", "domain"],
    ["www.example.com", "domain"],
    ["example.com", "tld"],
    ["example.org", "none"],
    ["API.Apps.Example.COM", "exact"],
  ])("SNI %s picks the most specific chain: %s", (serverName, expected) => {
    expect(pick(l, { serverName })).toBe(expected);
  });

  test("no SNI picks the chain without server_names", () => {
    expect(pick(l, {})).toBe("none");
  });

  test("a wildcard never matches its own bare suffix and nothing matches when no chain lacks SNI", () => {
    const only = listener({ apps: { server_names: ["*.apps.example.com"] } });
    expect(pick(only, { serverName: "apps.example.com" })).toBeUndefined();
    expect(pick(only, {})).toBeUndefined();
  });

  test("returns the chain's tcp_proxy cluster", () => {
    expect(selectFilterChain(l, conn({ serverName: "x.apps.example.com" }))).toStrictEqual({
      name: "apps",
      cluster: "to-apps",
    });
  });
});

test('a chain without a name (valid without a filter_chain_matcher) is selected by its match, named ""', () => {
  const tcp = { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "x", cluster: "to-x" };
  const unnamed = {
    filter_chain_match: { server_names: ["a.example.com"] },
    filters: [{ name: "envoy.filters.network.tcp_proxy", typed_config: tcp }],
  };
  const l = { name: "l", filter_chains: [unnamed] };
  expect(selectFilterChain(l, conn({ serverName: "a.example.com" }))).toStrictEqual({ name: "", cluster: "to-x" });
});

describe("selectFilterChain: no backtracking", () => {
  test("an exact SNI match restricted to other sources does not fall back to a matching wildcard", () => {
    const l = listener({
      exact: { server_names: ["kubernetes.x"], source_prefix_ranges: [src("10.0.0.1", 32)] },
      wildcard: { server_names: ["*.x"] },
    });
    expect(pick(l, { serverName: "kubernetes.x", sourceIp: "10.0.0.1" })).toBe("exact");
    expect(pick(l, { serverName: "kubernetes.x", sourceIp: "10.0.0.2" })).toBeUndefined();
    expect(pick(l, { serverName: "other.x", sourceIp: "10.0.0.2" })).toBe("wildcard");
  });

  test("an SNI match whose ALPN does not fit does not fall back to a chain without SNI", () => {
    const l = listener({ h2: { server_names: ["example.com"], application_protocols: ["h2"] }, any: {} });
    expect(pick(l, { serverName: "example.com", applicationProtocols: ["http/1.1"] })).toBeUndefined();
    expect(pick(l, { serverName: "example.com", applicationProtocols: ["http/1.1", "h2"] })).toBe("h2");
  });

  test("the longest source prefix wins even when its source ports then exclude the connection", () => {
    const l = listener({
      narrow: { source_prefix_ranges: [src("10.0.0.0", 24)], source_ports: [1000] },
      wide: { source_prefix_ranges: [src("10.0.0.0", 8)] },
    });
    expect(pick(l, { sourceIp: "10.0.0.5", sourcePort: 1000 })).toBe("narrow");
    expect(pick(l, { sourceIp: "10.0.0.5", sourcePort: 2000 })).toBeUndefined();
    expect(pick(l, { sourceIp: "10.0.1.5", sourcePort: 2000 })).toBe("wide");
  });

  test("a chain for the exact destination port shadows port-less chains, and the default chain catches the rest", () => {
    const l = listener(
      { port: { destination_port: 443, server_names: ["a.example"] }, anyport: {} },
      {
        default_filter_chain: {
          name: "fallback",
          filters: [{ name: "t", typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: "f", cluster: "sink" } }],
        },
      },
    );
    expect(pick(l, { serverName: "a.example" })).toBe("port");
    expect(selectFilterChain(l, conn({ serverName: "b.example" }))).toStrictEqual({
      name: "fallback",
      cluster: "sink",
    });
    expect(pick(l, { destinationPort: 8443, serverName: "b.example" })).toBe("anyport");
  });

  test("a transport protocol match shadows chains without one", () => {
    const l = listener({
      tls: { transport_protocol: "tls", source_prefix_ranges: [src("10.9.0.0", 16)] },
      any: {},
    });
    expect(pick(l, { sourceIp: "10.9.1.1" })).toBe("tls");
    expect(pick(l, { sourceIp: "10.0.0.5" })).toBeUndefined();
    expect(pick(l, { sourceIp: "10.0.0.5", transportProtocol: "raw_buffer" })).toBe("any");
  });
});

describe("selectFilterChain: each criterion", () => {
  test("source prefix: longest match first, then chains without source ranges", () => {
    const l = listener({
      host: { source_prefix_ranges: [src("10.0.0.5", 32)] },
      subnet: { source_prefix_ranges: [src("10.0.0.0", 24), src("172.16.0.0", 12)] },
      rest: undefined,
    });
    expect(pick(l, { sourceIp: "10.0.0.5" })).toBe("host");
    expect(pick(l, { sourceIp: "10.0.0.6" })).toBe("subnet");
    expect(pick(l, { sourceIp: "172.31.255.255" })).toBe("subnet");
    expect(pick(l, { sourceIp: "192.168.1.1" })).toBe("rest");
  });

  test("source prefix ranges compare with host bits cleared", () => {
    const l = listener({ a: { source_prefix_ranges: [src("10.0.0.77", 24)] } });
    expect(pick(l, { sourceIp: "10.0.0.1" })).toBe("a");
    expect(pick(l, { sourceIp: "10.0.1.1" })).toBeUndefined();
  });

  test("destination IP: longest prefix_ranges match, then chains without", () => {
    const l = listener({
      vip: { prefix_ranges: [src("192.0.2.1", 32)] },
      net: { prefix_ranges: [src("192.0.2.0", 24)] },
      any: {},
    });
    expect(pick(l, { destinationIp: "192.0.2.1" })).toBe("vip");
    expect(pick(l, { destinationIp: "192.0.2.9" })).toBe("net");
    expect(pick(l, { destinationIp: "198.51.100.1" })).toBe("any");
  });

  test("transport protocol: exact, else chains without one", () => {
    const l = listener({ tls: { transport_protocol: "tls" }, raw: { transport_protocol: "raw_buffer" } });
    expect(pick(l, { transportProtocol: "tls" })).toBe("tls");
    expect(pick(l, { transportProtocol: "raw_buffer" })).toBe("raw");
  });

  test("application protocols: first client ALPN that some chain names, else chains without", () => {
    const l = listener({
      h2: { application_protocols: ["h2"] },
      h1: { application_protocols: ["http/1.1", "http/1.0"] },
      none: {},
    });
    expect(pick(l, { applicationProtocols: ["h2", "http/1.1"] })).toBe("h2");
    expect(pick(l, { applicationProtocols: ["spdy", "http/1.0", "h2"] })).toBe("h1");
    expect(pick(l, { applicationProtocols: ["acme"] })).toBe("none");
    expect(pick(l, {})).toBe("none");
  });

  test("direct source IP is matched before source type and source IP", () => {
    const l = listener({
      direct: { direct_source_prefix_ranges: [src("10.0.0.0", 8)] },
      source: { source_prefix_ranges: [src("10.0.0.5", 32)] },
    });
    expect(pick(l, { sourceIp: "10.0.0.5" })).toBe("direct");
    expect(pick(l, { sourceIp: "192.168.0.1" })).toBeUndefined();
  });

  test("source type: local (loopback or same IP) vs external, else ANY", () => {
    const l = listener({ local: { source_type: "SAME_IP_OR_LOOPBACK" }, external: { source_type: "EXTERNAL" } });
    expect(pick(l, { sourceIp: "127.0.0.1" })).toBe("local");
    expect(pick(l, { sourceIp: "192.0.2.1", destinationIp: "192.0.2.1" })).toBe("local");
    expect(pick(l, { sourceIp: "10.0.0.5" })).toBe("external");
    const anyOnly = listener({ local: { source_type: "SAME_IP_OR_LOOPBACK" }, any: {} });
    expect(pick(anyOnly, { sourceIp: "10.0.0.5" })).toBe("any");
    expect(pick(anyOnly, { sourceIp: "127.0.0.2" })).toBe("local");
  });

  test("source port: exact, else chains without source ports", () => {
    const l = listener({ p: { source_ports: [5000, 5001] }, any: {} });
    expect(pick(l, { sourcePort: 5001 })).toBe("p");
    expect(pick(l, { sourcePort: 6000 })).toBe("any");
    const noPort: ConnectionInfo = { destinationPort: 443, sourceIp: "10.0.0.5", transportProtocol: "tls" };
    expect(selectFilterChain(l, noPort)?.name).toBe("any");
  });

  test("a chain with no filter_chain_match takes everything that reaches it; none at all means no chain", () => {
    expect(pick(listener({ all: undefined }), { sourceIp: "203.0.113.9", transportProtocol: "raw_buffer" })).toBe(
      "all",
    );
    expect(selectFilterChain({ name: "empty" }, conn())).toBeUndefined();
  });

  test("a chain ending in an HTTP connection manager has no cluster", () => {
    const l = {
      filter_chains: [
        {
          name: "http",
          filters: [
            {
              name: "hcm",
              typed_config: {
                "@type":
                  "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
              },
            },
          ],
        },
      ],
    };
    expect(selectFilterChain(l, conn())).toStrictEqual({ name: "http", cluster: undefined });
  });
});
