// The DHCP model's reading of VMIs and attachments (src/model/dhcp.ts), through the model build:
// which interface of a VMI is on the Infra's network (Multus networkName forms, NAD or CUDN), where
// its MAC and reported address come from (spec, then status), what a VMI that reports nothing yet
// gets, and which MetalLB ranges are held back.
import { describe, expect, test } from "vitest";
import type { VirtualMachineInstance, VmiInterfaceStatus } from "../../src/api/external.js";
import type { DHCPAllocation, Infra } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import type { BuildResult } from "../../src/model/types.js";
import { attachment, combine, cudnInfra, infra, NS } from "../support/fixtures.js";

const MAC = "02:00:00:00:00:0a";
const T0 = Date.parse("2026-01-01T00:00:00Z");

interface Shape {
  readonly namespace?: string;
  /** spec.networks: Multus networkName per network name ("pod" for the pod network). */
  readonly networks?: Record<string, string>;
  /** spec.domain.devices.interfaces: MAC per interface name (undefined: none stated). */
  readonly specMacs?: Record<string, string | undefined>;
  readonly status?: VmiInterfaceStatus[];
  /** No spec (or no status) at all. */
  readonly noSpec?: boolean;
  readonly noStatus?: boolean;
}

function vm(name: string, s: Shape): VirtualMachineInstance {
  const networks = Object.entries(s.networks ?? { vlan: `${NS}/vlan100` }).map(([n, ref]) =>
    ref === "pod" ? { name: n, pod: {} } : { name: n, multus: { networkName: ref } },
  );
  const interfaces = Object.entries(s.specMacs ?? {}).map(([n, mac]) => ({
    name: n,
    ...(mac === undefined ? {} : { macAddress: mac }),
  }));
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: { namespace: s.namespace ?? NS, name, creationTimestamp: "2026-01-01T00:00:00Z" },
    ...(s.noSpec === true
      ? {}
      : { spec: { networks, ...(s.specMacs === undefined ? {} : { domain: { devices: { interfaces } } }) } }),
    ...(s.noStatus === true ? {} : { status: { interfaces: s.status ?? [] } }),
  };
}

function run(
  vmis: VirtualMachineInstance[],
  opts: { infra?: Infra; previous?: DHCPAllocation[]; attachments?: ReturnType<typeof attachment>[] } = {},
): BuildResult {
  return build({
    ...combine({ infras: [opts.infra ?? infra("vlan100")], attachments: opts.attachments ?? [] }, { vmis }),
    dhcpAllocations: new Map([[`${NS}/vlan100-dhcp`, opts.previous ?? []]]),
    now: T0,
  });
}

/** "mac ip" per reservation. */
function reservations(r: BuildResult): string[] {
  return (r.topologies[0]?.dhcp?.reservations ?? []).map((x) => `${x.hwAddress} ${x.ipAddress}`);
}

function warnings(r: BuildResult, reason: string): string[] {
  return r.problems.filter((p) => p.reason === reason).map((p) => p.message);
}

