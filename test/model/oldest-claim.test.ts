// "The oldest claim wins" end to end: a newcomer claiming what a working attachment owns changes
// none of the files the incumbent is served from (docs/reference.md#conflicts).
import { describe, expect, it } from "vitest";
import { renderAll, STATUS_FILE } from "../../src/pipeline/outputs.js";
import type { ClusterState } from "../../src/model/types.js";
import { servedAs } from "../support/served.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

const alpha = hostedCluster("alpha", 1, ["192.0.2.10"]);
const incumbent = attachment("alpha", { created: "2026-01-01T00:00:00Z" });
const base = combine({ infras: [infra()], attachments: [incumbent] }, alpha);

const dataFiles = (s: ClusterState): Map<string, string> =>
  new Map([...renderAll(s).files].filter(([path]) => path !== STATUS_FILE));

interface Row {
  name: string;
  add: Partial<ClusterState>;
  /** "Kind/name reason" of the problems the newcomer gets. */
  refused: string[];
}

const rows: Row[] = [
  {
    name: "a newcomer with the incumbent's domain (clusterName: alpha on beta)",
    add: combine(
      { attachments: [attachment("beta", { cluster: "alpha", created: "2026-02-01T00:00:00Z" })] },
      hostedCluster("beta", 2, ["192.0.2.20"]),
    ),
    refused: ["InfraClusterAttachment/beta DuplicateHostname", "Infra/vlan100 DuplicateHostname"],
  },
  {
    name: "a newcomer attaching the incumbent's HostedCluster",
    add: { attachments: [attachment("again", { hc: "alpha", cluster: "again", created: "2026-02-01T00:00:00Z" })] },
    refused: ["InfraClusterAttachment/again DuplicateHostedCluster", "Infra/vlan100 DuplicateHostedCluster"],
  },
  {
    name: "a newcomer whose Machine reports the incumbent's worker address",
    add: combine(
      { attachments: [attachment("beta", { created: "2026-02-01T00:00:00Z" })] },
      hostedCluster("beta", 2, ["192.0.2.10"]),
    ),
    refused: ["InfraClusterAttachment/beta DuplicateSourceIP", "Infra/vlan100 DuplicateSourceIP"],
  },
];

describe("a conflicting newcomer", () => {
  it.each(rows)("$name leaves the incumbent's DNS and Envoy files byte-identical", ({ add, refused }) => {
    const before = servedAs(renderAll(base), incumbent.metadata);
    const after = renderAll(combine(base, add));
    expect(servedAs(after, incumbent.metadata)).toEqual(before);
    expect(JSON.stringify(before)).toContain("api.alpha.example.com");
    expect(
      after.model.problems
        .filter((p) => p.object.name !== "alpha")
        .map((p) => `${p.object.kind}/${p.object.name} ${p.reason}`)
        .sort(),
    ).toEqual([...refused].sort());
    // The incumbent is told nothing.
    expect(after.model.problems.filter((p) => p.object.name === "alpha")).toEqual([]);
  });

  it("a refused newcomer contributes nothing at all to a domain or HostedCluster it lost", () => {
    const [domain, hc] = rows;
    for (const row of [domain, hc]) {
      if (row === undefined) continue;
      expect(dataFiles(combine(base, row.add))).toEqual(dataFiles(base));
    }
  });
});
