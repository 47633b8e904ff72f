// Property (b): the pod-network view never holds a VLAN address, and nothing at all without internalProxyService.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import { cidrContains, parseCidr, parseIPv4 } from "../../src/model/ipv4.js";
import { scenario } from "../support/arbitrary.js";

describe("default DNS view", () => {
  it("never publishes a VLAN address; is empty when internalProxyService is unset or unresolved", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const cidr = parseCidr(s.vlan);
        if (cidr === undefined) throw new Error("bad scenario");
        const result = build(s.state);
        const internal = s.state.infras[0]?.spec.infraComponents?.proxy?.internalProxyService;
        const resolvable =
          internal === "172.30.9.9" ||
          [...s.state.services].some((x) => x.metadata.name === "proxy-int" && x.spec?.clusterIP !== "None");
        for (const t of result.topologies) {
          const pods = t.dns?.views[1];
          for (const z of pods?.zones ?? []) {
            for (const r of z.records) expect(cidrContains(cidr, parseIPv4(r.address) ?? -1)).toBe(false);
          }
          if (!resolvable) expect(pods?.zones).toEqual([]);
        }
      }),
      { seed: 7, numRuns: 400 },
    );
  });
});
