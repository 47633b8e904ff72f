// Which Infras a keyed change rebuilds (src/model/incremental/infras-read.ts), one row per rule, and that the others
// keep their very objects (so the renderers and the xDS cache skip them). Equality with build()
// on random sequences is test/model/incremental/rebuild.property.test.ts.
import { describe, expect, it } from "vitest";
import { build } from "../../../src/model/build.js";
import { changesBetween, type ObjectChange } from "../../../src/model/incremental/infras-read.js";
import { buildFrom, buildIncremental, inputsOf } from "../../../src/model/incremental/rebuild.js";
import type { BuildResult, ClusterState } from "../../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, machine, NS, service, vmi } from "../../support/fixtures.js";

const B_NET = {
  networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1", networkAttachmentDefinition: "vlan200" },
  infraComponents: {
    dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
    dns: { serverIP: "198.51.100.3" },
    proxy: { serverIP: "198.51.100.4", internalProxyService: "proxy-int.proxies" },
  },
};
const C_NET = {
  networkConfig: { cidr: "203.0.113.0/24", gateway: "203.0.113.1" },
  infraComponents: {
    dhcp: { serverIP: "203.0.113.2", rangeStart: "203.0.113.100", rangeEnd: "203.0.113.199" },
    dns: { serverIP: "203.0.113.3" },
    proxy: { serverIP: "203.0.113.4" },
  },
};

/** Infra a (NAD vlan100) serves h1, b (vlan200) serves h2, c (also vlan100) serves h3. */
const base: ClusterState = combine(
  { infras: [infra("a"), infra("b", B_NET), infra("c", C_NET)] },
  {
    attachments: [
      attachment("h1", { infra: "a", created: "2026-01-01T00:00:00Z" }),
      attachment("h2", { infra: "b" }),
      attachment("h3", { infra: "c" }),
    ],
  },
  hostedCluster("h1", 1, ["192.0.2.10"]),
  hostedCluster("h2", 2, ["198.51.100.10"]),
  hostedCluster("h3", 3, ["203.0.113.10"]),
);

const rows: { name: string; edit: (s: ClusterState) => ClusterState; rebuilt: string[] }[] = [
  {
    name: "a worker Machine of h2 moves: only Infra b",
    edit: (s) => ({
      ...s,
      machines: [...s.machines].map((m) =>
        m.metadata.name === "h2-worker-0" ? machine(`${NS}-h2`, "h2-worker-0", "h2-workers", ["198.51.100.11"]) : m,
      ),
    }),
    rebuilt: ["clusters/b"],
  },
  {
    name: "a control-plane Service of h1 changes: only Infra a",
    edit: (s) => ({
      ...s,
      services: [...s.services].map((x) =>
        x.metadata.namespace === `${NS}-h1` && x.metadata.name === "kube-apiserver"
          ? service(`${NS}-h1`, "kube-apiserver", "10.96.1.77", [6443])
          : x,
      ),
    }),
    rebuilt: ["clusters/a"],
  },
  {
    name: "the Service b names as its internalProxyService appears: only Infra b",
    edit: (s) => ({ ...s, services: [...s.services, service("proxies", "proxy-int", "172.30.9.10", [443])] }),
    rebuilt: ["clusters/b"],
  },
  {
    name: "a VMI on NAD vlan100 appears: the two Infras on that NAD (a, c), not b",
    edit: (s) => ({ ...s, vmis: [...s.vmis, vmi(NS, "vm-1", "02:00:00:00:00:01")] }),
    rebuilt: ["clusters/a", "clusters/c"],
  },
  {
    name: "an attachment on c claims h1's HostedCluster: c and a, where the claim is held (oldest claim wins)",
    edit: (s) => ({ ...s, attachments: [...s.attachments, attachment("late", { infra: "c", hc: "h1" })] }),
    rebuilt: ["clusters/a", "clusters/c"],
  },
  {
    name: "an attachment names an Infra that does not exist: only that name (its InfraNotFound problem)",
    edit: (s) => ({ ...s, attachments: [...s.attachments, attachment("lost", { infra: "nope" })] }),
    rebuilt: ["clusters/nope"],
  },
  {
    name: "an attachment moves from a to b: both",
    edit: (s) => ({
      ...s,
      attachments: s.attachments.map((a) => (a.metadata.name === "h1" ? attachment("h1", { infra: "b" }) : a)),
    }),
    rebuilt: ["clusters/a", "clusters/b"],
  },
];

