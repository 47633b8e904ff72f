// A hosted cluster's worker addresses (src/model/workers.ts), one rule per row: which Machines count
// (their NodePool's cluster and platform), where an address comes from (the Machine, its VMI, a VMI
// without a Machine), and how a DHCP table overrides what guests report
// (docs/reference.md#dhcp-authority).
import { describe, expect, test } from "vitest";
import {
  NODEPOOL_ANNOTATION,
  type Machine,
  type NodePool,
  type VirtualMachineInstance,
} from "../../src/api/external.js";
import { formatIPv4, parseCidr, parseIPv4 } from "../../src/model/ipv4.js";
import {
  indexWorkerSources,
  sameWorkerInputs,
  stripPrefix,
  vmiAddresses,
  workerAddresses,
  workerInputs,
  type AllocatedAddresses,
  type WorkerSources,
} from "../../src/model/workers.js";

const CIDR = parseCidr("192.0.2.0/24") ?? expect.unreachable();
const HC = { namespace: "clusters", name: "hc" };
const CP = "clusters-hc";

function machine(name: string, pool: string | undefined, addresses: (string | undefined)[] = [], ns = CP): Machine {
  return {
    apiVersion: "cluster.x-k8s.io/v1beta1",
    kind: "Machine",
    metadata: { namespace: ns, name, ...(pool === undefined ? {} : { annotations: { [NODEPOOL_ANNOTATION]: pool } }) },
    status: {
      addresses: addresses.map((address) =>
        address === undefined ? { type: "InternalIP" } : { type: "InternalIP", address },
      ),
    },
  };
}

function nodePool(ns: string, name: string, clusterName: string, platform = "KubeVirt"): NodePool {
  return {
    apiVersion: "hypershift.openshift.io/v1beta1",
    kind: "NodePool",
    metadata: { namespace: ns, name },
    spec: { clusterName, platform: { type: platform } },
  };
}

function vmi(
  name: string,
  interfaces: { ipAddress?: string; ipAddresses?: string[] }[],
  ns = CP,
): VirtualMachineInstance {
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: { namespace: ns, name },
    status: { interfaces },
  };
}

const POOLS = [
  nodePool("clusters", "np", "hc"),
  nodePool("clusters", "other", "hc2"),
  nodePool("clusters", "aws", "hc", "AWS"),
  { ...nodePool("clusters", "bare", "hc"), spec: { clusterName: "hc" } },
];

function addresses(src: Partial<WorkerSources>, allocated?: AllocatedAddresses): string[] {
  const index = indexWorkerSources({ machines: [], nodePools: POOLS, vmis: [], ...src });
  return workerAddresses(index, HC, CP, CIDR, allocated).map(formatIPv4);
}

function table(byVmi: Record<string, string[]>, taken: string[] = []): AllocatedAddresses {
  const ip = (s: string) => parseIPv4(s) ?? expect.unreachable();
  const held = Object.entries(byVmi).map(([k, v]) => [k, v.map(ip)] as const);
  return { byVmi: new Map(held), taken: new Set([...held.flatMap(([, v]) => v), ...taken.map(ip)]) };
}