describe("which VMI interface is on the Infra's NAD", () => {
  test.each<[string, Shape, boolean]>([
    ['"<namespace>/<name>" of the NAD', { networks: { vlan: `${NS}/vlan100` } }, true],
    ["a bare name, in the VMI's own namespace (the NAD's)", { networks: { vlan: "vlan100" } }, true],
    ["a bare name, from a VMI in another namespace", { namespace: "other", networks: { vlan: "vlan100" } }, false],
    [
      "the NAD's namespace named from another namespace",
      { namespace: "other", networks: { vlan: `${NS}/vlan100` } },
      true,
    ],
    ["another NAD of the same namespace", { networks: { vlan: `${NS}/vlan200` } }, false],
    ["a NAD of the same name elsewhere", { networks: { vlan: "other/vlan100" } }, false],
    ["an empty namespace before the slash", { networks: { vlan: "/vlan100" } }, false],
    ["the pod network only", { networks: { default: "pod" } }, false],
  ])("%s → %s", (_, shape, on) => {
    const r = run([
      vm("w", { specMacs: { vlan: MAC }, ...shape, status: [{ name: "vlan", ipAddress: "192.0.2.150" }] }),
    ]);
    expect(reservations(r)).toEqual(on ? [`${MAC} 192.0.2.150`] : []);
  });

  test("on a ClusterUserDefinedNetwork, the NAD's name alone says so, in any namespace", () => {
    const cudn = cudnInfra();
    const on = (ref: string, namespace = NS) =>
      reservations(run([vm("w", { namespace, networks: { vlan: ref }, specMacs: { vlan: MAC } })], { infra: cudn }))
        .length === 1;
    expect(run([], { infra: cudn }).problems.filter((p) => p.severity === "error")).toEqual([]);
    expect([
      on("vlan-l"),
      on("tenant/vlan-l", "tenant"),
      on("infra/vlan-l", "tenant"),
      on("vlan100"),
      on(`${NS}/vlan100`),
    ]).toEqual([true, true, true, false, false]);
  });
});

describe("an interface's MAC and reported address", () => {
  const statusOf = (ipAddress?: string, ipAddresses?: string[], mac?: string): VmiInterfaceStatus => ({
    name: "vlan",
    ...(mac === undefined ? {} : { mac }),
    ...(ipAddress === undefined ? {} : { ipAddress }),
    ...(ipAddresses === undefined ? {} : { ipAddresses }),
  });
  test.each<[string, Shape, string[]]>([
    [
      "the spec's MAC before the status's",
      { specMacs: { vlan: MAC }, status: [statusOf("192.0.2.150", undefined, "02:00:00:00:00:99")] },
      [`${MAC} 192.0.2.150`],
    ],
    [
      "the status's MAC when the spec states none",
      { specMacs: { vlan: undefined }, status: [statusOf("192.0.2.150", undefined, MAC)] },
      [`${MAC} 192.0.2.150`],
    ],
    [
      "the status's MAC when the spec lists no interfaces",
      { status: [statusOf("192.0.2.150", undefined, MAC)] },
      [`${MAC} 192.0.2.150`],
    ],
    [
      "a MAC written with dashes and capitals",
      { specMacs: { vlan: "02-00-00-00-00-0A" }, status: [statusOf("192.0.2.150")] },
      [`${MAC} 192.0.2.150`],
    ],
    [
      "the interface of the same name, not the first listed",
      {
        networks: { default: "pod", vlan: `${NS}/vlan100` },
        specMacs: { default: "02:00:00:00:00:01", vlan: MAC },
        status: [{ name: "default", mac: "02:00:00:00:00:01", ipAddress: "192.0.2.160" }, statusOf("192.0.2.150")],
      },
      [`${MAC} 192.0.2.150`],
    ],
    [
      "the first reported address on the VLAN, past the others",
      { specMacs: { vlan: MAC }, status: [statusOf("10.128.0.5", ["10.128.0.5", "192.0.2.150/24", "192.0.2.151"])] },
      [`${MAC} 192.0.2.150`],
    ],
    ["no status yet: an address from the pool", { specMacs: { vlan: MAC }, noStatus: true }, [`${MAC} 192.0.2.1xx`]],
  ])("%s", (_, shape, want) => {
    const got = reservations(run([vm("w", shape)]));
    expect(got.map((g) => g.replace(/ 192\.0\.2\.1(?!50$)[0-9][0-9]$/, " 192.0.2.1xx"))).toEqual(want);
  });

  test.each<[string, (v: VirtualMachineInstance) => void, string]>([
    ["a domain without devices: the status's MAC", (v) => v.spec && (v.spec.domain = {}), `${MAC} 192.0.2.150`],
    [
      "devices without interfaces: the status's MAC",
      (v) => v.spec && (v.spec.domain = { devices: {} }),
      `${MAC} 192.0.2.150`,
    ],
    [
      "a status without interfaces: the spec's MAC, an address from the pool",
      (v) => (v.status = {}),
      `${MAC} 192.0.2.1xx`,
    ],
  ])("%s", (_, cut, want) => {
    const v = vm("w", { specMacs: { vlan: MAC }, status: [statusOf("192.0.2.150", undefined, MAC)] });
    cut(v);
    expect(reservations(run([v])).map((g) => g.replace(/ 192\.0\.2\.1(?!50$)[0-9][0-9]$/, " 192.0.2.1xx"))).toEqual([
      want,
    ]);
  });

  test.each<[string, Shape, string]>([
    ["no MAC anywhere", { specMacs: { vlan: undefined }, status: [statusOf("192.0.2.150")] }, "interface vlan"],
    ["no status and no MAC in the spec", { noStatus: true, specMacs: { vlan: undefined } }, "interface vlan"],
    ["no spec at all", { noSpec: true, status: [statusOf("192.0.2.150", undefined, MAC)] }, ""],
    ["a MAC that is not one", { specMacs: { vlan: "02:00:00:00:00" } }, "interface vlan"],
  ])("%s: no reservation", (_, shape, named) => {
    const r = run([vm("w", shape)]);
    expect(reservations(r)).toEqual([]);
    expect(warnings(r, "VMIWithoutMAC")).toEqual(
      named === ""
        ? []
        : [`VMI ${NS}/w ${named} has no MAC address yet; it gets a reservation once KubeVirt reports one`],
    );
  });

  test('an unnamed network without a MAC is named "?"', () => {
    const v = vm("w", {});
    const spec = v.spec as { networks: { name?: string }[] };
    delete spec.networks[0]?.name;
    expect(warnings(run([v]), "VMIWithoutMAC")).toEqual([
      `VMI ${NS}/w interface ? has no MAC address yet; it gets a reservation once KubeVirt reports one`,
    ]);
  });
});

