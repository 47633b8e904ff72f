// resolveAttachments' rules not covered by the conflict and topology suites
// (src/model/attachments.ts): a kept worker list is used only while everything it was found from
// is the same, a stated hostname is matched against domains label by label, the oldest claim when
// a creation time is missing, and when a control-plane namespace or an Infra counts as existing.
import { describe, expect, test } from "vitest";
import type { HostedCluster } from "../../src/api/external.js";
import type { InfraClusterAttachment } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import type { BuildResult, ClusterState } from "../../src/model/types.js";
import {
  attachment,
  combine,
  controlPlaneServices,
  hostedCluster,
  infra,
  namespace,
  NS,
  vmi,
} from "../support/fixtures.js";

const workersOf = (r: BuildResult, name = "one") =>
  r.topologies[0]?.attachments.find((a) => a.ref.name === name)?.workerAddresses;

/** The same state with a copy of every attachment: nothing kept from an earlier build applies. */
const fresh = (s: ClusterState): ClusterState => ({ ...s, attachments: s.attachments.map((a) => structuredClone(a)) });

describe("a kept worker list is used only while everything it was found from is the same", () => {
  const a = attachment("one");
  const base = combine(
    { infras: [infra("vlan100", { infraComponents: { dhcp: { enabled: false } } })], attachments: [a] },
    hostedCluster("one", 1, ["192.0.2.10", "198.51.100.10", "192.0.2.200"]),
  );
  test.each<[string, ClusterState]>([
    [
      "another VLAN network, same prefix",
      {
        ...base,
        infras: [
          infra("vlan100", {
            networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1" },
            infraComponents: {
              dhcp: { enabled: false },
              dns: { serverIP: "198.51.100.3" },
              proxy: { serverIP: "198.51.100.4" },
            },
          }),
        ],
      },
    ],
    [
      "the same network, a longer prefix",
      {
        ...base,
        infras: [
          infra("vlan100", { networkConfig: { cidr: "192.0.2.0/25" }, infraComponents: { dhcp: { enabled: false } } }),
        ],
      },
    ],
  ])("%s", (_, next) => {
    const before = workersOf(build(base));
    const kept = workersOf(build(next));
    expect(kept).toEqual(workersOf(build(fresh(next))));
    expect(kept).not.toEqual(before);
  });

  test("DHCP switched on and off, and an allocation table that fills", () => {
    // The worker's VMI is observed but not on the VLAN: with DHCP (the address authority) it has no
    // allocation and so no address; without DHCP its Machine's report counts.
    const offNad = vmi(`${NS}-one`, "one-worker-0", "02:00:00:00:00:01", undefined, { nad: "other/nad" });
    const onNad = vmi(`${NS}-one`, "one-worker-0", "02:00:00:00:00:01", "192.0.2.10");
    const dhcpOn = combine({ infras: [infra()], attachments: [a] }, hostedCluster("one", 1, ["192.0.2.10"]), {
      vmis: [offNad],
    });
    const dhcpOff = { ...dhcpOn, infras: base.infras };
    const allocated = { ...dhcpOn, vmis: [onNad] };
    // The same Machines and VMIs, another table: the VM holds .150 from before, not its report.
    const held = {
      ...allocated,
      dhcpAllocations: new Map([
        [`${NS}/vlan100-dhcp`, [{ mac: "02:00:00:00:00:01", ip: "192.0.2.150", vmi: `${NS}-one/one-worker-0` }]],
      ]),
    };
    // No VMI: the Machine's report counts, less what the table keeps for a VM that went away.
    const noVmi = { ...dhcpOn, vmis: [] };
    /** A table holding only the address of a VM that went away, released 10 minutes ago. */
    const releasedOnly = (ip: string) => ({
      ...noVmi,
      dhcpAllocations: new Map([
        [
          `${NS}/vlan100-dhcp`,
          [{ mac: "02:00:00:00:00:09", ip, vmi: `${NS}-one/gone`, releasedAt: "2026-01-01T00:00:00.000Z" }],
        ],
      ]),
      now: Date.parse("2026-01-01T00:10:00Z"),
    });
    const released = releasedOnly("192.0.2.10");
    // Released entries alone again, another address: the Machine's report counts once more.
    const releasedElsewhere = releasedOnly("192.0.2.11");
    const steps = [
      dhcpOn,
      dhcpOff,
      dhcpOn,
      allocated,
      held,
      allocated,
      dhcpOn,
      noVmi,
      released,
      releasedElsewhere,
      noVmi,
    ];
    const got = steps.map((s) => workersOf(build(s)));
    expect(got).toEqual(steps.map((s) => workersOf(build(fresh(s)))));
    expect(got.slice(4, 10)).toEqual([["192.0.2.150"], ["192.0.2.10"], [], ["192.0.2.10"], [], ["192.0.2.10"]]);
  });
});

