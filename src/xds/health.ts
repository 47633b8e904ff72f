// One health reading of the data plane, shared by the status page, /status.json and (later) the
// CLI and the operator: per client and type whether it holds its group's current version. CSDS's
// client_status (introspect/state.ts) answers a narrower question — was the latest response we
// sent ACKed — so a client the server holds back after a NACK reads SYNCED there; here it is BEHIND.
// Pure: the caller says what each group's current versions are, so the server stays ignorant of
// where resources come from.
import { nearestName } from "../api/validate.js";
import type { SnapshotCache } from "./cache/cache.js";
import { isProbe, type NodeStatus, type TypeStatus } from "./client-status.js";
import { typeLabel } from "./introspect/state.js";

export type HealthState = "SYNCED" | "BEHIND" | "ERROR" | "NOT_SENT";

/** Why a client is BEHIND: the server holds newer versions back after a NACK of this client, it has
 * not answered the latest response yet, or the newest version is not sent yet. */
export type BehindReason = "held-back-after-nack" | "awaiting-ack" | "not-yet-sent";

export interface TypeHealth {
  readonly typeUrl: string;
  readonly state: HealthState;
  /** The group's current version of this type; undefined when the group has none. */
  readonly current: string | undefined;
  /** The version the client last ACKed. */
  readonly acked: string | undefined;
  readonly reason: BehindReason | undefined;
  /** Envoy's error text when ERROR. */
  readonly nack: string | undefined;
}

export interface ClientHealth {
  readonly id: string;
  readonly group: string;
  readonly connected: boolean;
  /** GONE: no stream open since this clock time (ms), its last disconnect; undefined while connected. */
  readonly goneSince: number | undefined;
  /** A probe (`oooi verify`'s fetch), not a data plane: listed, never counted in the headline. */
  readonly probe: boolean;
  /** Set when no known group has this name. */
  readonly unknownGroup: { readonly nearest: string | undefined } | undefined;
  readonly types: readonly TypeHealth[];
}

export interface HealthSummary {
  readonly clients: readonly ClientHealth[];
  /** Connected clients (not probes) with a BEHIND type and none in ERROR. */
  readonly behind: number;
  /** Connected clients (not probes) with a type in ERROR. */
  readonly error: number;
  /** Distinct unknown groups connected clients (not probes) named. */
  readonly unknownGroups: readonly { readonly group: string; readonly nearest: string | undefined }[];
  /** "3 proxies behind · 1 in error · unknown group …", or "" when healthy. */
  readonly headline: string;
}

/** The current version of each type of a group (typeUrl → version), or undefined for a group without one. */
export type CurrentVersions = (group: string) => ReadonlyMap<string, string> | undefined;

/** Each group's current versions as `cache` holds them. */
export function cacheVersions(cache: Pick<SnapshotCache, "getSnapshot">): CurrentVersions {
  return (group) => {
    const snapshot = cache.getSnapshot(group);
    return snapshot && new Map([...snapshot.types].map(([typeUrl, t]) => [typeUrl, t.version]));
  };
}

/**
 * What the health of one type is read from: the latest response sent and how the client answered
 * it. A TypeStatus gives it exactly (typeFacts); a replica's report carries it to the leader
 * (src/operator/status/report.ts), whose cache knows the group's current version.
 */
export interface TypeFacts {
  readonly typeUrl: string;
  /** Version of the latest response sent; undefined before any. */
  readonly sent: string | undefined;
  /** The version the client last ACKed. */
  readonly acked: string | undefined;
  /** How the client answered the latest response; undefined while it has not. */
  readonly answer: "ack" | "nack" | undefined;
  /** Envoy's error text when the latest response was NACKed. */
  readonly nack: string | undefined;
}

/** The facts of a type as the xDS status record holds it (nonces say which response an answer was to). */
export function typeFacts(t: TypeStatus): TypeFacts {
  const { lastSent: sent, lastAcked: ack, lastNack: nack } = t;
  const acked = sent !== undefined && ack !== undefined && ack.nonce === sent.nonce;
  // Both answers name the latest response only when a client answered it twice: the later one counts.
  const nacked = sent !== undefined && nack !== undefined && nack.nonce === sent.nonce && !(acked && ack.at > nack.at);
  return {
    typeUrl: t.typeUrl,
    sent: sent?.version,
    acked: ack?.version,
    answer: nacked ? "nack" : acked ? "ack" : undefined,
    nack: nacked ? nack.message : undefined,
  };
}

