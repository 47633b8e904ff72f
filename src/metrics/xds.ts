// xDS metrics from the status record's events: pushes, change→sent and change→ACK latencies, NACKs,
// open streams and bytes; and, when given the cache, the size of the configuration being served.
import type { SnapshotCache } from "../xds/cache/cache.js";
import { ENVOY_TYPE_URLS, typeLabel } from "../xds/introspect/state.js";
import { cacheVersions, computeHealth, type HealthState } from "../xds/health.js";
import type { NackRecord, PushRecord, StreamStatus, XdsStatusView } from "../xds/client-status.js";
import type { Metrics } from "./metrics.js";

/** Options of attachXdsMetrics. */
export interface XdsMetricsOptions {
  /**
   * The snapshot cache: only types it serves are counted (responses to unknown types are not
   * configuration), and oooi_xds_snapshot_bytes reports its size. Without it, only the four
   * Envoy types count.
   */
  readonly cache?: SnapshotCache;
}

/** Name of the per-group health gauge (deploy/monitoring's alert and dashboard read it). */
export const XDS_CLIENTS_METRIC = "oooi_xds_clients";
/** Best to worst: a client counts under its worst type's state. */
const HEALTH_STATES: readonly HealthState[] = ["SYNCED", "NOT_SENT", "BEHIND", "ERROR"];

/**
 * Per node group, how many of this server's connected clients (probes left out) are in each state of
 * the health view (src/xds/health.ts), the reading the status page and `oooi debug nodes` show.
 */
function clientStates(status: XdsStatusView, cache: SnapshotCache): Map<string, Map<HealthState, number>> {
  const out = new Map<string, Map<HealthState, number>>();
  const health = computeHealth(status.nodes(), cacheVersions(cache), cache.groups());
  for (const client of health.clients) {
    if (!client.connected || client.probe) continue;
    // A client that asked for no type yet has been sent nothing.
    const state = client.types.reduce<HealthState>(
      (worst, t, i) => (i === 0 || HEALTH_STATES.indexOf(t.state) > HEALTH_STATES.indexOf(worst) ? t.state : worst),
      "NOT_SENT",
    );
    const counts = out.get(client.group) ?? new Map<HealthState, number>();
    counts.set(state, (counts.get(state) ?? 0) + 1);
    out.set(client.group, counts);
  }
  return out;
}

/** Records xDS metrics from `status` events into `metrics`; returns the function that stops it. */
export function attachXdsMetrics(metrics: Metrics, status: XdsStatusView, options: XdsMetricsOptions = {}): () => void {
  const cache = options.cache;
  const envoy = new Set(ENVOY_TYPE_URLS);
  const served = (typeUrl: string): boolean => (cache ? cache.typeSpec(typeUrl) !== undefined : envoy.has(typeUrl));

  const onPush = (p: PushRecord): void => {
    if (!served(p.typeUrl)) return;
    const labels = { type: typeLabel(p.typeUrl), cause: p.cause };
    metrics.xdsPushes.inc(labels);
    metrics.xdsPushedBytes.inc({ type: labels.type }, p.bytes);
    metrics.xdsPushSentSeconds.observe(labels, Math.max(0, p.sentAt - p.changeAt) / 1000);
  };
  const onAck = (p: PushRecord): void => {
    if (!served(p.typeUrl) || p.ackAt === undefined) return;
    metrics.xdsPushAckSeconds.observe(
      { type: typeLabel(p.typeUrl), cause: p.cause },
      Math.max(0, p.ackAt - p.changeAt) / 1000,
    );
  };
  const onNack = (p: PushRecord, _nack: NackRecord, info: { first: boolean }): void => {
    if (!served(p.typeUrl)) return;
    metrics.xdsNacks.inc({ type: typeLabel(p.typeUrl), repeat: String(!info.first) });
  };
  const onOpen = (s: StreamStatus): void => {
    metrics.xdsStreams.inc({ protocol: s.protocol });
  };
  const onClose = (s: StreamStatus): void => {
    metrics.xdsStreams.dec({ protocol: s.protocol });
  };

  // Streams opened before attaching are counted once, then tracked by events.
  const open = status.streams();
  for (const protocol of ["sotw", "delta"] as const)
    metrics.xdsStreams.set({ protocol }, open.filter((s) => s.protocol === protocol).length);

  if (cache) {
    metrics.gauge(
      "oooi_xds_snapshot_bytes",
      "Encoded size of the configuration served, summed over node groups, by resource type.",
      ["type"],
      (g) => {
        const sums = new Map<string, number>();
        for (const group of cache.groups()) {
          for (const [t, ts] of cache.getSnapshot(group)?.types ?? [])
            sums.set(typeLabel(t), (sums.get(typeLabel(t)) ?? 0) + ts.bytes);
        }
        g.reset();
        for (const [type, bytes] of sums) g.set({ type }, bytes);
      },
    );
  }

  if (cache) {
    metrics.gauge(
      XDS_CLIENTS_METRIC,
      "Connected xDS clients by node group and health: ERROR when a type's latest response was NACKed, " +
        "BEHIND while a type is not at the group's current version (held back after a NACK, awaiting its ACK, " +
        "not sent yet), NOT_SENT before a response, else SYNCED (the worst type counts).",
      ["group", "state"],
      (g) => {
        g.reset();
        for (const [group, counts] of clientStates(status, cache))
          for (const state of HEALTH_STATES) g.set({ group, state }, counts.get(state) ?? 0);
      },
    );
  }

  status.on("push", onPush);
  status.on("ack", onAck);
  status.on("nack", onNack);
  status.on("stream-open", onOpen);
  status.on("stream-close", onClose);
  return () => {
    status.off("push", onPush);
    status.off("ack", onAck);
    status.off("nack", onNack);
    status.off("stream-open", onOpen);
    status.off("stream-close", onClose);
  };
}