describe("claims", () => {
  function hc(name: string, apiHost: string): HostedCluster {
    return {
      apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster",
      metadata: { namespace: NS, name },
      status: { controlPlaneEndpoint: { host: apiHost, port: 6443 } },
    };
  }
  const run = (attachments: InfraClusterAttachment[], hostedClusters: HostedCluster[]) =>
    build(
      combine(
        { infras: [infra()], attachments, hostedClusters },
        hostedCluster("one", 1, []),
        hostedCluster("two", 2, []),
      ),
    );

  test("an attachment's own stated hostname under its own domain is its own, not a duplicate", () => {
    const r = run([attachment("one")], [hc("one", "api-x.one.example.com")]);
    expect(r.problems.filter((p) => p.reason === "DuplicateHostname")).toEqual([]);
    expect(r.topologies[0]?.proxy?.backends.find((b) => b.kind === "kube-apiserver")?.serverNames).toEqual([
      "api-x.one.example.com",
    ]);
  });

  test("a stated hostname is matched against domains by whole labels: xone.example.com is not under one.example.com", () => {
    const r = run([attachment("one"), attachment("two")], [hc("two", "api.xone.example.com")]);
    expect(r.problems.filter((p) => p.reason === "DuplicateHostname")).toEqual([]);
  });

  test("an attachment without a creation time is the older claim", () => {
    const late = attachment("a", { hc: "one", created: "2026-01-01T00:00:00Z", baseDomain: "a.example.com" });
    const undated = attachment("b", { hc: "one", baseDomain: "b.example.com" });
    const served = run([late, undated], [])
      .topologies[0]?.attachments.filter((x) => x.served)
      .map((x) => x.ref.name);
    expect(served).toEqual(["b"]);
  });
});

describe("what counts as existing", () => {
  const cp = `${NS}-one`;
  const waiting = (s: ClusterState) =>
    build(s)
      .problems.filter((p) => p.reason === "WaitingForControlPlaneNamespace")
      .map((p) => p.object.name);
  test.each<[string, Partial<ClusterState>, string[]]>([
    ["a Namespace object alone", { namespaces: [namespace(cp)] }, []],
    ["a Service in it alone", { services: controlPlaneServices(cp, 1) }, []],
    ["nothing in it", {}, ["one"]],
  ])("a control-plane namespace known by %s", (_, parts, want) => {
    expect(waiting(combine({ infras: [infra()], attachments: [attachment("one")] }, parts))).toEqual(want);
  });

  test("an invalid object of another kind named like the Infra does not make the Infra exist", () => {
    const a = attachment("one", { infra: "missing" });
    const s: ClusterState = {
      ...combine({ infras: [infra()], attachments: [a] }, hostedCluster("one", 1, [])),
      invalid: [{ ref: { kind: "InfraClusterAttachment", namespace: NS, name: "missing" }, errors: [] }],
    };
    expect(
      build(s)
        .problems.filter((p) => p.object.name === "one")
        .map((p) => p.reason),
    ).toContain("InfraNotFound");
  });
});
