// oooi_dhcp_pool_addresses / oooi_dhcp_pool_allocated follow each rendering: set per Infra running
// DHCP from the model's pool use, and dropped once the Infra (or its DHCP) is gone.
import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/metrics/index.js";
import { build } from "../../src/model/build.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import { PoolMetrics } from "../../src/operator/process/pool-metrics.js";
import { RenderChain } from "../../src/pipeline/render-loop.js";
import { combine, infra, NS, VLAN200, vmi } from "../support/fixtures.js";

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

  it("from a chain of renderings, each read by what it changed, as from every topology", async () => {
    const byDelta = new Metrics().recorder(OPERATOR_METRICS);
    const whole = new Metrics().recorder(OPERATOR_METRICS);
    const incremental = new PoolMetrics(byDelta);
    const full = new PoolMetrics(whole);
    const chain = new RenderChain();
    const vlan200 = infra("vlan200", VLAN200);
    const vlan200NoDhcp = infra("vlan200", {
      ...VLAN200,
      infraComponents: { ...VLAN200.infraComponents, dhcp: { ...VLAN200.infraComponents.dhcp, enabled: false } },
    });
    const leases = (n: number) =>
      Array.from({ length: n }, (_, i) => vmi(NS, `w-${String(i)}`, `02:00:00:00:00:0${String(i)}`));
    const steps = [
      combine({ infras: [infra("vlan100", {}), vlan200], attachments: [] }, { vmis: leases(1) }),
      combine({ infras: [infra("vlan100", {}), vlan200], attachments: [] }, { vmis: leases(3) }),
      // vlan200 stops running DHCP, then goes; vlan100 keeps its topology meanwhile.
      combine({ infras: [infra("vlan100", {}), vlan200NoDhcp], attachments: [] }, { vmis: leases(3) }),
      combine({ infras: [infra("vlan100", {})], attachments: [] }, { vmis: leases(3) }),
      combine({ infras: [infra("vlan100", {}), vlan200], attachments: [] }, { vmis: leases(2) }),
      // Not recorded: the next rendering continues from one the gauges were not set from.
      combine({ infras: [infra("vlan100", {})], attachments: [] }, { vmis: leases(2) }),
      combine({ infras: [infra("vlan100", {})], attachments: [] }, { vmis: leases(1) }),
    ];
    const unrecorded = steps.length - 2;
    let seen = 0;
    let withoutDhcp = 0;
    for (const [i, state] of steps.entries()) {
      const outputs = chain.render(state, undefined, { now: Date.parse("2026-01-01T00:00:00Z") });
      if (outputs.delta !== undefined) seen += 1;
      if (outputs.model.topologies.some((t) => t.dhcp === undefined)) withoutDhcp += 1;
      if (i === unrecorded) continue;
      incremental.recordRendering(outputs);
      full.record(outputs.model.topologies);
      const lines = pools(await byDelta.render());
      expect(lines).toEqual(pools(await whole.render()));
      // Both sides set the gauges through one method: what they must show is checked on its own too.
      const dhcpInfras = outputs.model.topologies.filter((t) => t.dhcp !== undefined).map((t) => t.infra.name);
      expect(
        lines
          .map((l) => /infra="([^"]+)"/.exec(l)?.[1])
          .filter((n) => n !== undefined)
          .sort(),
      ).toEqual([...dhcpInfras, ...dhcpInfras].sort());
    }
    expect(seen).toBe(steps.length - 1);
    expect(withoutDhcp).toBe(1);
    expect(pools(await byDelta.render()).length).toBe(2);
  });
});
