// `oooi explain`'s answer for a connection: listeners + endpoints (proto3 JSON) and a connection
// → the listener, the chain select.ts picks (the selector the renderer is property-tested with),
// its cluster and endpoints, and for every other chain the first criterion that turned it away.
// Pure. When nothing matches, the nearest miss is the chain with the fewest failing criteria.
import { parseIPv4, maskOf } from "../model/ipv4.js";
import { parseRangeText, readChains, type ChainMatch } from "./render/chain-match.js";
import { asArray, asNumber, asString, get } from "../xds/resource/json.js";
import { selectFilterChain, type ConnectionInfo } from "./select.js";

export interface ChainVerdict {
  readonly chain: string;
  readonly cluster: string | undefined;
  /** Criteria of the chain the connection fails, in Envoy's order (empty when it matches them all). */
  readonly misses: readonly string[];
  /** How many of Envoy's criteria, in order, the connection passed before the first miss. */
  readonly matchedBefore: number;
}

export type Explanation =
  | { readonly ok: false; readonly reason: "no-listener"; readonly ports: readonly number[] }
  | {
      readonly ok: false;
      readonly reason: "no-chain";
      readonly listener: string;
      /** The chain the connection came closest to (fewest failing criteria), if the listener has any. */
      readonly nearest: ChainVerdict | undefined;
      readonly others: readonly ChainVerdict[];
    }
  | {
      readonly ok: true;
      readonly listener: string;
      readonly chain: string;
      readonly cluster: string | undefined;
      /** "address:port" of the cluster's load assignment, sorted. */
      readonly endpoints: readonly string[];
      readonly others: readonly ChainVerdict[];
    };

/** Explains how the snapshot's listeners handle `conn`. */
export function explainConnection(
  listeners: readonly object[],
  endpoints: readonly object[],
  conn: ConnectionInfo,
): Explanation {
  const listener = listeners.find((l) => listenerPort(l) === conn.destinationPort);
  if (listener === undefined) {
    return { ok: false, reason: "no-listener", ports: listeners.map(listenerPort).filter((p) => p > 0) };
  }
  const name = asString(get(listener, "name")) ?? "";
  const verdicts = readChains(listener).map((c) => {
    const misses = chainMisses(c.match, conn);
    return {
      chain: c.name,
      cluster: c.cluster,
      misses: misses.map((m) => m.text),
      matchedBefore: misses[0]?.criterion ?? CRITERIA,
    };
  });
  const selected = selectFilterChain(listener, conn);
  if (selected === undefined) {
    // Nearest: fewest misses, then the one that got furthest through Envoy's order (a worker
    // chain missed only by its source beats a hostname chain missed by its SNI).
    const nearest = [...verdicts].sort(
      (a, b) => a.misses.length - b.misses.length || b.matchedBefore - a.matchedBefore,
    )[0];
    return { ok: false, reason: "no-chain", listener: name, nearest, others: verdicts.filter((v) => v !== nearest) };
  }
  return {
    ok: true,
    listener: name,
    chain: selected.name,
    cluster: selected.cluster,
    endpoints: selected.cluster === undefined ? [] : endpointsOf(endpoints, selected.cluster),
    others: verdicts
      .filter((v) => v.chain !== selected.name)
      .map((v) => (v.misses.length > 0 ? v : { ...v, misses: [`${selected.name} is more specific`] })),
  };
}

/**
 * Another port of the same snapshot whose listener would take this connection (same source, SNI,
 * destination address): where a user asking for the wrong port meant to go, e.g. the API on 6443.
 * `sameKind` keeps the ports where the connection would be the same (TLS is not plain HTTP on 80).
 */
export function servedElsewhere(
  listeners: readonly object[],
  endpoints: readonly object[],
  conn: ConnectionInfo,
  sameKind: (port: number) => boolean = () => true,
): { readonly port: number; readonly listener: string; readonly chain: string } | undefined {
  const ports = listeners.map(listenerPort).filter((p) => p > 0 && p !== conn.destinationPort && sameKind(p));
  for (const port of ports) {
    const e = explainConnection(listeners, endpoints, { ...conn, destinationPort: port });
    if (e.ok) return { port, listener: e.listener, chain: e.chain };
  }
  return undefined;
}

