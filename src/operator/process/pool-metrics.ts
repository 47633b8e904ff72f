// Each rendering's DHCP pools → oooi_dhcp_pool_addresses and oooi_dhcp_pool_allocated per Infra.
// Every replica renders, so every replica exports them (alerts take the max over replicas); the
// series of an Infra whose DHCP is gone are dropped.
import type { Topology } from "../../model/types.js";
import type { OperatorMetrics } from "./metrics.js";

/** Keeps the pool gauges equal to the latest rendering. */
export class PoolMetrics {
  readonly #metrics: OperatorMetrics;
  /** "<namespace>/<infra>" → the labels set last time, and the topology they were set from. */
  #series = new Map<string, { readonly labels: { namespace: string; infra: string }; readonly topology: Topology }>();

  constructor(metrics: OperatorMetrics) {
    this.#metrics = metrics;
  }

  /** Sets the gauges of each Infra whose topology is not the one they were set from (a kept topology is unchanged). */
  record(topologies: readonly Topology[]): void {
    const next = new Map<
      string,
      { readonly labels: { namespace: string; infra: string }; readonly topology: Topology }
    >();
    for (const t of topologies) {
      if (t.dhcp === undefined) continue;
      const key = `${t.infra.namespace}/${t.infra.name}`;
      const was = this.#series.get(key);
      const labels = was?.labels ?? { namespace: t.infra.namespace, infra: t.infra.name };
      next.set(key, { labels, topology: t });
      if (was?.topology === t) continue;
      this.#metrics.set("oooi_dhcp_pool_addresses", t.dhcp.poolUse.addresses, labels);
      this.#metrics.set("oooi_dhcp_pool_allocated", t.dhcp.poolUse.allocated, labels);
    }
    for (const [key, { labels }] of this.#series) {
      if (next.has(key)) continue;
      this.#metrics.remove("oooi_dhcp_pool_addresses", labels);
      this.#metrics.remove("oooi_dhcp_pool_allocated", labels);
    }
    this.#series = next;
  }
}
