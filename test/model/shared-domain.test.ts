// A domain is claimed across every Infra the process serves (issue 25 row 18): two Infras never
// both serve one domain's SNI names and records. The oldest claim wins everywhere; the newcomer is
// refused with DuplicateHostname naming the winner, its Infra says so, the winner is told nothing.
// Objects in → problems and served attachments out, from build() and from the incremental build.
import { describe, expect, it } from "vitest";
import type { InfraClusterAttachment } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import { changesBetween } from "../../src/model/incremental/infras-read.js";
import { buildFrom, buildIncremental, inputsOf } from "../../src/model/incremental/rebuild.js";
import type { BuildResult, ClusterState } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

const vlan200 = infra("vlan200", {
  networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1", networkAttachmentDefinition: "vlan200" },
  infraComponents: {
    dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
    dns: { serverIP: "198.51.100.3" },
    proxy: { serverIP: "198.51.100.4" },
  },
});
const tenantB = infra("vlan100", {}, "tenant-b");

const old = attachment("one", { cluster: "same", created: "2026-01-01T00:00:00Z" });
const newer = (opts: Parameters<typeof attachment>[1] = {}): InfraClusterAttachment =>
  attachment("two", { cluster: "same", infra: "vlan200", created: "2026-02-01T00:00:00Z", ...opts });
const clusters = combine(hostedCluster("one", 1, ["192.0.2.10"]), hostedCluster("two", 2, ["198.51.100.20"]));

interface Row {
  readonly name: string;
  readonly state: ClusterState;
  /** "Kind/namespace/name field reason severity: message" of every problem. */
  readonly problems: readonly string[];
  /** "<infra>: served attachments" per topology. */
  readonly served: readonly string[];
}

const rows: Row[] = [
  {
    name: "the same domain on two Infras: the older claim serves it, the newer is refused naming it",
    state: combine({ infras: [infra(), vlan200], attachments: [old, newer()] }, clusters),
    problems: [
      "Infra/clusters/vlan200  DuplicateHostname warning: two refused: domain same.example.com is already served by one on Infra clusters/vlan100",
      "InfraClusterAttachment/clusters/two spec.dns DuplicateHostname error: domain same.example.com is already served by one on Infra clusters/vlan100; this attachment is not served",
    ],
    served: ["vlan100: one", "vlan200: "],
  },
  {
    name: "the incumbent keeps it across Infras, though created later",
    state: {
      ...combine(
        { infras: [infra(), vlan200], attachments: [old, newer({ created: "2025-01-01T00:00:00Z" })] },
        clusters,
      ),
      incumbents: new Map([["domain:same.example.com", "clusters/one"]]),
    },
    problems: [
      "Infra/clusters/vlan200  DuplicateHostname warning: two refused: domain same.example.com is already served by one on Infra clusters/vlan100",
      "InfraClusterAttachment/clusters/two spec.dns DuplicateHostname error: domain same.example.com is already served by one on Infra clusters/vlan100; this attachment is not served",
    ],
    served: ["vlan100: one", "vlan200: "],
  },
  {
    name: "across namespaces: the winner is named with its namespace",
    state: combine(
      { infras: [infra(), tenantB], attachments: [old, newer({ infra: "vlan100", namespace: "tenant-b" })] },
      clusters,
    ),
    problems: [
      "Infra/tenant-b/vlan100  DuplicateHostname warning: two refused: domain same.example.com is already served by clusters/one on Infra clusters/vlan100",
      "InfraClusterAttachment/tenant-b/two spec.dns DuplicateHostname error: domain same.example.com is already served by clusters/one on Infra clusters/vlan100; this attachment is not served",
    ],
    served: ["vlan100: one", "vlan100: "],
  },
  {
    name: "different domains on two Infras: both served",
    state: combine({ infras: [infra(), vlan200], attachments: [old, newer({ cluster: "other" })] }, clusters),
    problems: [],
    served: ["vlan100: one", "vlan200: two"],
  },
];

const shown = (r: BuildResult) => ({
  problems: r.problems.map(
    (p) => `${p.object.kind}/${p.object.namespace}/${p.object.name} ${p.field} ${p.reason} ${p.severity}: ${p.message}`,
  ),
  served: r.topologies.map(
    (t) =>
      `${t.infra.name}: ${t.attachments
        .filter((a) => a.served)
        .map((a) => a.ref.name)
        .join(", ")}`,
  ),
});

describe("a domain claimed on two Infras", () => {
  it.each(rows)("$name", (row) => {
    const full = build(row.state);
    expect(shown(full)).toEqual({ problems: row.problems, served: row.served });
    // One Infra's proxy only answers the domain's SNI names.
    const serving = full.topologies.filter((t) =>
      (t.proxy?.backends ?? []).some((b) => b.serverNames.includes("api.same.example.com")),
    );
    expect(serving.map((t) => t.infra.name)).toEqual(["vlan100"]);
    expect(shown(buildFrom(row.state).result)).toEqual(shown(full));
  });

  it("incrementally: the newcomer appearing or its Infra changing keeps the winner; the winner leaving hands it over", () => {
    const vlan100 = infra();
    const before = combine({ infras: [vlan100, vlan200], attachments: [old] }, clusters);
    const start: ClusterState = { ...before, attachments: [old, newer()] };
    // The newcomer appears on vlan200: only that Infra's objects changed, yet vlan100's claim holds.
    let inc = buildIncremental(buildFrom(before), changesBetween(before, start), inputsOf(start));
    expect(shown(inc.result)).toEqual(shown(build(start)));
    expect(shown(inc.result).served).toEqual(["vlan100: one", "vlan200: "]);
    const step = (next: ClusterState): void => {
      inc = buildIncremental(inc, changesBetween(previous, next), inputsOf(next));
      expect(shown(inc.result)).toEqual(shown(build(next)));
      previous = next;
    };
    let previous = start;
    // Only vlan200 changes (its proxy moves): the domain stays with vlan100's attachment.
    const moved = infra("vlan200", {
      ...vlan200.spec,
      infraComponents: { ...vlan200.spec.infraComponents, proxy: { serverIP: "198.51.100.5" } },
    });
    step({ ...start, infras: [vlan100, moved] });
    expect(shown(inc.result).served).toEqual(["vlan100: one", "vlan200: "]);
    // The winner goes: the newcomer on the other Infra is served now.
    step({ ...previous, attachments: [newer()] });
    expect(shown(inc.result).served).toEqual(["vlan100: ", "vlan200: two"]);
    expect(shown(inc.result).problems).toEqual([]);
    // It comes back, older by its timestamp: it wins again everywhere.
    step({ ...previous, attachments: [old, newer()] });
    expect(shown(inc.result).served).toEqual(["vlan100: one", "vlan200: "]);
  });
});
