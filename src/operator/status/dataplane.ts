// What the operator needs to know about its data planes (Envoy fleets, dhcp-agents) to report
// readiness: the composition root adapts the ADS server's per-node status to this view.

/**
 * The data-plane side of one node group (xDS `node.cluster`: "<namespace>/<ProxyServer>" for
 * Envoy, "<namespace>/<DHCPServer>" for the dhcp-agent), as far as this replica's xDS server knows.
 */
export interface DataPlaneView {
  /**
   * True when the group's nodes acknowledged its current snapshot (or `version` when given) and
   * none rejected it. A group with no connected node is not synced.
   */
  synced(nodeGroup: string, version?: string): boolean;
  /**
   * True when every connected node runs the current or the last fully acknowledged configuration
   * and none rejected the current one: between a publish and its ACK the group keeps serving.
   */
  serving(nodeGroup: string): boolean;
  /** The error text of the group's latest NACK still in effect; undefined when none. */
  lastNack(nodeGroup: string): string | undefined;
  /**
   * The group's connected clients that are not SYNCED, in the health view's words (src/xds/health.ts
   * healthText, as the status page and `oooi debug nodes` say it), "; "-separated; undefined when none is.
   */
  health(nodeGroup: string): string | undefined;
  /** The version the group's nodes last ACKed; undefined before any ACK. */
  ackedVersion(nodeGroup: string): string | undefined;
  /** Calls `listener` whenever any answer above may have changed; returns the unsubscribe function. */
  subscribe?(listener: () => void): () => void;
  /**
   * The same answers as of now, with what they are computed from read once: a reconcile pass asks
   * about every group several times within one synchronous stretch (src/operator/status/object-status.ts).
   */
  moment?(): DataPlaneView;
  /**
   * Asked of a moment: a value that is the same (===) in a later moment while every answer above
   * about `nodeGroup` is — what they are computed from (the group's snapshot, its nodes' reports)
   * has not changed. A new value does not promise a new answer. Without it, a reconcile pass
   * computes every object's status again (src/operator/writing/status-scope.ts).
   */
  stamp?(nodeGroup: string): unknown;
}

/** A view for a process with no xDS server: nothing is ever synced. */
export const NO_DATA_PLANE: DataPlaneView = {
  synced: () => false,
  serving: () => false,
  lastNack: () => undefined,
  health: () => undefined,
  ackedVersion: () => undefined,
  stamp: () => undefined,
};