describe("without a DHCP table: what the Machines and VMIs of the control-plane namespace report", () => {
  test.each<[string, Partial<WorkerSources>, string[]]>([
    [
      "a Machine of a KubeVirt NodePool of this cluster",
      { machines: [machine("m", "clusters/np", ["192.0.2.10"])] },
      ["192.0.2.10"],
    ],
    [
      "a NodePool named without a namespace is looked up in the HostedCluster's",
      { machines: [machine("m", "np", ["192.0.2.10"])] },
      ["192.0.2.10"],
    ],
    ["a NodePool of another cluster", { machines: [machine("m", "clusters/other", ["192.0.2.10"])] }, []],
    ["a NodePool of another platform", { machines: [machine("m", "clusters/aws", ["192.0.2.10"])] }, []],
    [
      "a NodePool that does not exist in the namespace named",
      { machines: [machine("m", "elsewhere/np", ["192.0.2.10"])] },
      [],
    ],
    ["no NodePool annotation", { machines: [machine("m", undefined, ["192.0.2.10"])] }, []],
    ["an empty NodePool annotation", { machines: [machine("m", "", ["192.0.2.10"])] }, []],
    [
      "a NodePool of this cluster that states no platform",
      { machines: [machine("m", "clusters/bare", ["192.0.2.10"])] },
      [],
    ],
    [
      "a Machine with no status yet falls back to its VMI",
      {
        machines: [
          { apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Machine", metadata: machine("m", "clusters/np").metadata },
        ],
        vmis: [vmi("m", [{ ipAddress: "192.0.2.20" }])],
      },
      ["192.0.2.20"],
    ],
    ["a Machine in another namespace", { machines: [machine("m", "clusters/np", ["192.0.2.10"], "clusters-hc2")] }, []],
    ["spaces around a reported address", { machines: [machine("m", "clusters/np", [" 192.0.2.10 "])] }, ["192.0.2.10"]],
    [
      "addresses outside the VLAN, unparsable or absent are not workers'",
      { machines: [machine("m", "clusters/np", ["198.51.100.1", "bogus", undefined, "192.0.2.11"])] },
      ["192.0.2.11"],
    ],
    [
      "sorted by address, each once",
      {
        machines: [
          machine("a", "clusters/np", ["192.0.2.30", "192.0.2.10"]),
          machine("b", "np", ["192.0.2.10", "192.0.2.9"]),
        ],
      },
      ["192.0.2.9", "192.0.2.10", "192.0.2.30"],
    ],
    [
      "a Machine with no VLAN address yet falls back to its VMI",
      { machines: [machine("m", "clusters/np", ["198.51.100.1"])], vmis: [vmi("m", [{ ipAddress: "192.0.2.20/24" }])] },
      ["192.0.2.20"],
    ],
    [
      "a Machine with a VLAN address does not read its VMI",
      { machines: [machine("m", "clusters/np", ["192.0.2.10"])], vmis: [vmi("m", [{ ipAddress: "192.0.2.20" }])] },
      ["192.0.2.10"],
    ],
    [
      "the VMI fallback is the Machine's own (same name), in the control-plane namespace",
      {
        machines: [machine("m", "clusters/np")],
        vmis: [
          vmi("n", [{ ipAddress: "192.0.2.20" }], "clusters-hc2"),
          vmi("m", [{ ipAddress: "192.0.2.21" }], "clusters-hc2"),
        ],
      },
      [],
    ],
    ["a VMI with no Machine (yet) counts", { vmis: [vmi("v", [{ ipAddress: "192.0.2.40" }])] }, ["192.0.2.40"]],
    [
      "a VMI named like a Machine of another cluster does not",
      { machines: [machine("m", "clusters/other", ["192.0.2.10"])], vmis: [vmi("m", [{ ipAddress: "192.0.2.40" }])] },
      [],
    ],
    ["a VMI in another namespace does not", { vmis: [vmi("v", [{ ipAddress: "192.0.2.40" }], "clusters-hc2")] }, []],
  ])("%s", (_, src, want) => {
    expect(addresses(src)).toEqual(want);
  });
});

describe("with a DHCP table: the table, not the guest, says which address a VM holds", () => {
  test.each<[string, Partial<WorkerSources>, AllocatedAddresses, string[]]>([
    [
      "a Machine whose VMI is observed gets its VMI's allocation, not what it reports",
      { machines: [machine("m", "clusters/np", ["192.0.2.10"])], vmis: [vmi("m", [{ ipAddress: "192.0.2.11" }])] },
      table({ "clusters-hc/m": ["192.0.2.50"] }),
      ["192.0.2.50"],
    ],
    [
      "… and nothing when the table holds nothing for it",
      { machines: [machine("m", "clusters/np", ["192.0.2.10"])], vmis: [vmi("m", [{ ipAddress: "192.0.2.10" }])] },
      table({}),
      [],
    ],
    [
      "a Machine without a VMI keeps what it reports, minus what is allocated to someone",
      { machines: [machine("m", "clusters/np", ["192.0.2.10", "192.0.2.11"])] },
      table({ "clusters-hc/x": ["192.0.2.11"] }),
      ["192.0.2.10"],
    ],
    [
      "… including addresses kept for a restarting VM",
      { machines: [machine("m", "clusters/np", ["192.0.2.10", "192.0.2.12"])] },
      table({}, ["192.0.2.12"]),
      ["192.0.2.10"],
    ],
    [
      "a VMI without a Machine gets its allocation, not what it reports",
      { vmis: [vmi("v", [{ ipAddress: "192.0.2.40" }])] },
      table({ "clusters-hc/v": ["192.0.2.60"] }),
      ["192.0.2.60"],
    ],
    [
      "… and nothing when the table holds nothing for it",
      { vmis: [vmi("v", [{ ipAddress: "192.0.2.40" }])] },
      table({}),
      [],
    ],
  ])("%s", (_, src, allocated, want) => {
    expect(addresses(src, allocated)).toEqual(want);
  });
});

describe("vmiAddresses: every interface address inside the VLAN, once, in the order reported", () => {
  test("ipAddress and ipAddresses, prefixes and spaces dropped, other networks and junk skipped", () => {
    const v = vmi("v", [
      { ipAddress: "192.0.2.5/24", ipAddresses: ["192.0.2.5", " 192.0.2.7 ", "fd00::1", "10.0.0.1", "bogus"] },
      {},
      { ipAddresses: ["192.0.2.6"] },
    ]);
    expect(vmiAddresses(v, CIDR).map(formatIPv4)).toEqual(["192.0.2.5", "192.0.2.7", "192.0.2.6"]);
  });

  test("a VMI without status has none", () => {
    expect(
      vmiAddresses(
        { apiVersion: "kubevirt.io/v1", kind: "VirtualMachineInstance", metadata: { namespace: CP, name: "v" } },
        CIDR,
      ),
    ).toEqual([]);
  });

  test.each([
    ["10.0.0.5/24", "10.0.0.5"],
    ["10.0.0.5", "10.0.0.5"],
    ["/24", ""],
  ])("stripPrefix(%j) = %j", (text, want) => {
    expect(stripPrefix(text)).toEqual(want);
  });
});

describe("workerInputs and sameWorkerInputs: a kept result is reused only for the very same inputs", () => {
  const m1 = machine("a", "clusters/np");
  const m2 = machine("b", "np");
  const m3 = machine("c", undefined);
  const v1 = vmi("a", []);
  const index = indexWorkerSources({
    machines: [m1, m2, m3, machine("d", "clusters/np")],
    nodePools: POOLS,
    vmis: [v1],
  });
  const inputs = workerInputs(index, CP, HC.namespace);

  test("the namespace's Machines and VMIs, and the NodePool each distinct annotation names", () => {
    expect(inputs.machines.map((m) => m.metadata.name)).toEqual(["a", "b", "c", "d"]);
    expect(inputs.vmis).toEqual([v1]);
    expect([...inputs.pools].map(([ann, p]) => [ann, p?.metadata.name])).toEqual([
      ["clusters/np", "np"],
      ["np", "np"],
      ["", undefined],
    ]);
    const none = workerInputs(index, "clusters-none", HC.namespace);
    expect([none.machines, none.vmis, none.pools.size]).toEqual([[], [], 0]);
  });

  const pools = (entries: [string, NodePool | undefined][]) => new Map(entries);
  test.each<[string, Parameters<typeof sameWorkerInputs>[1], boolean]>([
    ["the same object", inputs, true],
    [
      "equal lists in new arrays",
      { machines: [...inputs.machines], vmis: [...inputs.vmis], pools: new Map(inputs.pools) },
      true,
    ],
    ["one Machine fewer", { ...inputs, machines: inputs.machines.slice(1) }, false],
    ["another Machine in a place", { ...inputs, machines: [m2, m1, ...inputs.machines.slice(2)] }, false],
    ["another VMI", { ...inputs, vmis: [vmi("a", [])] }, false],
    ["no VMI", { ...inputs, vmis: [] }, false],
    ["one NodePool fewer", { ...inputs, pools: pools([...inputs.pools].slice(1)) }, false],
    [
      "another NodePool for an annotation",
      { ...inputs, pools: pools([...inputs.pools].map(([a, p]) => [a, a === "np" ? POOLS[1] : p])) },
      false,
    ],
    [
      "another annotation naming nothing",
      { ...inputs, pools: pools([...inputs.pools].map(([a, p]) => (a === "" ? ["gone/np", undefined] : [a, p]))) },
      false,
    ],
  ])("%s → %s", (_, other, want) => {
    expect([sameWorkerInputs(inputs, other), sameWorkerInputs(other, inputs)]).toEqual([want, want]);
  });
});