describe("what DHCP keeps free and where it gives from", () => {
  test("no pool: the CIDR's host addresses less the gateway and components", () => {
    const open = infra("vlan100");
    const dhcp = open.spec.infraComponents?.dhcp;
    delete dhcp?.rangeStart;
    delete dhcp?.rangeEnd;
    const r = run([vm("w", { specMacs: { vlan: MAC }, status: [{ name: "vlan", ipAddress: "192.0.2.254" }] })], {
      infra: open,
    });
    expect(r.topologies[0]?.dhcp?.poolUse).toEqual({ addresses: 250, allocated: 1 });
    expect(reservations(r)).toEqual([`${MAC} 192.0.2.254`]);
  });

  test("an empty MetalLB range is no range: nothing said, nothing held back", () => {
    const a = attachment("alpha", { spec: { appsIngress: { metallb: { ipAddressPoolRange: "" } } } });
    const r = run([], { attachments: [a] });
    expect(warnings(r, "InvalidAddressRange")).toEqual([]);
    expect(r.topologies[0]?.dhcp?.poolUse.addresses).toBe(100);
  });

  test("an allocation left on an accepted MetalLB range is dropped, naming the range's attachment", () => {
    const a = attachment("alpha", {
      spec: { appsIngress: { metallb: { ipAddressPoolRange: "192.0.2.200-192.0.2.209" } } },
    });
    const previous = [{ mac: MAC, ip: "192.0.2.205", vmi: `${NS}/w` }];
    const r = run([vm("w", { specMacs: { vlan: MAC } })], { attachments: [a], previous });
    expect(warnings(r, "AllocationDropped")).toEqual([
      `192.0.2.205 of ${MAC} (VMI ${NS}/w) is no longer allowed (the MetalLB range of ${NS}/alpha); the MAC gets a new address`,
    ]);
    expect(reservations(r)).toHaveLength(1);
    expect(reservations(r)[0]).not.toContain("192.0.2.205");
  });
});
