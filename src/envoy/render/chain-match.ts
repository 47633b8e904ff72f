// A listener's filter chains as Envoy's filter-chain manager sees them: every FilterChainMatch
// criterion normalized (server names lower-cased, CIDRs with host bits cleared), plus the chain's
// TCP proxy cluster. Shared by the consistency check and the selector so both agree with Envoy.
import { formatIPv4, maskOf, parseIPv4 } from "../../model/ipv4.js";
import { asArray, asNumber, asRecord, asString, get } from "../../xds/resource/json.js";
import { STRING_VALUE_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../xds/resource/type-urls.js";

/** FilterChainMatch.ConnectionSourceType. */
export type SourceType = "ANY" | "SAME_IP_OR_LOOPBACK" | "EXTERNAL";

/** One filter chain's match criteria; an empty list or "" or 0 means "any". */
export interface ChainMatch {
  readonly destinationPort: number;
  readonly prefixRanges: readonly string[];
  readonly serverNames: readonly string[];
  readonly transportProtocol: string;
  readonly applicationProtocols: readonly string[];
  readonly directSourcePrefixRanges: readonly string[];
  readonly sourceType: SourceType;
  readonly sourcePrefixRanges: readonly string[];
  readonly sourcePorts: readonly number[];
}

/** A filter chain reduced to what selection and validation need. */
export interface ChainView {
  readonly name: string;
  readonly match: ChainMatch;
  /** tcp_proxy's cluster, when the chain ends in a TCP proxy to a single cluster. */
  readonly cluster: string | undefined;
  /** The original chain object. */
  readonly chain: Record<string, unknown>;
}

const SOURCE_TYPES: readonly SourceType[] = ["ANY", "SAME_IP_OR_LOOPBACK", "EXTERNAL"];

/** An IPv4 CIDR range as parsed from CidrRange JSON. */
export interface Range {
  readonly network: number;
  readonly prefix: number;
}

/**
 * CidrRange JSON → "a.b.c.d/n" with host bits cleared, as Envoy's CidrRange does; other text
 * (e.g. IPv6) is kept verbatim so it still compares by value.
 */
export function cidrText(range: unknown): string {
  const address = asString(get(range, "address_prefix")) ?? "";
  const prefix = asNumber(get(range, "prefix_len")) ?? 0;
  const parsed = parseRange(address, prefix);
  return parsed ? `${formatIPv4(parsed.network)}/${parsed.prefix}` : `${address.toLowerCase()}/${prefix}`;
}

/** Parses an IPv4 range from its parts; undefined for IPv6 or malformed input. */
export function parseRange(address: string, prefix: number): Range | undefined {
  const ip = parseIPv4(address);
  if (ip === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) return undefined;
  return { network: (ip & maskOf(prefix)) >>> 0, prefix };
}

/** Parses normalized "a.b.c.d/n" text back into a range; undefined when not IPv4. */
export function parseRangeText(text: string): Range | undefined {
  const slash = text.lastIndexOf("/");
  return slash < 0 ? undefined : parseRange(text.slice(0, slash), Number(text.slice(slash + 1)));
}

function sourceType(v: unknown): SourceType {
  if (typeof v === "number") return SOURCE_TYPES[v] ?? "ANY";
  return SOURCE_TYPES.find((t) => t === v) ?? "ANY";
}

/** Reads a FilterChain's filter_chain_match (absent = match everything). */
export function readChainMatch(chain: unknown): ChainMatch {
  const m = asRecord(get(chain, "filter_chain_match")) ?? {};
  const strings = (v: unknown): string[] => asArray(v).map((s) => asString(s) ?? "");
  return {
    destinationPort: asNumber(m["destination_port"]) ?? 0,
    prefixRanges: asArray(m["prefix_ranges"]).map(cidrText),
    serverNames: strings(m["server_names"]).map((s) => s.toLowerCase()),
    transportProtocol: asString(m["transport_protocol"]) ?? "",
    applicationProtocols: strings(m["application_protocols"]),
    directSourcePrefixRanges: asArray(m["direct_source_prefix_ranges"]).map(cidrText),
    sourceType: sourceType(m["source_type"]),
    sourcePrefixRanges: asArray(m["source_prefix_ranges"]).map(cidrText),
    sourcePorts: asArray(m["source_ports"]).map((p) => asNumber(p) ?? 0),
  };
}

/** The cluster of the chain's tcp_proxy filter, recognized by its typed_config type. */
export function tcpProxyCluster(chain: unknown): string | undefined {
  for (const filter of asArray(get(chain, "filters"))) {
    if (get(filter, "typed_config", "@type") === TCP_PROXY_TYPE_URL) {
      return asString(get(filter, "typed_config", "cluster"));
    }
  }
  return undefined;
}

/** Views of chain objects read before: rendered resources are immutable, unchanged chains are the same objects. */
const views = new WeakMap<object, ChainView>();

/** The listener's filter chains (not the default chain), in listener order. */
export function readChains(listener: unknown): ChainView[] {
  return asArray(get(listener, "filter_chains")).map(chainView);
}

/** One filter chain's view, kept per chain object. */
export function chainView(c: unknown): ChainView {
  const chain = asRecord(c);
  const known = chain === undefined ? undefined : views.get(chain);
  if (known !== undefined) return known;
  const view: ChainView = {
    name: asString(chain?.["name"]) ?? "",
    match: readChainMatch(chain ?? {}),
    cluster: tcpProxyCluster(chain ?? {}),
    chain: chain ?? {},
  };
  if (chain !== undefined) views.set(chain, view);
  return view;
}

/** One point of a FilterChainMatch's criteria space: one value per criterion, "" / 0 = any. */
export interface MatchCombo {
  readonly destinationPort: number;
  readonly prefixRange: string;
  readonly serverName: string;
  readonly transportProtocol: string;
  readonly applicationProtocol: string;
  readonly directSourcePrefixRange: string;
  readonly sourceType: SourceType;
  readonly sourcePrefixRange: string;
  readonly sourcePort: number;
}

/**
 * Every combination of a match's list-valued criteria, as Envoy indexes a chain: one entry per
 * destination prefix × server name × ALPN × direct source prefix × source prefix × source port
 * (an empty list contributes one "any" entry). Two identical combos make Envoy reject a listener.
 */
export function* expandMatch(m: ChainMatch): Generator<MatchCombo> {
  const orAny = <T>(list: readonly T[], any: T): readonly T[] => (list.length > 0 ? list : [any]);
  for (const prefixRange of orAny(m.prefixRanges, "")) {
    for (const serverName of orAny(m.serverNames, "")) {
      for (const applicationProtocol of orAny(m.applicationProtocols, "")) {
        for (const directSourcePrefixRange of orAny(m.directSourcePrefixRanges, "")) {
          for (const sourcePrefixRange of orAny(m.sourcePrefixRanges, "")) {
            for (const sourcePort of orAny(m.sourcePorts, 0)) {
              yield {
                destinationPort: m.destinationPort,
                prefixRange,
                serverName,
                transportProtocol: m.transportProtocol,
                applicationProtocol,
                directSourcePrefixRange,
                sourceType: m.sourceType,
                sourcePrefixRange,
                sourcePort,
              };
            }
          }
        }
      }
    }
  }
}

/** Human-readable criteria of a combo, naming only those that are not "any". */
export function describeCombo(c: MatchCombo): string {
  const parts: string[] = [];
  if (c.destinationPort !== 0) parts.push(`destination_port ${c.destinationPort}`);
  if (c.prefixRange !== "") parts.push(`prefix_range ${c.prefixRange}`);
  if (c.serverName !== "") parts.push(`server_name ${c.serverName}`);
  if (c.transportProtocol !== "") parts.push(`transport_protocol ${c.transportProtocol}`);
  if (c.applicationProtocol !== "") parts.push(`application_protocol ${c.applicationProtocol}`);
  if (c.directSourcePrefixRange !== "") parts.push(`direct_source_prefix_range ${c.directSourcePrefixRange}`);
  if (c.sourceType !== "ANY") parts.push(`source_type ${c.sourceType}`);
  if (c.sourcePrefixRange !== "") parts.push(`source_prefix_range ${c.sourcePrefixRange}`);
  if (c.sourcePort !== 0) parts.push(`source_port ${c.sourcePort}`);
  return parts.length > 0 ? parts.join(", ") : "any connection";
}

/** Chain names below a matcher node, by node: rendered matchers keep unchanged parts as the same objects. */
const namesBelow = new WeakMap<object, readonly string[]>();

/**
 * The chain names a filter_chain_matcher's actions name (google.protobuf.StringValue actions,
 * https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener),
 * in the order met, wherever they sit in the tree (maps, custom matchers, on_no_match).
 */
export function matcherChainNames(matcher: unknown): readonly string[] {
  if (Array.isArray(matcher)) return matcher.flatMap((n) => matcherChainNames(n));
  const record = asRecord(matcher);
  if (record === undefined) return [];
  const known = namesBelow.get(record);
  if (known !== undefined) return known;
  const names: string[] = [];
  const typed = get(record, "action", "typed_config");
  if (get(typed, "@type") === STRING_VALUE_TYPE_URL) names.push(asString(get(typed, "value")) ?? "");
  for (const v of Object.values(record)) if (typeof v === "object" && v !== null) names.push(...matcherChainNames(v));
  namesBelow.set(record, names);
  return names;
}