describe("incremental build: which Infras a change rebuilds", () => {
  it.each(rows)("$name", ({ edit, rebuilt }) => {
    const first = buildFrom(base);
    const next = edit(base);
    const step = buildIncremental(first, changesBetween(base, next), inputsOf(next));
    expect([...step.rebuilt].sort()).toEqual(rebuilt);
    expect(plain(step.result)).toEqual(plain(build(next)));
    // The Infras not rebuilt keep their topology objects: reuse downstream is by identity.
    for (const t of step.result.topologies) {
      const key = `${t.infra.namespace}/${t.infra.name}`;
      const before = first.result.topologies.find((x) => `${x.infra.namespace}/${x.infra.name}` === key);
      expect(t === before, key).toBe(!rebuilt.includes(key));
    }
  });

  it("the first build's claims fed back as incumbents rebuild nothing; the next change only its Infra", () => {
    const first = buildFrom(base);
    const fed = { ...base, incumbents: first.result.claims };
    const second = buildIncremental(first, [], inputsOf(fed));
    expect([...second.rebuilt]).toEqual([]);
    expect(second.result.topologies).toEqual(first.result.topologies);
    const next = rows[0]?.edit(fed) ?? fed;
    const third = buildIncremental(second, changesBetween(fed, next), inputsOf({ ...next, incumbents: second.claims }));
    expect([...third.rebuilt]).toEqual(["clusters/b"]);
    expect(plain(third.result)).toEqual(plain(build({ ...next, incumbents: second.claims })));
    // An incumbent naming another holder than the build chose: the Infra reading that claim is rebuilt.
    const other = new Map(third.claims).set("hostedCluster:clusters/h1", "clusters/late");
    const fourth = buildIncremental(third, [], inputsOf({ ...next, incumbents: other }));
    expect([...fourth.rebuilt]).toEqual(["clusters/a"]);
  });

  it("leaves the previous build as it was (pure)", () => {
    const first = buildFrom(base);
    const snapshot = JSON.stringify([first.result, [...first.index.objects.Machine.keys()]]);
    const change: ObjectChange = {
      kind: "Machine",
      before: undefined,
      after: machine(`${NS}-h1`, "h1-worker-9", "h1-workers", ["192.0.2.99"]),
    };
    const next = buildIncremental(first, [change], inputsOf(base));
    expect(next.result.topologies[0]?.attachments[0]?.workerAddresses).toEqual(["192.0.2.10", "192.0.2.99"]);
    expect(JSON.stringify([first.result, [...first.index.objects.Machine.keys()]])).toBe(snapshot);
  });

  it("a clock change rebuilds only Infras holding a released DHCP allocation", () => {
    const withVm = { ...base, vmis: [vmi(NS, "vm-1", "02:00:00:00:00:01")], now: 1e12 };
    const first = buildFrom(withVm);
    const held = first.result.topologies.map((t) => [t.infra.name, t.dhcp?.allocations.length ?? 0]);
    expect(held).toEqual([
      ["a", 1],
      ["b", 0],
      ["c", 1],
    ]);
    // The VMI goes: a and c release its address (stamped now) and depend on the clock until it expires.
    const gone = { ...withVm, vmis: [], dhcpAllocations: tables(first.result) };
    const second = buildIncremental(first, changesBetween(withVm, gone), inputsOf(gone));
    const later = { ...gone, dhcpAllocations: tables(second.result), now: 1e12 + 7_200_000 };
    const third = buildIncremental(second, [], inputsOf(later));
    expect([...third.rebuilt].sort()).toEqual(["clusters/a", "clusters/c"]);
    expect(plain(third.result)).toEqual(plain(build(later)));
    expect(third.result.topologies.map((t) => t.dhcp?.allocations.length ?? 0)).toEqual([0, 0, 0]);
  });
});

function tables(result: ReturnType<typeof build>): NonNullable<ClusterState["dhcpAllocations"]> {
  return new Map(result.topologies.flatMap((t) => (t.dhcp === undefined ? [] : [[t.dhcp.name, t.dhcp.allocations]])));
}

/** The claims as a plain Map (the same entries; toEqual compares classes: a view, LayeredClaims). */
function plain(result: BuildResult): BuildResult {
  return { ...result, claims: new Map(result.claims) };
}
