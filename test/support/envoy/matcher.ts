// A listener's filter_chain_matcher as Envoy documents it: the unified matcher API picks a chain
// by name, once per connection. Written from
//   https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener
//     (the action is the chain's name as a StringValue; an unknown name, or no match at all, means
//     the default chain or a closed connection; the chains' filter_chain_match is then ignored)
//   https://www.envoyproxy.io/docs/envoy/latest/xds/type/matcher/v3/matcher.proto
//     (a tree looks its input up in an exact map, or a prefix map where the longest prefix wins;
//     a nested matcher that does not match makes its OnMatch fail, and the matcher above then
//     falls to its own on_no_match; no on_no_match = no match)
//   https://www.envoyproxy.io/docs/envoy/latest/xds/type/matcher/v3/ip.proto
//     (IPMatcher: range matchers containing the address, longest prefix first then declaration
//     order; a more specific one that fails hides the exclusive ones behind it, not the others)
//   https://www.envoyproxy.io/docs/envoy/latest/xds/type/matcher/v3/domain.proto
//     (ServerNameMatcher: the exact name, then wildcards from the longest suffix down to "*",
//     until a matcher's action accepts)
//   https://www.envoyproxy.io/docs/envoy/latest/api-v3/extensions/matching/common_inputs/network/v3/network_inputs.proto
//     (the connection's inputs). Matcher lists and other custom matchers match nothing here.
import { at, list, num, text } from "./json.js";
import type { ConnectionInfo } from "./select.js";

const NETWORK = "type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.";
const STRING_VALUE = "type.googleapis.com/google.protobuf.StringValue";

/** The value each network input reads from the connection; undefined = the input has no value. */
const INPUTS: Readonly<Record<string, (c: ConnectionInfo) => string | undefined>> = {
  [`${NETWORK}DestinationPortInput`]: (c) => String(c.destinationPort),
  [`${NETWORK}DestinationIPInput`]: (c) => c.destinationIp,
  [`${NETWORK}SourceIPInput`]: (c) => c.sourceIp,
  [`${NETWORK}DirectSourceIPInput`]: (c) => c.sourceIp,
  [`${NETWORK}SourcePortInput`]: (c) => (c.sourcePort === undefined ? undefined : String(c.sourcePort)),
  [`${NETWORK}ServerNameInput`]: (c) => (c.serverName === undefined || c.serverName === "" ? undefined : c.serverName),
  [`${NETWORK}TransportProtocolInput`]: (c) => c.transportProtocol,
};

/** The chain name the matcher's action gives for `conn`, or undefined when it does not match. */
export function matchChainName(matcher: unknown, conn: ConnectionInfo): string | undefined {
  return evaluate(matcher, conn);
}

function evaluate(matcher: unknown, conn: ConnectionInfo): string | undefined {
  const tree = at(matcher, "matcher_tree");
  const found = tree === undefined ? undefined : evaluateTree(tree, conn);
  if (found !== undefined) return found;
  const fallback = at(matcher, "on_no_match");
  return fallback === undefined ? undefined : onMatch(fallback, conn);
}

function onMatch(on: unknown, conn: ConnectionInfo): string | undefined {
  const nested = at(on, "matcher");
  if (nested !== undefined) return evaluate(nested, conn);
  const config = at(on, "action", "typed_config");
  return at(config, "@type") === STRING_VALUE ? (text(config, "value") ?? "") : undefined;
}

function evaluateTree(tree: unknown, conn: ConnectionInfo): string | undefined {
  const read = INPUTS[text(tree, "input", "typed_config", "@type") ?? ""];
  const value = read?.(conn);
  if (value === undefined) return undefined;
  const exact = at(tree, "exact_match_map", "map");
  if (exact !== undefined) {
    const on = at(exact, value);
    return on === undefined ? undefined : onMatch(on, conn);
  }
  const prefixes = at(tree, "prefix_match_map", "map");
  if (prefixes !== undefined) {
    const longest = Object.keys(prefixes as object)
      .filter((p) => value.startsWith(p))
      .sort((a, b) => b.length - a.length)[0];
    return longest === undefined ? undefined : onMatch(at(prefixes, longest), conn);
  }
  const custom = at(tree, "custom_match", "typed_config");
  switch (at(custom, "@type")) {
    case "type.googleapis.com/xds.type.matcher.v3.IPMatcher":
      return ipMatch(custom, value, conn);
    case "type.googleapis.com/xds.type.matcher.v3.ServerNameMatcher":
      return serverNameMatch(custom, value, conn);
    default:
      return undefined;
  }
}

function ipv4(textValue: string | undefined): number | undefined {
  const m = textValue === undefined ? null : /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(textValue);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.some((o) => o > 255) ? undefined : octets.reduce((a, o) => a * 256 + o, 0);
}

/** The longest of `ranges` (CidrRange JSON) containing `ip`, or undefined. */
function longestContaining(ranges: readonly unknown[], ip: number): number | undefined {
  let best: number | undefined;
  for (const r of ranges) {
    const network = ipv4(text(r, "address_prefix"));
    const len = num(r, "prefix_len") ?? 0;
    if (network === undefined || len > 32) continue;
    const size = 2 ** (32 - len);
    if (Math.floor(ip / size) === Math.floor(network / size)) best = Math.max(best ?? -1, len);
  }
  return best;
}

function ipMatch(config: unknown, value: string, conn: ConnectionInfo): string | undefined {
  const ip = ipv4(value);
  if (ip === undefined) return undefined;
  const candidates = list(config, "range_matchers")
    .map((m, order) => ({ m, order, len: longestContaining(list(m, "ranges"), ip) }))
    .filter((c): c is { m: unknown; order: number; len: number } => c.len !== undefined)
    .sort((a, b) => b.len - a.len || a.order - b.order);
  const longest = candidates[0]?.len;
  for (const c of candidates) {
    // An exclusive matcher is passed over once a longer one exists, whatever that one answered.
    if (at(c.m, "exclusive") === true && c.len !== longest) continue;
    const on = at(c.m, "on_match");
    const found = on === undefined ? undefined : onMatch(on, conn);
    if (found !== undefined) return found;
  }
  return undefined;
}

function serverNameMatch(config: unknown, value: string, conn: ConnectionInfo): string | undefined {
  const name = value.toLowerCase();
  const labels = name.split(".");
  // www.example.com, then *.example.com, *.com, and last "*".
  const tries = [name, ...labels.slice(1).map((_, i) => `*.${labels.slice(i + 1).join(".")}`), "*"];
  const matchers = list(config, "domain_matchers");
  for (const domain of tries) {
    const m = matchers.find((d) => list(d, "domains").some((x) => String(x).toLowerCase() === domain));
    if (m === undefined) continue;
    const found = onMatch(at(m, "on_match"), conn);
    if (found !== undefined) return found;
  }
  return undefined;
}
