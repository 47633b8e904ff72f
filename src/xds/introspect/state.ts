// Shared readings of the xDS status record for CSDS, the debug service, metrics and the CLI: the
// sync rule from nonces, which types of a stream are worth reporting, short type labels, and
// protobuf time values.
import type { SnapshotCache } from "../cache/cache.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../resource/type-urls.js";
import type { StreamStatus, TypeStatus, XdsStatusView } from "../client-status.js";

/** Server-side sync state of one type on a stream, as CSDS's ConfigStatus names it. */
export type SyncState = "SYNCED" | "STALE" | "NOT_SENT" | "ERROR";

/**
 * NOT_SENT without a response; ERROR when the latest response was NACKed; SYNCED when it was
 * ACKed; STALE while it awaits an answer.
 */
export function syncState(t: TypeStatus | undefined): SyncState {
  const sent = t?.lastSent;
  if (t === undefined || sent === undefined) return "NOT_SENT";
  if (t.lastNack?.nonce === sent.nonce) return "ERROR";
  if (t.lastAcked?.nonce === sent.nonce) return "SYNCED";
  return "STALE";
}

const SHORT_LABELS = new Map<string, string>([
  [LISTENER_TYPE_URL, "lds"],
  [CLUSTER_TYPE_URL, "cds"],
  [ENDPOINT_TYPE_URL, "eds"],
  [ROUTE_TYPE_URL, "rds"],
]);

/** The Envoy resource types every stream may carry, in make-before-break order. */
export const ENVOY_TYPE_URLS: readonly string[] = [
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
];

/** "lds", "cds", "eds", "rds" for the Envoy types; the message's full name for others. */
export function typeLabel(typeUrl: string): string {
  return SHORT_LABELS.get(typeUrl) ?? typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
}

/**
 * Whether `wanted` (as a user types it: "lds", a type URL, a full message name or its last part,
 * any case) names `typeUrl`.
 */
export function typeMatches(typeUrl: string, wanted: string): boolean {
  const w = wanted.toLowerCase();
  const name = typeUrl.slice(typeUrl.lastIndexOf("/") + 1).toLowerCase();
  return (
    w === typeUrl.toLowerCase() ||
    w === name ||
    w === typeLabel(typeUrl).toLowerCase() ||
    w === name.slice(name.lastIndexOf(".") + 1)
  );
}

/**
 * Resource types of a stream worth reporting, sorted: the types the cache serves that the stream
 * was sent or subscribed to. Test probes and unknown types a client asked for are left out.
 */
export function reportedTypes(view: XdsStatusView, cache: SnapshotCache, stream: StreamStatus): string[] {
  const candidates = new Set<string>(ENVOY_TYPE_URLS);
  for (const t of stream.types) candidates.add(t.typeUrl);
  for (const t of cache.getSnapshot(stream.node.cluster)?.types.keys() ?? []) candidates.add(t);
  const known = new Set(stream.types.map((t) => t.typeUrl));
  return [...candidates]
    .filter(
      (t) => cache.typeSpec(t) !== undefined && (known.has(t) || view.streamConfig(stream.streamId, t) !== undefined),
    )
    .sort();
}

/** The stream's status of one type, or an empty one (nothing sent yet). */
export function typeStatusOf(stream: StreamStatus, typeUrl: string): TypeStatus {
  return (
    stream.types.find((t) => t.typeUrl === typeUrl) ?? {
      typeUrl,
      lastSent: undefined,
      lastAcked: undefined,
      lastNack: undefined,
    }
  );
}

/** google.protobuf.Timestamp of a millisecond clock time. */
export function timestamp(ms: number): { seconds: number; nanos: number } {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** google.protobuf.Duration of a millisecond interval (negative intervals clamp to zero). */
export function duration(ms: number): { seconds: number; nanos: number } {
  return timestamp(Math.max(0, ms));
}

/** Milliseconds of a decoded Timestamp or Duration (seconds may arrive as a string); undefined when unset. */
export function millisOf(
  t: { seconds?: number | string | null; nanos?: number | null } | null | undefined,
): number | undefined {
  if (t === null || t === undefined) return undefined;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}
