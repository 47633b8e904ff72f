// Worker source addresses of a hosted cluster: what its KubeVirt workers use on the VLAN.
import { groupBy } from "../util/group.js";
import { NODEPOOL_ANNOTATION, type Machine, type NodePool, type VirtualMachineInstance } from "../api/external.js";
import { cidrContains, parseIPv4, type Cidr } from "./ipv4.js";

export interface WorkerSources {
  readonly machines: Iterable<Machine>;
  readonly nodePools: Iterable<NodePool>;
  readonly vmis: Iterable<VirtualMachineInstance>;
}

/** What DHCP allocated on one Infra's VLAN. */
export interface AllocatedAddresses {
  /** "<namespace>/<VMI name>" → addresses its MACs hold now. */
  readonly byVmi: ReadonlyMap<string, readonly number[]>;
  /** Every allocated address, including those kept for a VM that is restarting. */
  readonly taken: ReadonlySet<number>;
}

/** The sources indexed once per build, so each attachment costs its own Machines, not everyone's. */
export interface WorkerIndex {
  readonly machinesByNamespace: ReadonlyMap<string, readonly Machine[]>;
  /** "<namespace>/<name>" → NodePool. */
  readonly nodePools: ReadonlyMap<string, NodePool>;
  /** "<namespace>/<name>" → VMI. */
  readonly vmis: ReadonlyMap<string, VirtualMachineInstance>;
  readonly vmisByNamespace: ReadonlyMap<string, readonly VirtualMachineInstance[]>;
}

