// The operator's view of its data planes in the benchmark: the proxies' node groups from the real
// ADS server's per-node ACK state (the Envoy-like clients ACK for real), the DHCP groups from a
// stand-in that ACKs every snapshot at once (no dhcp-agent runs here: it needs a Kea per Infra).
import type { DataPlaneView } from "../../src/operator/status/dataplane.js";
import type { XdsDataPlane } from "../../src/operator/status/xds-dataplane.js";
import type { SnapshotCache } from "../../src/xds/cache/index.js";

/** Real ACKs for `proxyGroups`, instant ACKs for every other group with a snapshot. */
export class BenchDataPlane implements DataPlaneView {
  readonly #xds: XdsDataPlane;
  readonly #cache: SnapshotCache;
  readonly #proxyGroups: ReadonlySet<string>;

  constructor(xds: XdsDataPlane, cache: SnapshotCache, proxyGroups: ReadonlySet<string>) {
    this.#xds = xds;
    this.#cache = cache;
    this.#proxyGroups = proxyGroups;
  }

  synced(nodeGroup: string, version?: string): boolean {
    if (this.#proxyGroups.has(nodeGroup)) return this.#xds.synced(nodeGroup, version);
    const snap = this.#cache.getSnapshot(nodeGroup);
    return snap !== undefined && (version === undefined || version === snap.version);
  }

  serving(nodeGroup: string): boolean {
    return this.#proxyGroups.has(nodeGroup) ? this.#xds.serving(nodeGroup) : this.synced(nodeGroup);
  }

  lastNack(nodeGroup: string): string | undefined {
    return this.#proxyGroups.has(nodeGroup) ? this.#xds.lastNack(nodeGroup) : undefined;
  }

  health(nodeGroup: string): string | undefined {
    return this.#proxyGroups.has(nodeGroup) ? this.#xds.health(nodeGroup) : undefined;
  }

  ackedVersion(nodeGroup: string): string | undefined {
    return this.#proxyGroups.has(nodeGroup)
      ? this.#xds.ackedVersion(nodeGroup)
      : this.#cache.getSnapshot(nodeGroup)?.version;
  }

  subscribe(listener: () => void): () => void {
    return this.#xds.subscribe(listener);
  }

  /** The real view's stamp, or the snapshot the instant answers come from. */
  stamp(nodeGroup: string): unknown {
    return this.#proxyGroups.has(nodeGroup) ? this.#xds.stamp(nodeGroup) : this.#cache.getSnapshot(nodeGroup);
  }

  moment(): BenchDataPlane {
    return new BenchDataPlane(this.#xds.moment(), this.#cache, this.#proxyGroups);
  }
}
