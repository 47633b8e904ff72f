// Each rendering's DHCP pools → oooi_dhcp_pool_addresses and oooi_dhcp_pool_allocated per Infra.
// Every replica renders, so every replica exports them (alerts take the max over replicas); the
// series of an Infra whose DHCP is gone are dropped.
import type { Topology } from "../../model/types.js";
import type { Outputs, RenderedInfra } from "../../pipeline/outputs.js";
import type { OperatorMetrics } from "./metrics.js";

/** Keeps the pool gauges equal to the latest rendering. */
export class PoolMetrics {
  readonly #metrics: OperatorMetrics;
  /** "<namespace>/<infra>" → the labels set last time, and the topology they were set from. */
  readonly #series = new Map<
    string,
    { readonly labels: { namespace: string; infra: string }; readonly topology: Topology }
  >();
  /** The renderings the gauges were last set from (a rendering that continues from them names what it changed). */
  #byInfra: ReadonlyMap<string, RenderedInfra> | undefined;

  constructor(metrics: OperatorMetrics) {
    this.#metrics = metrics;
  }

  /**
   * Sets the gauges from a rendering: after the rendering they were last set from, only the Infras
   * it rendered anew or dropped are looked at (a rendering's delta); otherwise every one.
   */
  recordRendering(outputs: Pick<Outputs, "byInfra" | "delta" | "model">): void {
    const delta = outputs.delta;
    if (delta === undefined || delta.from !== this.#byInfra) this.record(outputs.model.topologies);
    else {
      for (const r of delta.dropped) {
        const key = infraKey(r.topology);
        if (outputs.byInfra.has(key)) continue;
        const was = this.#series.get(key);
        if (was !== undefined) this.#drop(key, was.labels);
      }
      for (const r of delta.rendered) this.#set(r.topology);
    }
    this.#byInfra = outputs.byInfra;
  }

  /** Sets the gauges of each Infra whose topology is not the one they were set from (a kept topology is unchanged). */
  record(topologies: readonly Topology[]): void {
    this.#byInfra = undefined;
    const live = new Set<string>();
    for (const t of topologies) {
      live.add(infraKey(t));
      this.#set(t);
    }
    for (const [key, { labels }] of [...this.#series]) if (!live.has(key)) this.#drop(key, labels);
  }

  /** One Infra's gauges from its topology (dropped when it no longer runs DHCP). */
  #set(t: Topology): void {
    const key = infraKey(t);
    const was = this.#series.get(key);
    if (t.dhcp === undefined) {
      if (was !== undefined) this.#drop(key, was.labels);
      return;
    }
    const labels = was?.labels ?? { namespace: t.infra.namespace, infra: t.infra.name };
    this.#series.set(key, { labels, topology: t });
    if (was?.topology === t) return;
    this.#metrics.set("oooi_dhcp_pool_addresses", t.dhcp.poolUse.addresses, labels);
    this.#metrics.set("oooi_dhcp_pool_allocated", t.dhcp.poolUse.allocated, labels);
  }

  #drop(key: string, labels: { namespace: string; infra: string }): void {
    this.#metrics.remove("oooi_dhcp_pool_addresses", labels);
    this.#metrics.remove("oooi_dhcp_pool_allocated", labels);
    this.#series.delete(key);
  }
}

function infraKey(t: Topology): string {
  return `${t.infra.namespace}/${t.infra.name}`;
}