function listenerPort(listener: object): number {
  return asNumber(get(listener, "address", "socket_address", "port_value")) ?? 0;
}

/** The load_assignment a cluster carries itself (LOGICAL_DNS), read like one that came over EDS. */
export function inlineAssignments(clusters: readonly object[]): object[] {
  return clusters.flatMap((c) => {
    const inline = get(c, "load_assignment");
    return typeof inline === "object" && inline !== null ? [inline] : [];
  });
}

/** "address:port" of every endpoint of `cluster`'s ClusterLoadAssignment, sorted. */
export function endpointsOf(assignments: readonly object[], cluster: string): string[] {
  const cla = assignments.find((a) => get(a, "cluster_name") === cluster);
  return asArray(get(cla, "endpoints"))
    .flatMap((locality) => asArray(get(locality, "lb_endpoints")))
    .map((e) => {
      const socket = get(e, "endpoint", "address", "socket_address");
      return `${asString(get(socket, "address")) ?? "?"}:${String(asNumber(get(socket, "port_value")) ?? 0)}`;
    })
    .sort();
}

/** Number of FilterChainMatch criteria chainMisses knows, in Envoy's order. */
const CRITERIA = 8;

/** Each criterion of `m` that `conn` fails (its index in Envoy's order), worded for a person. */
export function chainMisses(m: ChainMatch, conn: ConnectionInfo): { criterion: number; text: string }[] {
  const checks: [boolean, () => string][] = [
    [
      m.destinationPort !== 0 && m.destinationPort !== conn.destinationPort,
      () => `destination port ${String(m.destinationPort)}, not ${String(conn.destinationPort)}`,
    ],
    [
      m.prefixRanges.length > 0 && !inAny(m.prefixRanges, conn.destinationIp),
      () => `destination ${m.prefixRanges.join(", ")} does not hold ${conn.destinationIp ?? "(unknown)"}`,
    ],
    [
      m.serverNames.length > 0 && !m.serverNames.some((n) => sniMatches(n, conn.serverName)),
      () => `SNI ${m.serverNames.join(", ")}, not ${conn.serverName ?? "(none)"}`,
    ],
    [
      m.transportProtocol !== "" && m.transportProtocol !== conn.transportProtocol,
      () => `transport ${m.transportProtocol}, not ${conn.transportProtocol}`,
    ],
    [
      m.applicationProtocols.length > 0 && !m.applicationProtocols.some((p) => conn.applicationProtocols?.includes(p)),
      () => `ALPN ${m.applicationProtocols.join(", ")}`,
    ],
    [
      m.directSourcePrefixRanges.length > 0 && !inAny(m.directSourcePrefixRanges, conn.sourceIp),
      () => `direct source ${m.directSourcePrefixRanges.join(", ")} does not hold ${conn.sourceIp}`,
    ],
    [
      m.sourcePrefixRanges.length > 0 && !inAny(m.sourcePrefixRanges, conn.sourceIp),
      () => `source ${m.sourcePrefixRanges.join(", ")} does not hold ${conn.sourceIp}`,
    ],
    [
      m.sourcePorts.length > 0 && !m.sourcePorts.includes(conn.sourcePort ?? 0),
      () => `source port ${m.sourcePorts.join(", ")}`,
    ],
  ];
  return checks.flatMap(([missed, text], criterion) => (missed ? [{ criterion, text: text() }] : []));
}

function inAny(ranges: readonly string[], ip: string | undefined): boolean {
  const addr = ip === undefined ? undefined : parseIPv4(ip);
  if (addr === undefined) return false;
  return ranges.some((text) => {
    const r = parseRangeText(text);
    return r !== undefined && (addr & maskOf(r.prefix)) >>> 0 === r.network;
  });
}

/** Envoy's server_names: exact, or "*.suffix" for any name ending in ".suffix". */
function sniMatches(pattern: string, sni: string | undefined): boolean {
  if (sni === undefined) return false;
  const name = sni.toLowerCase();
  return pattern.startsWith("*.")
    ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1
    : name === pattern;
}