/** Health of one type of a client against its group's current version; `nacked`: some type of the client is in ERROR. */
export function typeHealth(t: TypeFacts, current: string | undefined, nacked: boolean): TypeHealth {
  const base = { typeUrl: t.typeUrl, current, acked: t.acked };
  if (t.sent === undefined) return { ...base, state: "NOT_SENT", reason: undefined, nack: undefined };
  if (t.answer === "nack") return { ...base, state: "ERROR", reason: undefined, nack: t.nack ?? "" };
  const ackedLatest = t.answer === "ack";
  if (ackedLatest && (current === undefined || t.acked === current))
    return { ...base, state: "SYNCED", reason: undefined, nack: undefined };
  const reason: BehindReason = !ackedLatest ? "awaiting-ack" : nacked ? "held-back-after-nack" : "not-yet-sent";
  return { ...base, state: "BEHIND", reason, nack: undefined };
}

/** The health of each type of one client against its group's current versions: a NACK of one type holds the others back. */
export function clientTypesHealth(
  types: readonly TypeFacts[],
  versions: ReadonlyMap<string, string> | undefined,
): TypeHealth[] {
  const nacked = types.some((t) => t.answer === "nack");
  return types.map((t) => typeHealth(t, versions?.get(t.typeUrl), nacked));
}

/** "a1b2c3d4" of a long version, as `oooi debug nodes` shortens it. */
const shortVersion = (v: string | undefined): string => (v === undefined ? "none" : v.length > 12 ? v.slice(0, 8) : v);

/**
 * The words the status page and `oooi debug nodes` use for a client's types that are not SYNCED —
 * "proxy-1: lds ERROR (listener x: bad filter chain), cds BEHIND 1a2b3c4d→5e6f7a8b (held-back-after-nack)"
 * — or undefined when none is ERROR or BEHIND. The operator's conditions say it so.
 */
export function healthText(id: string, types: readonly TypeHealth[]): string | undefined {
  const parts = types.flatMap((t) =>
    t.state === "ERROR"
      ? [`${typeLabel(t.typeUrl)} ERROR (${t.nack ?? ""})`]
      : t.state === "BEHIND"
        ? [`${typeLabel(t.typeUrl)} BEHIND ${shortVersion(t.acked)}→${shortVersion(t.current)} (${t.reason ?? ""})`]
        : [],
  );
  return parts.length === 0 ? undefined : `${id}: ${parts.join(", ")}`;
}

/** The health of `nodes` given each group's current versions and the groups something serves. */
export function computeHealth(
  nodes: readonly NodeStatus[],
  current: CurrentVersions,
  knownGroups: readonly string[],
): HealthSummary {
  const known = new Set(knownGroups);
  const clients = nodes.map((n): ClientHealth => {
    return {
      id: n.node.id,
      group: n.node.cluster,
      connected: n.connectedStreams > 0,
      goneSince: n.connectedStreams > 0 ? undefined : n.lastSeen,
      probe: isProbe(n.node),
      unknownGroup: known.has(n.node.cluster) ? undefined : { nearest: nearestName(n.node.cluster, knownGroups) },
      types: clientTypesHealth(n.types.map(typeFacts), current(n.node.cluster)),
    };
  });
  // A gone client is no longer behind, and a probe never was a data plane.
  const live = clients.filter((c) => c.connected && !c.probe);
  const error = live.filter((c) => c.types.some((t) => t.state === "ERROR")).length;
  const behind = live.filter(
    (c) => !c.types.some((t) => t.state === "ERROR") && c.types.some((t) => t.state === "BEHIND"),
  ).length;
  const unknown = new Map<string, string | undefined>();
  for (const c of live) if (c.unknownGroup !== undefined) unknown.set(c.group, c.unknownGroup.nearest);
  const unknownGroups = [...unknown]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([group, nearest]) => ({ group, nearest }));
  const parts: string[] = [];
  if (behind > 0) parts.push(`${String(behind)} ${behind === 1 ? "proxy" : "proxies"} behind`);
  if (error > 0) parts.push(`${String(error)} in error`);
  for (const u of unknownGroups)
    parts.push(`unknown group ${u.group}${u.nearest === undefined ? "" : ` (did you mean ${u.nearest}?)`}`);
  return { clients, behind, error, unknownGroups, headline: parts.join(" · ") };
}