export function indexWorkerSources(src: WorkerSources): WorkerIndex {
  const machinesByNamespace = groupBy(src.machines, (m) => m.metadata.namespace);
  const vmisByNamespace = groupBy(src.vmis, (v) => v.metadata.namespace);
  const key = (o: { metadata: { namespace: string; name: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
  return {
    machinesByNamespace,
    nodePools: new Map(Array.from(src.nodePools, (p) => [key(p), p])),
    vmis: new Map(Array.from(src.vmis, (v) => [key(v), v])),
    vmisByNamespace,
  };
}

/**
 * Addresses inside `cidr` of the hosted cluster's KubeVirt workers: CAPI Machines in the
 * control-plane namespace whose NodePool (annotation hypershift.openshift.io/nodePool,
 * "<namespace>/<name>") belongs to the HostedCluster and is of platform KubeVirt. A Machine
 * that reports no VLAN address yet falls back to its VirtualMachineInstance (same name). A VMI in
 * the control-plane namespace with no Machine (yet) counts too, as the newest original reads every
 * VMI there. Addresses are trimmed: a Machine address with surrounding spaces is still an address.
 *
 * Where oooi runs DHCP it is the address authority (docs/reference.md#dhcp-authority): a Machine whose VMI is observed
 * gets its VMI's allocated addresses and nothing it reports; a Machine with no VMI observed keeps
 * its reported addresses minus any allocated to someone. A guest reporting another's address can
 * thus neither take nor drop the owner's routes.
 */
export function workerAddresses(
  src: WorkerIndex,
  hostedCluster: { readonly namespace: string; readonly name: string },
  controlPlaneNamespace: string,
  cidr: Cidr,
  allocated?: AllocatedAddresses,
  inputs: WorkerInputs = workerInputs(src, controlPlaneNamespace, hostedCluster.namespace),
): number[] {
  const out = new Set<number>();
  const { machines } = inputs;
  for (const m of machines) {
    const pool = inputs.pools.get(m.metadata.annotations?.[NODEPOOL_ANNOTATION] ?? "");
    if (pool?.spec?.clusterName !== hostedCluster.name || pool.spec.platform?.type !== "KubeVirt") continue;
    const vmiKey = `${controlPlaneNamespace}/${m.metadata.name}`;
    if (allocated !== undefined && src.vmis.has(vmiKey)) {
      for (const addr of allocated.byVmi.get(vmiKey) ?? []) out.add(addr);
      continue;
    }
    let found = false;
    for (const a of m.status?.addresses ?? []) {
      const addr = parseIPv4((a.address ?? "").trim());
      if (addr !== undefined && cidrContains(cidr, addr) && allocated?.taken.has(addr) !== true) {
        out.add(addr);
        found = true;
      }
    }
    if (!found) {
      const vmi = src.vmis.get(`${controlPlaneNamespace}/${m.metadata.name}`);
      if (vmi !== undefined) for (const addr of vmiAddresses(vmi, cidr)) out.add(addr);
    }
  }
  const named = inputs.vmis.length === 0 ? NO_NAMES : new Set(machines.map((m) => m.metadata.name));
  for (const vmi of inputs.vmis) {
    if (named.has(vmi.metadata.name)) continue;
    const vmiKey = `${controlPlaneNamespace}/${vmi.metadata.name}`;
    const addrs = allocated === undefined ? vmiAddresses(vmi, cidr) : (allocated.byVmi.get(vmiKey) ?? []);
    for (const addr of addrs) out.add(addr);
  }
  return [...out].sort((a, b) => a - b);
}

const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * Everything workerAddresses reads about one control-plane namespace besides the DHCP table: its
 * Machines, its VMIs, and the NodePool each distinct nodePool annotation names. Equal inputs
 * (sameWorkerInputs) give equal addresses, so a caller may keep the result.
 */
export interface WorkerInputs {
  readonly machines: readonly Machine[];
  readonly vmis: readonly VirtualMachineInstance[];
  /** Annotation value ("" when absent) → the NodePool it names. */
  readonly pools: ReadonlyMap<string, NodePool | undefined>;
}

export function workerInputs(src: WorkerIndex, controlPlaneNamespace: string, defaultNamespace: string): WorkerInputs {
  const machines = src.machinesByNamespace.get(controlPlaneNamespace) ?? [];
  const pools = new Map<string, NodePool | undefined>();
  for (const m of machines) {
    const ann = m.metadata.annotations?.[NODEPOOL_ANNOTATION] ?? "";
    if (!pools.has(ann)) pools.set(ann, nodePoolOf(ann, src.nodePools, defaultNamespace));
  }
  return { machines, vmis: src.vmisByNamespace.get(controlPlaneNamespace) ?? [], pools };
}

/** The same objects in the same order: the Machines, the VMIs and the NodePools they name. */
export function sameWorkerInputs(a: WorkerInputs, b: WorkerInputs): boolean {
  const same = <T>(x: readonly T[], y: readonly T[]): boolean =>
    x === y || (x.length === y.length && x.every((v, i) => v === y[i]));
  if (!same(a.machines, b.machines) || !same(a.vmis, b.vmis) || a.pools.size !== b.pools.size) return false;
  for (const [ann, pool] of a.pools) if (b.pools.get(ann) !== pool || !b.pools.has(ann)) return false;
  return true;
}

/** "<namespace>/<name>", or a bare name in the HostedCluster's namespace; "" names nothing. */
function nodePoolOf(ann: string, pools: ReadonlyMap<string, NodePool>, defaultNamespace: string): NodePool | undefined {
  return pools.get(ann.includes("/") ? ann : `${defaultNamespace}/${ann}`);
}

/** Every interface address a VMI reports inside `cidr`. */
export function vmiAddresses(vmi: VirtualMachineInstance, cidr: Cidr): number[] {
  const out: number[] = [];
  for (const i of vmi.status?.interfaces ?? []) {
    for (const text of [i.ipAddress, ...(i.ipAddresses ?? [])]) {
      const addr = parseIPv4(stripPrefix((text ?? "").trim()));
      if (addr !== undefined && cidrContains(cidr, addr) && !out.includes(addr)) out.push(addr);
    }
  }
  return out;
}

/** KubeVirt sometimes reports "10.0.0.5/24"; the address is what matters. */
export function stripPrefix(text: string): string {
  const slash = text.indexOf("/");
  return slash < 0 ? text : text.slice(0, slash);
}
