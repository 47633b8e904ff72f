// spec.externalService in → the attachment model's public Service, and the Infra-level one's
// deprecation warning (docs/reference.md#external-service).
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

describe("externalService", () => {
  it("an enabled attachment's settings reach its model; a disabled one has none", () => {
    const r = build(
      combine(
        {
          infras: [infra()],
          attachments: [
            attachment("alpha", {
              spec: { externalService: { enabled: true, addressPoolName: "", labels: { a: "b" } } },
            }),
            attachment("beta", { spec: { externalService: { addressPoolName: "pool" } } }),
            attachment("delta", {
              spec: { externalService: { enabled: true, addressPoolName: "p", annotations: { n: "v" } } },
            }),
            attachment("gamma"),
          ],
        },
        hostedCluster("alpha", 1, []),
        hostedCluster("beta", 2, []),
        hostedCluster("delta", 3, []),
        hostedCluster("gamma", 4, []),
      ),
    );
    expect(r.topologies[0]?.attachments.map((a) => [a.ref.name, a.externalService])).toEqual([
      ["alpha", { addressPoolName: undefined, labels: { a: "b" }, annotations: {} }],
      ["beta", undefined],
      ["delta", { addressPoolName: "p", labels: {}, annotations: { n: "v" } }],
      ["gamma", undefined],
    ]);
  });

  it("the Infra-level Service still works but warns LegacyField, naming the attachment field", () => {
    const r = build(
      combine({ infras: [infra("vlan100", { infraComponents: { proxy: { externalService: { enabled: true } } } })] }),
    );
    expect(r.topologies).toHaveLength(1);
    const warnings = r.problems.filter((p) => p.reason === "LegacyField");
    expect(warnings.map((p) => [p.field, p.severity])).toEqual([
      ["spec.infraComponents.proxy.externalService", "warning"],
    ]);
    expect(warnings[0]?.message).toContain("spec.externalService");
  });
});
