// Differential: on seeded random listeners and connections, src/envoy/select.ts (used by the model's
// isolation properties) and the independent Envoy stand-in's selector (test/support/envoy/select.ts,
// written from Envoy's FilterChainMatch documentation) pick the same filter chain. Listeners Envoy
// would reject (the stand-in's own rules: duplicate matches) are left out, as Envoy never runs them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { selectFilterChain, type ConnectionInfo } from "../../src/envoy/select.js";
import { TCP_PROXY_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { envoyRejects } from "../support/envoy/rules.js";
import { selectChain } from "../support/envoy/select.js";
import { TYPE_URLS } from "../support/envoy/protos.js";

const cidr = (text: string): object => {
  const [address_prefix, len] = text.split("/");
  return { address_prefix, prefix_len: Number(len) };
};
const some = <T>(values: readonly T[]): fc.Arbitrary<T[]> => fc.subarray([...values]);
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined });

const DEST_RANGES = ["10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.1.2.77/24"];
const SOURCE_RANGES = ["10.1.2.3/32", "10.1.2.0/24", "10.1.0.0/16", "127.0.0.0/8", "0.0.0.0/0"];
const SERVER_NAMES = ["a.example.com", "*.example.com", "*.com", "b.a.example.com", "*.a.example.com", "other.net"];

const match = fc
  .record({
    destination_port: maybe(fc.constantFrom(443, 6443)),
    prefix_ranges: some(DEST_RANGES),
    server_names: some(SERVER_NAMES),
    transport_protocol: maybe(fc.constantFrom("tls", "raw_buffer")),
    application_protocols: some(["h2", "http/1.1"]),
    direct_source_prefix_ranges: some(SOURCE_RANGES.slice(0, 3)),
    source_type: fc.constantFrom("ANY", "SAME_IP_OR_LOOPBACK", "EXTERNAL"),
    source_prefix_ranges: some(SOURCE_RANGES),
    source_ports: some([1000, 2000]),
  })
  .map((m) => {
    // proto3 JSON: unset fields are absent, ranges are CidrRange objects.
    const out: Record<string, unknown> = {};
    if (m.destination_port !== undefined) out["destination_port"] = m.destination_port;
    if (m.prefix_ranges.length > 0) out["prefix_ranges"] = m.prefix_ranges.map(cidr);
    if (m.server_names.length > 0) out["server_names"] = m.server_names;
    if (m.transport_protocol !== undefined) out["transport_protocol"] = m.transport_protocol;
    if (m.application_protocols.length > 0) out["application_protocols"] = m.application_protocols;
    if (m.direct_source_prefix_ranges.length > 0)
      out["direct_source_prefix_ranges"] = m.direct_source_prefix_ranges.map(cidr);
    if (m.source_type !== "ANY") out["source_type"] = m.source_type;
    if (m.source_prefix_ranges.length > 0) out["source_prefix_ranges"] = m.source_prefix_ranges.map(cidr);
    if (m.source_ports.length > 0) out["source_ports"] = m.source_ports;
    return out;
  });

const chain = (name: string, m: object | undefined): object => ({
  name,
  ...(m === undefined || Object.keys(m).length === 0 ? {} : { filter_chain_match: m }),
  filters: [
    {
      name: "envoy.filters.network.tcp_proxy",
      typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: name, cluster: `to-${name}` },
    },
  ],
});

const listener = fc
  .record({
    matches: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 6, arbitrary: match }), {
      minLength: 1,
      maxLength: 6,
    }),
    withDefault: fc.boolean(),
  })
  .map(({ matches, withDefault }) => ({
    name: "l",
    address: { socket_address: { address: "0.0.0.0", port_value: 443 } },
    filter_chains: matches.map((m, i) => chain(`c${String(i)}`, m)),
    ...(withDefault ? { default_filter_chain: chain("default", undefined) } : {}),
  }))
  .filter((l) => envoyRejects(TYPE_URLS.listener, l) === undefined);

const connection: fc.Arbitrary<ConnectionInfo> = fc
  .record({
    destinationPort: fc.constantFrom(443, 6443, 80),
    destinationIp: maybe(fc.constantFrom("10.1.2.9", "10.1.9.9", "10.2.0.1", "10.1.2.3")),
    sourceIp: fc.constantFrom("10.1.2.3", "10.1.2.4", "10.1.5.5", "127.0.0.1", "192.168.0.1", "10.1.2.9"),
    sourcePort: maybe(fc.constantFrom(1000, 2000, 3000)),
    serverName: maybe(
      fc.constantFrom("a.example.com", "b.a.example.com", "c.b.a.example.com", "x.example.com", "other.net", "x.org"),
    ),
    transportProtocol: fc.constantFrom("tls" as const, "raw_buffer" as const),
    applicationProtocols: maybe(fc.constantFrom(["h2"], ["http/1.1"], ["h2", "http/1.1"], ["http/1.1", "h2"], ["h3"])),
  })
  .map((c) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) as unknown as ConnectionInfo);

describe("filter chain selection: src/envoy/select.ts agrees with the independent stand-in", () => {
  it("on seeded random listeners and connections", () => {
    let picked = 0;
    let closed = 0;
    fc.assert(
      fc.property(listener, fc.array(connection, { minLength: 1, maxLength: 8 }), (l, conns) => {
        for (const conn of conns) {
          const ours = selectFilterChain(l, conn);
          const envoy = selectChain(l, conn);
          expect(ours, JSON.stringify({ listener: l.filter_chains, conn })).toEqual(envoy);
          if (envoy === undefined) closed += 1;
          else picked += 1;
        }
      }),
      { seed: 1101, numRuns: 800 },
    );
    // Both outcomes were exercised, not only "nothing matched".
    expect(picked).toBeGreaterThan(500);
    expect(closed).toBeGreaterThan(100);
  });
});
