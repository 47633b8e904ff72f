// Property (c): no part of the pipeline throws on schema-valid input, however odd; every problem
// names an object and says something.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderAll } from "../../src/pipeline/outputs.js";
import { parseManifests } from "../../src/watchers/manifests.js";
import { scenario } from "../support/arbitrary.js";

const ip = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join("."));
const cidr = fc.tuple(ip, fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${String(p)}`);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** Raw Infra/attachment manifests whose fields satisfy the schema's patterns but nothing else. */
const wildInfra = fc.record({
  cidr,
  gateway: ip,
  dns: fc.array(fc.oneof(ip, fc.constant("resolv.conf")), { maxLength: 3 }),
  dhcp: fc.record({
    enabled: fc.boolean(),
    serverIP: maybe(ip),
    rangeStart: maybe(ip),
    rangeEnd: maybe(ip),
    leaseTime: fc.constantFrom("1h", "0s", "90m", "1.5h", "999999h"),
    unknownClients: fc.constantFrom("deny", "pool"),
  }),
  dnsc: fc.record({ enabled: fc.boolean(), serverIP: maybe(ip) }),
  proxy: fc.record({
    enabled: fc.boolean(),
    serverIP: maybe(ip),
    internalProxyService: maybe(
      fc.oneof(ip, fc.constantFrom("svc", "svc.ns", "svc.ns.svc.cluster.local", "a.b.c.d.e", "")),
    ),
  }),
});

describe("never throws", () => {
  it("on random shared-VLAN scenarios", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const out = renderAll(s.state);
        expect(out.files.has("status.json")).toBe(true);
      }),
      { seed: 3, numRuns: 200 },
    );
  });

  it("on schema-valid manifests with arbitrary addresses", () => {
    fc.assert(
      fc.property(
        fc.array(wildInfra, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(3), fc.constantFrom("a", "b", "a"), ip), { maxLength: 4 }),
        (infras, atts) => {
          const docs = infras.map((w, i) => ({
            apiVersion: "hostedcluster.densityops.com/v1alpha1",
            kind: "Infra",
            metadata: { name: `i${String(i)}`, namespace: "clusters" },
            spec: {
              networkConfig: {
                cidr: w.cidr,
                gateway: w.gateway,
                networkAttachmentDefinition: "nad",
                dnsServers: w.dns,
              },
              infraComponents: { dhcp: strip(w.dhcp), dns: strip(w.dnsc), proxy: strip(w.proxy) },
            },
          }));
          atts.forEach(([n, name, addr], i) => {
            docs.push({
              apiVersion: "hostedcluster.densityops.com/v1alpha1",
              kind: "InfraClusterAttachment",
              metadata: { name: `att${String(i)}`, namespace: "clusters" },
              spec: {
                infraRef: { name: `i${String(n)}` },
                hostedClusterRef: { name },
                dns: { clusterName: name, baseDomain: "example.com" },
                appsIngress: { enabled: true },
              },
              status: { appsIngressStatus: { phase: "Ready", externalIP: addr } },
            } as never);
          });
          const load = parseManifests([{ path: "x.json", text: docs.map((d) => JSON.stringify(d)).join("\n---\n") }]);
          expect(load.ok).toBe(true);
          if (!load.ok) return;
          const out = renderAll(load.state);
          for (const s of out.status) {
            for (const p of s.problems) expect(p.message.length).toBeGreaterThan(0);
          }
          // Every valid-by-schema Infra either renders or is reported.
          expect(out.status.filter((s) => s.kind === "Infra")).toHaveLength(infras.length);
        },
      ),
      { seed: 5, numRuns: 300 },
    );
  });
});

function strip(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
