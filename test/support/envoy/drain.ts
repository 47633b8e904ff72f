// Which open connections Envoy drains when a listener is updated over LDS, as its documentation
// states the rule:
//   https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/listeners/network_filter_chain#filter-chain-only-update
//     an update that changes only filter chains adds, updates and removes chains; a connection
//     whose old chain has a protobuf-equivalent chain in the new listener stays open, the
//     connections of every other old chain are drained; an update that changes anything else of
//     the listener drains the whole listener.
//   https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener
//     with filter_chain_matcher, connections are drained when their named chain's configuration
//     changes, not when the matcher is the only field that changed.
// With filter_chain_match the match is part of the chain, so a chain whose match changed is a
// removed chain; with the matcher a chain is its name and filters. A removed listener drains all.
import { at, list } from "./json.js";

/** Fields of a listener a filter-chain-only update may change. */
const CHAIN_FIELDS = new Set(["filter_chains", "default_filter_chain", "filter_chain_matcher"]);

/** JSON text with object keys sorted: equal text = equal message (proto3 JSON of one schema). */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}

function withoutChains(listener: unknown): string {
  const rest = Object.entries((listener ?? {}) as Record<string, unknown>).filter(([k]) => !CHAIN_FIELDS.has(k));
  return canonical(Object.fromEntries(rest));
}

/**
 * The chains (canonical JSON) of listener `before` whose connections survive its update to `after`
 * (undefined = removed): none when the update is not filter-chain only, else every chain `after`
 * holds unchanged. A connection whose chain is not among them is drained.
 */
export function keptChains(before: unknown, after: unknown): ReadonlySet<string> {
  if (after === undefined || withoutChains(before) !== withoutChains(after)) return new Set();
  return new Set(
    [...list(after, "filter_chains"), at(after, "default_filter_chain")].filter((c) => c !== undefined).map(canonical),
  );
}
