// An Envoy-like filter-chain selector: given a listener (proto3 JSON) and a connection's
// properties, pick the chain Envoy's filter-chain manager would. Criteria are tried in Envoy's
// order; at each one only the most specific value present among the remaining chains is kept,
// and there is no backtracking: if a later criterion then matches nothing, the connection gets
// the default filter chain, or none. A listener with a filter_chain_matcher picks by chain name
// instead (chain-matcher-select.ts). Pure; IPv4 only (IPv6 ranges never match).
import { maskOf, parseIPv4 } from "../model/ipv4.js";
import { matchedChainName } from "./chain-matcher-select.js";
import { expandMatch, parseRangeText, readChains, tcpProxyCluster, type MatchCombo } from "./render/chain-match.js";
import { asString, get } from "../xds/resource/json.js";

/** What Envoy knows about a downstream connection when it selects a filter chain. */
export interface ConnectionInfo {
  /** Local port the connection arrived on. */
  destinationPort: number;
  /** Local address the connection arrived on. */
  destinationIp?: string;
  /** Peer address (also the directly connected address: no PROXY protocol here). */
  sourceIp: string;
  sourcePort?: number;
  /** SNI as reported by the TLS inspector; absent for plain text or TLS without SNI. */
  serverName?: string;
  transportProtocol: "tls" | "raw_buffer";
  /** ALPN offered by the client, in its order of preference. */
  applicationProtocols?: string[];
}

/** The chosen filter chain and, for a TCP proxy chain, the cluster it forwards to. */
export interface SelectedChain {
  name: string;
  cluster: string | undefined;
}

interface Entry {
  readonly chain: number;
  readonly combo: MatchCombo;
}

type Stage = (entries: readonly Entry[], conn: ConnectionInfo) => Entry[];

/** Picks the filter chain Envoy would use for `conn`; undefined when Envoy would close it. */
export function selectFilterChain(listener: object, conn: ConnectionInfo): SelectedChain | undefined {
  const chains = readChains(listener);
  const matcher = get(listener, "filter_chain_matcher");
  if (matcher !== undefined) {
    // The matcher replaces every filter_chain_match; a name no chain has is no match.
    const name = matchedChainName(matcher, conn);
    const named = name === undefined ? undefined : chains.find((c) => c.name === name);
    return named ? { name: named.name, cluster: named.cluster } : defaultChain(listener);
  }
  let entries: Entry[] = chains.flatMap((c, chain) => [...expandMatch(c.match)].map((combo) => ({ chain, combo })));
  for (const stage of STAGES) {
    entries = stage(entries, conn);
    if (entries.length === 0) return defaultChain(listener);
  }
  // Several chains left means identical criteria, which Envoy rejects; take the first.
  const chosen = chains[entries[0]?.chain ?? -1];
  return chosen ? { name: chosen.name, cluster: chosen.cluster } : defaultChain(listener);
}

function defaultChain(listener: object): SelectedChain | undefined {
  const chain = get(listener, "default_filter_chain");
  if (chain === undefined) return undefined;
  return { name: asString(get(chain, "name")) ?? "", cluster: tcpProxyCluster(chain) };
}

/** Entries whose value equals `value`, or else those whose value is the wildcard `any`. */
function exactOrAny<T>(entries: readonly Entry[], pick: (c: MatchCombo) => T, value: T, any: T): Entry[] {
  const exact = entries.filter((e) => pick(e.combo) === value);
  return exact.length > 0 ? exact : entries.filter((e) => pick(e.combo) === any);
}

/** Entries whose range is the longest one containing `ip` ("" is the catch-all, length 0). */
function longestPrefix(entries: readonly Entry[], pick: (c: MatchCombo) => string, ip: string | undefined): Entry[] {
  const addr = ip === undefined ? undefined : parseIPv4(ip);
  const length = (text: string): number => {
    if (text === "") return 0;
    const r = parseRangeText(text);
    if (!r || addr === undefined) return -1;
    return (addr & maskOf(r.prefix)) >>> 0 === r.network ? r.prefix : -1;
  };
  const scored = entries.map((e) => ({ e, len: length(pick(e.combo)) }));
  const best = Math.max(-1, ...scored.map((s) => s.len));
  return best < 0 ? [] : scored.filter((s) => s.len === best).map((s) => s.e);
}

function serverNameStage(entries: readonly Entry[], conn: ConnectionInfo): Entry[] {
  const sni = (conn.serverName ?? "").toLowerCase();
  const exact = entries.filter((e) => e.combo.serverName === sni);
  if (exact.length > 0) return exact;
  // Wildcards from the longest suffix: a.b.example.com tries *.b.example.com, *.example.com, *.com.
  for (let dot = sni.indexOf(".", 1); dot !== -1 && dot < sni.length - 1; dot = sni.indexOf(".", dot + 1)) {
    const wildcard = "*" + sni.slice(dot);
    const found = entries.filter((e) => e.combo.serverName === wildcard);
    if (found.length > 0) return found;
  }
  return entries.filter((e) => e.combo.serverName === "");
}

function applicationProtocolStage(entries: readonly Entry[], conn: ConnectionInfo): Entry[] {
  for (const alpn of conn.applicationProtocols ?? []) {
    const found = entries.filter((e) => e.combo.applicationProtocol === alpn);
    if (found.length > 0) return found;
  }
  return entries.filter((e) => e.combo.applicationProtocol === "");
}

function isLoopback(ip: string): boolean {
  const addr = parseIPv4(ip);
  return addr !== undefined ? addr >>> 24 === 127 : ip === "::1";
}

function sourceTypeStage(entries: readonly Entry[], conn: ConnectionInfo): Entry[] {
  const local = isLoopback(conn.sourceIp) || conn.sourceIp === conn.destinationIp;
  const specific = entries.filter((e) => e.combo.sourceType === (local ? "SAME_IP_OR_LOOPBACK" : "EXTERNAL"));
  return specific.length > 0 ? specific : entries.filter((e) => e.combo.sourceType === "ANY");
}

const STAGES: readonly Stage[] = [
  (es, c) => exactOrAny(es, (m) => m.destinationPort, c.destinationPort, 0),
  (es, c) => longestPrefix(es, (m) => m.prefixRange, c.destinationIp),
  serverNameStage,
  (es, c) => exactOrAny(es, (m) => m.transportProtocol, c.transportProtocol as string, ""),
  applicationProtocolStage,
  (es, c) => longestPrefix(es, (m) => m.directSourcePrefixRange, c.sourceIp),
  sourceTypeStage,
  (es, c) => longestPrefix(es, (m) => m.sourcePrefixRange, c.sourceIp),
  (es, c) => exactOrAny(es, (m) => m.sourcePort, c.sourcePort ?? 0, 0),
];
