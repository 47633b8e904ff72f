// Filter chain selection as Envoy documents it
// (https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/listener/v3/listener_components.proto#config-listener-v3-filterchainmatch):
// the chains are pruned by destination port, destination IP, server name, transport protocol,
// application protocols, directly connected source IP, source type, source IP and source port,
// in that order. At each step only the chains that match most specifically go on (an exact port
// before "any port", the longest prefix, www.example.com before *.example.com before *.com before a
// chain without server_names); a chain that leaves a criterion unset matches any value at the
// lowest specificity (for a prefix, the same as 0.0.0.0/0). Once a step has narrowed the set there
// is no going back: if a later step leaves nothing, the connection gets default_filter_chain, or is
// closed. Chains still tied after the last step (a 0.0.0.0/0 range beside an unset one, which Envoy
// indexes as different rules and accepts) get the first of them here; Envoy picks either
// (envoyproxy/envoy#34299), so no test may rely on which.
// Written from the documentation and, for /0, the maintainers' word (envoyproxy/envoy#7341);
// IPv4 only (an IPv6 range never contains an IPv4 address). A listener with a filter_chain_matcher
// picks its chain by name instead (matcher.ts).
import { at, list, num, text } from "./json.js";
import { matchChainName } from "./matcher.js";
import { TYPE_URLS } from "./protos.js";

/** What Envoy knows of a downstream connection when it picks a chain. */
export interface ConnectionInfo {
  destinationPort: number;
  destinationIp?: string;
  /** The peer's address; also the directly connected one (no PROXY protocol). */
  sourceIp: string;
  sourcePort?: number;
  /** SNI from the TLS inspector; absent without TLS or without SNI. */
  serverName?: string;
  transportProtocol: "tls" | "raw_buffer";
  /** ALPN the client offers, in its order of preference. */
  applicationProtocols?: string[];
}

/** The chain picked and, when it ends in a TCP proxy to one cluster, that cluster. */
export interface SelectedChain {
  name: string;
  cluster: string | undefined;
}

/** Specificity of a chain's criterion for a connection: higher is more specific, undefined = no match. */
type Score = (match: unknown, conn: ConnectionInfo) => number | undefined;

/** The chain Envoy uses for `conn` on `listener` (proto3 JSON), or undefined when it closes it. */
export function selectChain(listener: unknown, conn: ConnectionInfo): SelectedChain | undefined {
  const matcher = at(listener, "filter_chain_matcher");
  if (matcher !== undefined) {
    // The matcher replaces every filter_chain_match: a name it gives that no chain has is no match (matcher.ts).
    const name = matchChainName(matcher, conn);
    const named =
      name === undefined ? undefined : list(listener, "filter_chains").find((c) => text(c, "name") === name);
    const chosen = named ?? at(listener, "default_filter_chain");
    return chosen === undefined ? undefined : describe(chosen);
  }
  let chains = list(listener, "filter_chains");
  for (const score of STEPS) {
    const scored = chains.map((c) => ({ c, s: score(at(c, "filter_chain_match") ?? {}, conn) }));
    const best = Math.max(...scored.map((x) => x.s ?? -1));
    chains = best < 0 ? [] : scored.filter((x) => x.s === best).map((x) => x.c);
    if (chains.length === 0) break;
  }
  const chosen = chains.length > 0 ? chains[0] : at(listener, "default_filter_chain");
  return chosen === undefined ? undefined : describe(chosen);
}

function describe(chain: unknown): SelectedChain {
  const proxy = list(chain, "filters")
    .map((f) => at(f, "typed_config"))
    .find((c) => at(c, "@type") === TYPE_URLS.tcpProxy);
  return { name: text(chain, "name") ?? "", cluster: text(proxy, "cluster") };
}

/** Exact value (1) before an unset criterion (0). */
function exactOrUnset<T>(configured: readonly T[], value: T | undefined): number | undefined {
  if (configured.length === 0) return 0;
  return value !== undefined && configured.includes(value) ? 1 : undefined;
}

