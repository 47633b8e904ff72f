// oooi_dhcp_pool_addresses / oooi_dhcp_pool_allocated follow each rendering: set per Infra running
// DHCP from the model's pool use, and dropped once the Infra (or its DHCP) is gone.
import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/metrics/index.js";
import { build } from "../../src/model/build.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import { PoolMetrics } from "../../src/operator/process/pool-metrics.js";
import { combine, infra, NS, vmi } from "../support/fixtures.js";

const pools = (text: string) => text.split("\n").filter((l) => l.startsWith("oooi_dhcp_pool_"));

describe("DHCP pool metrics", () => {
  it("set per Infra from the rendering, dropped when the Infra goes", async () => {
    const recorder = new Metrics().recorder(OPERATOR_METRICS);
    const metrics = new PoolMetrics(recorder);
    const model = build({
      ...combine({ infras: [infra("vlan100", {})], attachments: [] }, { vmis: [vmi(NS, "w-0", "02:00:00:00:00:01")] }),
      now: Date.parse("2026-01-01T00:00:00Z"),
    });
    const use = model.topologies[0]?.dhcp?.poolUse;
    expect(use?.allocated).toBe(1);
    metrics.record(model.topologies);
    expect(pools(await recorder.render())).toEqual([
      `oooi_dhcp_pool_addresses{namespace="${NS}",infra="vlan100"} ${String(use?.addresses)}`,
      `oooi_dhcp_pool_allocated{namespace="${NS}",infra="vlan100"} 1`,
    ]);
    metrics.record([]);
    expect(pools(await recorder.render())).toEqual([]);
  });

  it("follows a changed topology of an Infra, and again one changed back", async () => {
    const recorder = new Metrics().recorder(OPERATOR_METRICS);
    const metrics = new PoolMetrics(recorder);
    const modelWith = (workers: number) =>
      build({
        ...combine(
          { infras: [infra("vlan100", {})], attachments: [] },
          {
            vmis: Array.from({ length: workers }, (_, i) => vmi(NS, `w-${String(i)}`, `02:00:00:00:00:0${String(i)}`)),
          },
        ),
        now: Date.parse("2026-01-01T00:00:00Z"),
      });
    const allocated = async () => pools(await recorder.render()).find((l) => l.startsWith("oooi_dhcp_pool_allocated"));
    const one = modelWith(1);
    metrics.record(one.topologies);
    metrics.record(one.topologies); // the same topology: nothing to set
    expect(await allocated()).toMatch(/ 1$/);
    metrics.record(modelWith(3).topologies);
    expect(await allocated()).toMatch(/ 3$/);
    metrics.record(one.topologies);
    expect(await allocated()).toMatch(/ 1$/);
  });
});
