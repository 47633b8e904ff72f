// One table row per conflict rule: objects in, problems (object, field, reason) and served set out.
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import type { ClusterState, Problem } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, machine, NS, state } from "../support/fixtures.js";

interface Row {
  name: string;
  state: ClusterState;
  /** Problems expected, as "Kind/name field reason severity". */
  problems: string[];
  /** Names of the Infras that still produce a topology. */
  topologies: string[];
  /** Attachments served, as "infra: a, b". */
  served?: string[];
}

const short = (p: Problem) => `${p.object.kind}/${p.object.name} ${p.field} ${p.reason} ${p.severity}`;
const one = hostedCluster("one", 1, ["192.0.2.10"]);

const rows: Row[] = [
  {
    name: "invalid CIDR (host bits set) excludes only that Infra",
    state: combine({ infras: [infra("bad", { networkConfig: { cidr: "192.0.2.1/24" } }), infra("good")] }),
    problems: ["Infra/bad spec.networkConfig.cidr InvalidSpec error"],
    topologies: ["good"],
  },
  {
    name: "gateway outside the CIDR",
    state: combine({ infras: [infra("x", { networkConfig: { gateway: "198.51.100.1" } })] }),
    problems: ["Infra/x spec.networkConfig.gateway InvalidSpec error"],
    topologies: [],
  },
  {
    name: "gateway is the network address",
    state: combine({ infras: [infra("x", { networkConfig: { gateway: "192.0.2.0" } })] }),
    problems: ["Infra/x spec.networkConfig.gateway InvalidSpec error"],
    topologies: [],
  },
  {
    name: "server IP outside the CIDR",
    state: combine({ infras: [infra("x", { infraComponents: { dns: { serverIP: "192.0.3.3" } } })] }),
    problems: ["Infra/x spec.infraComponents.dns.serverIP InvalidSpec error"],
    topologies: [],
  },
  {
    name: "two components on one address",
    state: combine({ infras: [infra("x", { infraComponents: { proxy: { serverIP: "192.0.2.3" } } })] }),
    problems: ["Infra/x spec.infraComponents.proxy.serverIP InvalidSpec error"],
    topologies: [],
  },
  {
    name: "component on the gateway address",
    state: combine({ infras: [infra("x", { infraComponents: { dhcp: { serverIP: "192.0.2.1" } } })] }),
    problems: ["Infra/x spec.infraComponents.dhcp.serverIP InvalidSpec error"],
    topologies: [],
  },
  {
    name: "pool containing a component address",
    state: combine({
      infras: [infra("x", { infraComponents: { dhcp: { rangeStart: "192.0.2.2", rangeEnd: "192.0.2.50" } } })],
    }),
    // .2 (DHCP), .3 (DNS) and .4 (proxy) each named.
    problems: Array(3).fill("Infra/x spec.infraComponents.dhcp.rangeStart InvalidSpec error") as string[],
    topologies: [],
  },
  {
    name: "pool end before start",
    state: combine({
      infras: [infra("x", { infraComponents: { dhcp: { rangeStart: "192.0.2.150", rangeEnd: "192.0.2.120" } } })],
    }),
    problems: ["Infra/x spec.infraComponents.dhcp.rangeEnd InvalidSpec error"],
    topologies: [],
  },
  {
    name: "pool outside the CIDR",
    state: combine({ infras: [infra("x", { infraComponents: { dhcp: { rangeEnd: "192.0.3.10" } } })] }),
    problems: ["Infra/x spec.infraComponents.dhcp.rangeEnd InvalidSpec error"],
    topologies: [],
  },
  {
    name: "enabled component without serverIP",
    state: combine({
      infras: [infra("x", { infraComponents: { proxy: { serverIP: undefined as unknown as string } } })],
    }),
    problems: ["Infra/x spec.infraComponents.proxy.serverIP InvalidSpec error"],
    topologies: [],
  },
  {
    name: "dnsServers mixing resolv.conf and IPs",
    state: combine({ infras: [infra("x", { networkConfig: { dnsServers: ["resolv.conf", "198.51.100.53"] } })] }),
    problems: ["Infra/x spec.networkConfig.dnsServers InvalidSpec error"],
    topologies: [],
  },
  {
    name: "internalProxyService inside the VLAN",
    state: combine({ infras: [infra("x", { infraComponents: { proxy: { internalProxyService: "192.0.2.77" } } })] }),
    problems: ["Infra/x spec.infraComponents.proxy.internalProxyService InvalidSpec error"],
    topologies: [],
  },
  {
    name: "internalProxyService naming a missing Service is pending, Infra still served",
    state: combine({
      infras: [infra("x", { infraComponents: { proxy: { internalProxyService: "envoy.proxies.svc.cluster.local" } } })],
    }),
    problems: ["Infra/x spec.infraComponents.proxy.internalProxyService InternalProxyServicePending pending"],
    topologies: ["x"],
  },
  {
    name: "attachment whose Infra is missing",
    state: combine({ infras: [infra()], attachments: [attachment("one", { infra: "nope" })] }, one),
    problems: ["InfraClusterAttachment/one spec.infraRef.name InfraNotFound error"],
    topologies: ["vlan100"],
    served: ["vlan100: "],
  },
  {
    name: "attachment of an invalid Infra waits",
    state: combine(
      { infras: [infra("vlan100", { networkConfig: { gateway: "10.0.0.1" } })], attachments: [attachment("one")] },
      one,
    ),
    problems: [
      "Infra/vlan100 spec.networkConfig.gateway InvalidSpec error",
      "InfraClusterAttachment/one spec.infraRef.name InfraNotReady pending",
    ],
    topologies: [],
  },
  {
    name: "duplicate HostedCluster: the first by name keeps it when neither has a creationTimestamp",
    state: combine(
      {
        infras: [infra()],
        attachments: [attachment("a", { hc: "one" }), attachment("b", { hc: "one" }), attachment("two")],
      },
      one,
      hostedCluster("two", 2, []),
    ),
    problems: [
      "Infra/vlan100  DuplicateHostedCluster warning",
      "InfraClusterAttachment/b spec.hostedClusterRef DuplicateHostedCluster error",
    ],
    topologies: ["vlan100"],
    served: ["vlan100: a, two"],
  },
  {
    name: "duplicate HostedCluster: the one created first keeps it, whatever its name",
    state: combine(
      {
        infras: [infra()],
        attachments: [
          attachment("a", { hc: "one", created: "2026-02-01T00:00:00Z" }),
          attachment("b", { hc: "one", created: "2026-01-01T00:00:00Z" }),
        ],
      },
      one,
    ),
    problems: [
      "Infra/vlan100  DuplicateHostedCluster warning",
      "InfraClusterAttachment/a spec.hostedClusterRef DuplicateHostedCluster error",
    ],
    topologies: ["vlan100"],
    served: ["vlan100: b"],
  },
  {
    name: "duplicate HostedCluster across Infras: the newcomer's Infra carries the reason and counts it",
    state: combine(
      {
        infras: [
          infra(),
          infra("other", {
            networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1" },
            infraComponents: {
              dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
              dns: { serverIP: "198.51.100.3" },
              proxy: { serverIP: "198.51.100.4" },
            },
          }),
        ],
        attachments: [
          attachment("a", { hc: "one", created: "2026-01-01T00:00:00Z" }),
          attachment("b", { hc: "one", infra: "other", created: "2026-03-01T00:00:00Z" }),
        ],
      },
      one,
    ),
    problems: [
      "Infra/other  DuplicateHostedCluster warning",
      "InfraClusterAttachment/b spec.hostedClusterRef DuplicateHostedCluster error",
    ],
    topologies: ["other", "vlan100"],
    served: ["other: ", "vlan100: a"],
  },
  {
    name: "duplicate domain: the incumbent keeps it even when the newcomer is older",
    state: {
      ...combine(
        {
          infras: [infra()],
          attachments: [
            attachment("one", { cluster: "same", created: "2026-03-01T00:00:00Z" }),
            attachment("two", { cluster: "same", created: "2026-01-01T00:00:00Z" }),
          ],
        },
        one,
        hostedCluster("two", 2, []),
      ),
      incumbents: new Map([["domain:same.example.com", "clusters/one"]]),
    },
    problems: [
      "Infra/vlan100  DuplicateHostname warning",
      "InfraClusterAttachment/two spec.dns DuplicateHostname error",
    ],
    topologies: ["vlan100"],
    served: ["vlan100: one"],
  },
  {
    name: "duplicate domain on one Infra: the oldest keeps it, the Infra says so once",
    state: combine(
      {
        infras: [infra()],
        attachments: [
          attachment("one", { cluster: "same" }),
          attachment("two", { cluster: "same" }),
          attachment("three", { cluster: "same" }),
        ],
      },
      one,
      hostedCluster("two", 2, []),
      hostedCluster("three", 3, []),
    ),
    problems: [
      "Infra/vlan100  DuplicateHostname warning",
      "InfraClusterAttachment/three spec.dns DuplicateHostname error",
      "InfraClusterAttachment/two spec.dns DuplicateHostname error",
    ],
    topologies: ["vlan100"],
    served: ["vlan100: one"],
  },
  {
    name: "duplicate worker source IP stays with the oldest claimant; the newcomer is told",
    state: combine(
      { infras: [infra()], attachments: [attachment("one"), attachment("two")] },
      hostedCluster("one", 1, ["192.0.2.10", "192.0.2.11"]),
      hostedCluster("two", 2, ["192.0.2.11", "192.0.2.12"]),
    ),
    problems: ["Infra/vlan100  DuplicateSourceIP warning", "InfraClusterAttachment/two  DuplicateSourceIP warning"],
    topologies: ["vlan100"],
    served: ["vlan100: one, two"],
  },
  {
    name: "control-plane namespace missing: attachment waits",
    state: combine({ infras: [infra()], attachments: [attachment("one")] }),
    problems: ["InfraClusterAttachment/one spec.controlPlaneNamespace WaitingForControlPlaneNamespace pending"],
    topologies: ["vlan100"],
    served: ["vlan100: "],
  },
  {
    name: "control-plane Service missing: attachment served, pending",
    state: combine({ infras: [infra()], attachments: [attachment("one")] }, { ...one, services: [] }),
    problems: [
      "InfraClusterAttachment/one  WaitingForServices pending",
      "InfraClusterAttachment/one  WaitingForServices pending",
      "InfraClusterAttachment/one  WaitingForServices pending",
      "InfraClusterAttachment/one  WaitingForServices pending",
    ],
    topologies: ["vlan100"],
    served: ["vlan100: one"],
  },
  {
    name: "schema-invalid object is reported with its field path",
    state: state({
      invalid: [
        {
          ref: { kind: "Infra", namespace: NS, name: "broken" },
          errors: [{ field: "spec.networkConfig.cidr", message: "expected required property" }],
        },
      ],
    }),
    problems: ["Infra/broken spec.networkConfig.cidr InvalidSpec error"],
    topologies: [],
  },
];

