// The Envoy stand-in's drain rule (test/support/envoy/drain.ts), a row per documented case: which
// open connections an LDS update ends. From Envoy's "filter chain only update" and "matching filter
// chains in listeners" documentation, cited in drain.ts.
import { describe, expect, it } from "vitest";
import { canonical, keptChains } from "../support/envoy/drain.js";

const tcp = (name: string, cluster = "c"): Record<string, unknown> => ({
  name,
  filters: [
    {
      name: "envoy.filters.network.tcp_proxy",
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
        stat_prefix: name,
        cluster,
      },
    },
  ],
});
const matched = (name: string, ranges: string[]): Record<string, unknown> => ({
  ...tcp(name),
  filter_chain_match: { source_prefix_ranges: ranges.map((r) => ({ address_prefix: r, prefix_len: 32 })) },
});
const listener = (chains: Record<string, unknown>[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: "l",
  address: { socket_address: { address: "0.0.0.0", port_value: 443 } },
  filter_chains: chains,
  ...extra,
});

/** Whether a connection on chain `on` of `before` survives the update to `after`. */
const survives = (before: unknown, after: unknown, on: unknown): boolean =>
  keptChains(before, after).has(canonical(on));

const ROWS: readonly { name: string; before: unknown; after: unknown; on: unknown; survives: boolean }[] = [
  {
    name: "an unchanged chain survives another chain's change",
    before: listener([tcp("a"), tcp("b")]),
    after: listener([tcp("a"), tcp("b", "other")]),
    on: tcp("a"),
    survives: true,
  },
  {
    name: "a chain whose filters changed is drained",
    before: listener([tcp("a"), tcp("b")]),
    after: listener([tcp("a"), tcp("b", "other")]),
    on: tcp("b"),
    survives: false,
  },
  {
    name: "a chain whose filter_chain_match changed is a removed chain: drained",
    before: listener([matched("k", ["10.0.0.1"])]),
    after: listener([matched("k", ["10.0.0.1", "10.0.0.2"])]),
    on: matched("k", ["10.0.0.1"]),
    survives: false,
  },
  {
    name: "only the filter_chain_matcher changed: nothing drains",
    before: listener([tcp("k")], {
      filter_chain_matcher: { matcher_tree: { input: {}, exact_match_map: { map: {} } } },
    }),
    after: listener([tcp("k")], {
      filter_chain_matcher: { matcher_tree: { input: {}, prefix_match_map: { map: {} } } },
    }),
    on: tcp("k"),
    survives: true,
  },
  {
    name: "a chain removed from the listener is drained",
    before: listener([tcp("a"), tcp("b")]),
    after: listener([tcp("a")]),
    on: tcp("b"),
    survives: false,
  },
  {
    name: "a change outside the chains (listener_filters) drains the whole listener",
    before: listener([tcp("a")]),
    after: listener([tcp("a")], { listener_filters: [{ name: "envoy.filters.listener.tls_inspector" }] }),
    on: tcp("a"),
    survives: false,
  },
  {
    name: "a removed listener drains everything",
    before: listener([tcp("a")]),
    after: undefined,
    on: tcp("a"),
    survives: false,
  },
  {
    name: "the default chain survives when unchanged",
    before: listener([tcp("a")], { default_filter_chain: tcp("d") }),
    after: listener([tcp("a", "x")], { default_filter_chain: tcp("d") }),
    on: tcp("d"),
    survives: true,
  },
  {
    name: "field order is not a change (protobuf equivalence)",
    before: listener([tcp("a")]),
    after: listener([Object.fromEntries(Object.entries(tcp("a")).reverse())]),
    on: tcp("a"),
    survives: true,
  },
];

describe("the stand-in drains as Envoy documents it", () => {
  it.each(ROWS)("$name", ({ before, after, on, survives: expected }) => {
    expect(survives(before, after, on)).toBe(expected);
  });
});
