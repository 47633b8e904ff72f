// A listener's filter_chain_matcher (proto3 JSON) + a connection → the name of the filter chain the
// unified matcher API gives, or undefined when it matches nothing. Pure; IPv4 only. The rules, by
// document (docs/reference.md#filter-chain-matcher):
// - matching_listener: the action is the chain's name as a google.protobuf.StringValue.
// - xds.type.matcher.v3.Matcher: a tree looks its input up (exact map; prefix map, longest prefix;
//   a custom matcher); an OnMatch whose nested matcher does not match fails, and the matcher falls
//   to its on_no_match, if any.
// - IPMatcher: range matchers holding the address, longest prefix then declaration order; once a
//   longer one exists, an exclusive one is skipped.
// - ServerNameMatcher: the exact name, then "*.suffix" from the longest suffix, then "*", until one
//   of them accepts.
// Matcher lists and other custom matchers match nothing (oooi renders neither).
import { parseIPv4 } from "../model/ipv4.js";
import { asArray, asNumber, asRecord, asString, get } from "../xds/resource/json.js";
import {
  DESTINATION_PORT_INPUT_TYPE_URL,
  IP_MATCHER_TYPE_URL,
  SERVER_NAME_INPUT_TYPE_URL,
  SERVER_NAME_MATCHER_TYPE_URL,
  SOURCE_IP_INPUT_TYPE_URL,
  STRING_VALUE_TYPE_URL,
  TRANSPORT_PROTOCOL_INPUT_TYPE_URL,
} from "../xds/resource/type-urls.js";
import { parseRange } from "./render/chain-match.js";

/** The connection's properties a matcher input reads. */
export interface MatcherConnection {
  readonly destinationPort: number;
  readonly sourceIp: string;
  readonly serverName?: string;
  readonly transportProtocol: string;
}

type Input = (conn: MatcherConnection) => string | undefined;

const INPUTS = new Map<unknown, Input>([
  [DESTINATION_PORT_INPUT_TYPE_URL, (c) => `${c.destinationPort}`],
  [SOURCE_IP_INPUT_TYPE_URL, (c) => c.sourceIp],
  [SERVER_NAME_INPUT_TYPE_URL, (c) => (c.serverName ? c.serverName : undefined)],
  [TRANSPORT_PROTOCOL_INPUT_TYPE_URL, (c) => c.transportProtocol],
]);

/** The chain name `matcher` gives for `conn`; undefined = no match. */
export function matchedChainName(matcher: unknown, conn: MatcherConnection): string | undefined {
  const tree = get(matcher, "matcher_tree");
  const hit = tree === undefined ? undefined : lookUp(tree, conn);
  if (hit !== undefined) return hit;
  const otherwise = get(matcher, "on_no_match");
  return otherwise === undefined ? undefined : takeOnMatch(otherwise, conn);
}

function takeOnMatch(onMatch: unknown, conn: MatcherConnection): string | undefined {
  const nested = get(onMatch, "matcher");
  if (nested !== undefined) return matchedChainName(nested, conn);
  const config = get(onMatch, "action", "typed_config");
  if (get(config, "@type") !== STRING_VALUE_TYPE_URL) return undefined;
  return asString(get(config, "value")) ?? "";
}

function lookUp(tree: unknown, conn: MatcherConnection): string | undefined {
  const value = INPUTS.get(get(tree, "input", "typed_config", "@type"))?.(conn);
  if (value === undefined) return undefined;
  const exact = asRecord(get(tree, "exact_match_map", "map"));
  if (exact !== undefined) return Object.hasOwn(exact, value) ? takeOnMatch(exact[value], conn) : undefined;
  const prefix = asRecord(get(tree, "prefix_match_map", "map"));
  if (prefix !== undefined) {
    let best: string | undefined;
    for (const key of Object.keys(prefix)) {
      if (value.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
    }
    return best === undefined ? undefined : takeOnMatch(prefix[best], conn);
  }
  const custom = get(tree, "custom_match", "typed_config");
  const type = get(custom, "@type");
  if (type === IP_MATCHER_TYPE_URL) return byAddress(custom, value, conn);
  if (type === SERVER_NAME_MATCHER_TYPE_URL) return byServerName(custom, value, conn);
  return undefined;
}

/** Prefix length of the longest range of `ranges` holding `address`; -1 when none does. */
function heldBy(ranges: unknown, address: number): number {
  let best = -1;
  for (const r of asArray(ranges)) {
    const range = parseRange(asString(get(r, "address_prefix")) ?? "", asNumber(get(r, "prefix_len")) ?? 0);
    if (range === undefined || range.prefix <= best) continue;
    const mask = range.prefix === 0 ? 0 : (~0 << (32 - range.prefix)) >>> 0;
    if ((address & mask) >>> 0 === range.network) best = range.prefix;
  }
  return best;
}

function byAddress(config: unknown, value: string, conn: MatcherConnection): string | undefined {
  const address = parseIPv4(value);
  if (address === undefined) return undefined;
  const held = asArray(get(config, "range_matchers"))
    .map((matcher, index) => ({ matcher, index, length: heldBy(get(matcher, "ranges"), address) }))
    .filter((h) => h.length >= 0);
  held.sort((x, y) => y.length - x.length || x.index - y.index);
  const top = held[0]?.length;
  for (const h of held) {
    if (h.length !== top && get(h.matcher, "exclusive") === true) continue;
    const onMatch = get(h.matcher, "on_match");
    const name = onMatch === undefined ? undefined : takeOnMatch(onMatch, conn);
    if (name !== undefined) return name;
  }
  return undefined;
}

function byServerName(config: unknown, value: string, conn: MatcherConnection): string | undefined {
  const owner = new Map<string, unknown>();
  for (const m of asArray(get(config, "domain_matchers"))) {
    for (const d of asArray(get(m, "domains"))) owner.set((asString(d) ?? "").toLowerCase(), m);
  }
  const name = value.toLowerCase();
  const candidates = [name];
  for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) candidates.push(`*${name.slice(dot)}`);
  candidates.push("*");
  for (const candidate of candidates) {
    const m = owner.get(candidate);
    if (m === undefined) continue;
    const chain = takeOnMatch(get(m, "on_match"), conn);
    if (chain !== undefined) return chain;
  }
  return undefined;
}
