// Property: on a random valid shared VLAN, one random bad edit — an invalid field, a claim on what
// another attachment owns, a duplicate or foreign worker address — leaves every hosted cluster
// other than the edited object's own served exactly as before (its Envoy chains, clusters,
// endpoints, routes and DNS records; test/support/served.ts). Oldest claim + last good.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { InfraClusterAttachment } from "../../src/api/schema.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import type { ClusterState } from "../../src/model/types.js";
import { scenario, type Scenario } from "../support/arbitrary.js";
import { attachment, machine, NS } from "../support/fixtures.js";
import { servedAs } from "../support/served.js";

type Edit =
  | "infra-field"
  | "attachment-field"
  | "steal-domain"
  | "steal-hosted-cluster"
  | "newcomer-domain"
  | "duplicate-worker"
  | "foreign-worker";
const EDITS: readonly Edit[] = [
  "infra-field",
  "attachment-field",
  "steal-domain",
  "steal-hosted-cluster",
  "newcomer-domain",
  "duplicate-worker",
  "foreign-worker",
];

/** The edited state and the attachment whose own hosted cluster may change (none for an Infra edit). */
function applyEdit(s: Scenario, edit: Edit, i: number, j: number): { state: ClusterState; own: string | undefined } {
  const atts = s.state.attachments;
  const a = atts[i % Math.max(atts.length, 1)];
  const b = atts[j % Math.max(atts.length, 1)];
  const replace = (next: InfraClusterAttachment) => atts.map((x) => (x === a ? next : x));
  const [inf] = s.state.infras;
  if (edit === "infra-field" || a === undefined || b === undefined) {
    if (inf === undefined) return { state: s.state, own: undefined };
    const broken = {
      ...inf,
      spec: { ...inf.spec, networkConfig: { ...inf.spec.networkConfig, gateway: "203.0.113.1" } },
    };
    return { state: { ...s.state, infras: [broken] }, own: undefined };
  }
  const own = a.metadata.name;
  switch (edit) {
    case "attachment-field":
      return {
        own,
        state: {
          ...s.state,
          attachments: atts.filter((x) => x !== a),
          invalid: [
            {
              ref: { kind: "InfraClusterAttachment", namespace: NS, name: own },
              errors: [{ field: "spec.dns.baseDomain", message: "must be a lower-case DNS domain" }],
            },
          ],
        },
      };
    case "steal-domain":
      return { own, state: { ...s.state, attachments: replace({ ...a, spec: { ...a.spec, dns: b.spec.dns } }) } };
    case "steal-hosted-cluster":
      return {
        own,
        state: {
          ...s.state,
          attachments: replace({ ...a, spec: { ...a.spec, hostedClusterRef: b.spec.hostedClusterRef } }),
        },
      };
    case "newcomer-domain": {
      const newcomer = attachment("zz-newcomer", {
        infra: "shared",
        cluster: b.spec.dns.clusterName,
        hc: b.spec.hostedClusterRef.name,
        created: "2099-01-01T00:00:00Z",
      });
      return { own: "zz-newcomer", state: { ...s.state, attachments: [...atts, newcomer] } };
    }
    case "duplicate-worker":
    case "foreign-worker": {
      const stolen = edit === "foreign-worker" ? "203.0.113.9" : (s.workers.get(b.metadata.name)?.[0] ?? "203.0.113.9");
      const cp = `${NS}-${a.metadata.name}`;
      return {
        own,
        state: {
          ...s.state,
          machines: [...s.state.machines, machine(cp, `${own}-intruder`, `${own}-workers`, [stolen])],
        },
      };
    }
  }
}

describe("one bad edit", () => {
  it("never changes how another hosted cluster is served", () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom(...EDITS), fc.nat(), fc.nat(), (s, edit, i, j) => {
        const before = renderAll(s.state, { now: Date.parse("2026-01-01T00:00:00Z") });
        const { state, own } = applyEdit(s, edit, i, j);
        const after = renderAll(state, {
          lastGood: before.lastGood,
          now: Date.parse("2026-01-02T00:00:00Z"),
          previous: before.files,
        });
        for (const a of s.state.attachments) {
          if (a.metadata.name === own) continue;
          expect(servedAs(after, a.metadata), `${edit} on ${own ?? "the Infra"}: ${a.metadata.name}`).toEqual(
            servedAs(before, a.metadata),
          );
        }
      }),
      { seed: 18, numRuns: 300 },
    );
  });
});
