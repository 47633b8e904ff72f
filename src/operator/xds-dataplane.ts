// The ADS server's per-node record, seen as the operator's DataPlaneView: a node group is synced
// when every connected node ACKed every type of the group's current snapshot and none rejected it.
import type { SnapshotCache } from "../xds/cache/index.js";
import type { NodeStatus, TypeStatus, XdsStatusView } from "../xds/status.js";
import type { DataPlaneView } from "./dataplane.js";

export class XdsDataPlane implements DataPlaneView {
  readonly #status: XdsStatusView;
  readonly #cache: SnapshotCache;
  /** Last snapshot version each group was seen synced at; survives a later change or NACK. */
  readonly #lastSynced = new Map<string, string>();

  constructor(status: XdsStatusView, cache: SnapshotCache) {
    this.#status = status;
    this.#cache = cache;
  }

  synced(nodeGroup: string, version?: string): boolean {
    const snap = this.#cache.getSnapshot(nodeGroup);
    if (snap === undefined || (version !== undefined && version !== snap.version)) return false;
    const nodes = this.#connected(nodeGroup);
    if (nodes.length === 0) return false;
    // Types with no resources are never subscribed by name (EDS/RDS/KeaConfig), so only those that hold something count.
    const types = [...snap.types.values()].filter((t) => t.resources.size > 0);
    const ok = nodes.every((n) =>
      types.every((t) => {
        const s = n.types.find((x) => x.typeUrl === t.typeUrl);
        return s?.lastAcked?.version === t.version && !nackInEffect(s);
      }),
    );
    if (ok) this.#lastSynced.set(nodeGroup, snap.version);
    return ok;
  }

  lastNack(nodeGroup: string): string | undefined {
    let newest: { at: number; message: string } | undefined;
    for (const n of this.#connected(nodeGroup)) {
      for (const t of n.types) {
        if (!nackInEffect(t) || t.lastNack === undefined) continue;
        if (newest === undefined || t.lastNack.at > newest.at)
          newest = { at: t.lastNack.at, message: `${n.node.id}: ${t.lastNack.message}` };
      }
    }
    return newest?.message;
  }

  ackedVersion(nodeGroup: string): string | undefined {
    this.synced(nodeGroup);
    return this.#lastSynced.get(nodeGroup);
  }

  subscribe(listener: () => void): () => void {
    const events = ["ack", "nack", "stream-open", "stream-close"] as const;
    for (const e of events) this.#status.on(e, listener);
    const unsubscribeCache = this.#cache.subscribe(listener);
    return () => {
      for (const e of events) this.#status.off(e, listener);
      unsubscribeCache();
    };
  }

  #connected(group: string): NodeStatus[] {
    return this.#status.nodes().filter((n) => n.node.cluster === group && n.connectedStreams > 0);
  }
}

/** A NACK newer than the last ACK of that type: the node still runs an older version. */
function nackInEffect(t: TypeStatus): boolean {
  return t.lastNack !== undefined && (t.lastAcked === undefined || t.lastNack.at >= t.lastAcked.at);
}