function parseIPv4(ip: string | undefined): number | undefined {
  const m = ip === undefined ? null : /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((a, o) => a * 256 + o, 0);
}

/**
 * Longest prefix among `ranges` (CidrRange JSON) containing `ip`; 0 when none are configured. An
 * unset list means 0.0.0.0/0 (envoyproxy/envoy#7341: "Matching on 0.0.0.0/0 is the default
 * behavior, and it's implied when no prefix_ranges is configured"), so a configured /0 is exactly as
 * specific as none: a chain is not preferred for naming it.
 */
function longestPrefix(ranges: readonly unknown[], ip: string | undefined): number | undefined {
  if (ranges.length === 0) return 0;
  const addr = parseIPv4(ip);
  let best: number | undefined;
  for (const r of ranges) {
    const network = parseIPv4(text(r, "address_prefix"));
    const len = num(r, "prefix_len") ?? 0;
    if (addr === undefined || network === undefined || len > 32) continue;
    const size = 2 ** (32 - len);
    // The range's host bits are ignored, as Envoy's CidrRange masks them off.
    if (Math.floor(addr / size) === Math.floor(network / size)) best = Math.max(best ?? 0, len);
  }
  return best;
}

/** www.example.com (exact) > *.example.com > *.com > no server_names; https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/listener/v3/listener_components.proto (server_names). */
const serverName: Score = (match, conn) => {
  const names = list(match, "server_names").map((n) => String(n).toLowerCase());
  if (names.length === 0) return 0;
  const sni = conn.serverName?.toLowerCase();
  if (sni === undefined || sni === "") return undefined;
  if (names.includes(sni)) return 1_000;
  const labels = sni.split(".");
  // *.b.example.com covers a.b.example.com; more labels after the "*" is more specific.
  for (let i = 1; i < labels.length && labels.slice(i).join(".") !== ""; i++) {
    if (names.includes(`*.${labels.slice(i).join(".")}`)) return labels.length - i;
  }
  return undefined;
};

/** The first ALPN the client offers that a chain lists wins; chains listing none come last. */
const applicationProtocols: Score = (match, conn) => {
  const configured = list(match, "application_protocols").map(String);
  if (configured.length === 0) return 0;
  const offered = conn.applicationProtocols ?? [];
  const i = offered.findIndex((p) => configured.includes(p));
  return i < 0 ? undefined : offered.length - i;
};

/** SAME_IP_OR_LOOPBACK / EXTERNAL as the connection is, else ANY. */
const sourceType: Score = (match, conn) => {
  const type = at(match, "source_type") ?? "ANY";
  if (type === "ANY" || type === 0) return 0;
  const source = parseIPv4(conn.sourceIp);
  const loopback = source === undefined ? conn.sourceIp === "::1" : Math.floor(source / 2 ** 24) === 127;
  const same = loopback || conn.sourceIp === conn.destinationIp;
  if (type === "SAME_IP_OR_LOOPBACK" || type === 1) return same ? 1 : undefined;
  return same ? undefined : 1;
};

const STEPS: readonly Score[] = [
  (m, c) =>
    exactOrUnset(num(m, "destination_port") === undefined ? [] : [num(m, "destination_port")], c.destinationPort),
  (m, c) => longestPrefix(list(m, "prefix_ranges"), c.destinationIp),
  serverName,
  (m, c) =>
    exactOrUnset(
      text(m, "transport_protocol") === undefined ? [] : [text(m, "transport_protocol")],
      c.transportProtocol,
    ),
  applicationProtocols,
  (m, c) => longestPrefix(list(m, "direct_source_prefix_ranges"), c.sourceIp),
  sourceType,
  (m, c) => longestPrefix(list(m, "source_prefix_ranges"), c.sourceIp),
  (m, c) => exactOrUnset(list(m, "source_ports").map(Number), c.sourcePort),
];