describe("conflict rules", () => {
  it.each(rows)("$name", (row) => {
    const result = build(row.state);
    expect(result.problems.map(short)).toEqual(row.problems);
    expect(result.topologies.map((t) => t.infra.name)).toEqual(row.topologies);
    if (row.served !== undefined) {
      expect(
        result.topologies.map(
          (t) =>
            `${t.infra.name}: ${t.attachments
              .filter((a) => a.served)
              .map((a) => a.ref.name)
              .join(", ")}`,
        ),
      ).toEqual(row.served);
    }
    for (const p of result.problems) expect(p.message.length).toBeGreaterThan(10);
  });

  it("a duplicate worker address is routed to the oldest claimant only", () => {
    const result = build(
      combine(
        { infras: [infra()], attachments: [attachment("one"), attachment("two")] },
        hostedCluster("one", 1, ["192.0.2.10", "192.0.2.11"]),
        hostedCluster("two", 2, ["192.0.2.11", "192.0.2.12"]),
      ),
    );
    const t = result.topologies[0];
    expect(t?.attachments.map((a) => a.workerAddresses)).toEqual([["192.0.2.10", "192.0.2.11"], ["192.0.2.12"]]);
    const ranges = t?.proxy?.backends.filter((b) => b.kind === "kubernetes-service").map((b) => b.sourcePrefixRanges);
    expect(ranges).toEqual([["192.0.2.10/31"], ["192.0.2.12/32"]]);
  });

  it("a Machine of a non-KubeVirt NodePool contributes no worker address", () => {
    const cp = `${NS}-one`;
    const s = combine(
      { infras: [infra()], attachments: [attachment("one")] },
      {
        ...one,
        nodePools: [{ ...one.nodePools?.at(0), spec: { clusterName: "one", platform: { type: "AWS" } } } as never],
      },
      { machines: [machine(cp, "extra", "one-workers", ["192.0.2.50"])] },
    );
    expect(build(s).topologies[0]?.attachments[0]?.workerAddresses).toEqual([]);
  });
});
