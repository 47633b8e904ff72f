// withChainMatcher on hand-written TLS listeners the model does not make today (it is a general
// rewrite): each listener's matcher form picks, for every connection of a grid, what Envoy picks on
// the filter_chain_match form — both read by the Envoy stand-in (test/support/envoy/select.ts) —
// or the rewrite refuses it, naming the fallthrough, exactly where the two forms would differ.
import { describe, expect, it } from "vitest";
import { withChainMatcher } from "../../src/envoy/render/chain-matcher.js";
import type { Listener } from "../../src/envoy/render/envoy-types.js";
import { TCP_PROXY_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { selectChain, type ConnectionInfo } from "../support/envoy/select.js";

interface ChainSpec {
  readonly name: string;
  readonly serverNames?: readonly string[];
  readonly sources?: readonly string[];
}

function listener(chains: readonly ChainSpec[]): Listener {
  return {
    name: "tls-443",
    address: { socket_address: { address: "0.0.0.0", port_value: 443 } },
    listener_filters: [],
    filter_chains: chains.map((c) => ({
      name: c.name,
      filter_chain_match: {
        transport_protocol: "tls",
        ...(c.serverNames === undefined ? {} : { server_names: [...c.serverNames] }),
        ...(c.sources === undefined
          ? {}
          : {
              source_prefix_ranges: c.sources.map((s) => {
                const [address_prefix = "", len = "32"] = s.split("/");
                return { address_prefix, prefix_len: Number(len) };
              }),
            }),
      },
      filters: [
        {
          name: "envoy.filters.network.tcp_proxy",
          typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: c.name, cluster: c.name },
        },
      ],
    })),
  } as unknown as Listener;
}

const SOURCES = ["10.1.2.3", "192.0.2.7"];
const NAMES = [undefined, "a.x.com", "b.x.com", "k", "b.example.com", "a.example.com", "zzz.org", "other.org"];

function grid(): ConnectionInfo[] {
  return SOURCES.flatMap((sourceIp) =>
    NAMES.map((serverName) => ({
      destinationPort: 443,
      sourceIp,
      transportProtocol: "tls" as const,
      ...(serverName === undefined ? {} : { serverName }),
    })),
  );
}

describe("withChainMatcher on listeners the model does not make", () => {
  it.each<[string, ChainSpec[]]>([
    [
      "a ranged and an open chain under one server name",
      [
        { name: "A", serverNames: ["k"], sources: ["10.0.0.0/8"] },
        { name: "B", serverNames: ["k"] },
      ],
    ],
    ["chains without server names, one ranged", [{ name: "A", sources: ["10.0.0.0/8"] }]],
    [
      "a ranged chain of one name beside a chain of a name sharing its parent",
      [
        { name: "P", serverNames: ["b.example.com"], sources: ["10.0.0.0/8"] },
        { name: "Q", serverNames: ["a.example.com"] },
      ],
    ],
    [
      "a ranged and an open chain of a name a wildcard chain also covers",
      [
        { name: "A", serverNames: ["a.x.com"], sources: ["10.0.0.0/8"] },
        { name: "B", serverNames: ["a.x.com"] },
        { name: "W", serverNames: ["*.x.com"] },
      ],
    ],
    [
      "one ranged chain listing a wildcard and a name below it",
      [{ name: "A", serverNames: ["*.x.com", "a.x.com"], sources: ["10.0.0.0/8"] }],
    ],
  ])("%s: the matcher form picks what Envoy picks", (_, chains) => {
    const l = listener(chains);
    const m = withChainMatcher(l);
    expect(m.ok, m.ok ? "" : m.fallthroughs.map((f) => f.message).join("\n")).toBe(true);
    if (!m.ok) return;
    for (const conn of grid()) {
      const what = `${conn.sourceIp} ${conn.serverName ?? "(no SNI)"}`;
      expect(selectChain(m.listener, conn), what).toEqual(selectChain(l, conn));
    }
  });

  it("refuses a ranged chain whose other clients a wildcard chain would take, naming both", () => {
    const l = listener([
      { name: "G", serverNames: ["a.x.com"], sources: ["10.0.0.0/8"] },
      { name: "O", serverNames: ["*.x.com", "zzz.org"] },
    ]);
    // On the filter_chain_match form a client outside G's range with SNI a.x.com is closed, not sent to O.
    expect(
      selectChain(l, { destinationPort: 443, sourceIp: "192.0.2.7", serverName: "a.x.com", transportProtocol: "tls" }),
    ).toBeUndefined();
    const m = withChainMatcher(l);
    expect(m.ok).toBe(false);
    if (m.ok) return;
    expect(m.fallthroughs.map((f) => [f.chain, f.serverName])).toEqual([["G", "a.x.com"]]);
    expect(m.fallthroughs[0]?.message).toContain('would reach "O" through filter_chain_matcher');
  });
});
