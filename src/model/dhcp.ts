// docs/reference.md#dhcp: ResolvedInfra + VMIs + the persisted allocation table → the Kea subnet, its
// options and one reservation per allocation. Pure; problems go to the collector.
import type { VirtualMachineInstance } from "../api/external.js";
import { MAC_PATTERN, type InfraClusterAttachment } from "../api/schema.js";
import { parseRange, rangeProblem } from "./apps-ingress.js";
import { buildAllocations, poolUse, type Allocation, type Excluded, type LiveInterface } from "./allocations.js";
import { resolveDhcpOptions } from "./dhcp-options.js";
import { formatIPv4, isHostAddress, maskOf, parseIPv4 } from "./ipv4.js";
import type { ResolvedInfra } from "./infra.js";
import { CUDN } from "./network.js";
import { cmp, type Problems } from "./problems.js";
import type { DhcpModel, Reservation } from "./types.js";
import { stripPrefix } from "./workers.js";

/** What the DHCP model needs besides the Infra: the persisted table and the injected clock. */
export interface DhcpInputs {
  readonly vmis: Iterable<VirtualMachineInstance>;
  /** Attachments of this Infra: their MetalLB ranges are never given to a VMI. */
  readonly attachments: readonly InfraClusterAttachment[];
  /** The allocation table as last persisted (DHCPServer status, or serve's state file). */
  readonly previous: readonly Allocation[];
  /** Milliseconds since the Unix epoch. */
  readonly now: number;
}

/**
 * The Kea subnet and one reservation per allocation (src/model/allocations.ts): every live VMI
 * interface on the VLAN, and MACs whose VMI went away less than a lease time ago, so a
 * restarted or migrated VM (same MAC) comes back on its address.
 */
export function buildDhcp(infra: ResolvedInfra, inputs: DhcpInputs, problems: Problems): DhcpModel | undefined {
  const d = infra.dhcp;
  if (d === undefined) return undefined;
  const dnsServers =
    infra.dns !== undefined ? [infra.dns.serverIP] : infra.upstreams === "resolv.conf" ? [] : [...infra.upstreams];
  if (dnsServers.length === 0) {
    problems
      .for(infra.ref)
      .warning(
        "spec.networkConfig.dnsServers",
        "NoResolverAdvertised",
        'DNS is disabled and dnsServers is "resolv.conf": DHCP clients are given no resolver',
      );
  }

  const input = {
    infra: infra.ref,
    cidr: infra.cidr,
    // Without a pool, the whole CIDR: the allocator keeps to its host addresses.
    pool:
      d.pool === undefined
        ? { first: infra.cidr.first, last: infra.cidr.last }
        : { first: d.pool.start, last: d.pool.end },
    excluded: excludedAddresses(infra, inputs.attachments, problems),
    previous: inputs.previous,
    live: collectInterfaces(infra, inputs.vmis, problems),
    now: inputs.now,
    graceSeconds: d.leaseSeconds,
  };
  const allocations = buildAllocations(input, problems);

  return {
    name: `${infra.ref.namespace}/${infra.ref.name}-dhcp`,
    interface: d.interface,
    serverIP: d.serverIP,
    subnet: infra.cidrText,
    netmask: formatIPv4(maskOf(infra.cidr.prefix)),
    pool: d.pool === undefined ? undefined : { start: formatIPv4(d.pool.start), end: formatIPv4(d.pool.end) },
    routers: infra.gateway,
    dnsServers,
    validLifetimeSeconds: d.leaseSeconds,
    unknownClients: d.unknownClients,
    reservations: allocations.map((a): Reservation => ({
      hwAddress: a.mac,
      ipAddress: a.ip,
      hostname: a.vmi.slice(a.vmi.indexOf("/") + 1),
      vmi: a.vmi,
    })),
    options: resolveDhcpOptions(
      infra.ref,
      "spec.infraComponents.dhcp.options",
      infra.infra.spec.infraComponents?.dhcp?.options ?? [],
      problems,
    ),
    allocations,
    poolUse: poolUse(input, allocations),
  };
}

/** The gateway, the three components and every attachment's MetalLB range. */
function excludedAddresses(
  infra: ResolvedInfra,
  attachments: readonly InfraClusterAttachment[],
  problems: Problems,
): Excluded[] {
  const out: Excluded[] = [];
  const single = (text: string | undefined, what: string) => {
    const addr = text === undefined ? undefined : parseIPv4(text);
    if (addr !== undefined) out.push({ first: addr, last: addr, what });
  };
  single(infra.gateway, "the gateway");
  single(infra.dhcp?.serverIP, "the DHCP server");
  single(infra.dns?.serverIP, "the DNS server");
  single(infra.proxy?.serverIP, "the proxy");
  for (const a of attachments) {
    const text = a.spec.appsIngress?.metallb?.ipAddressPoolRange;
    if (text === undefined || text === "") continue;
    // Only a range apps ingress accepts is held back: a refused one (outside the VLAN, over the
    // pool or a component) is never given to MetalLB, and holding it back anyway would let one
    // attachment's "0.0.0.0/0" leave every VM on the VLAN without an address.
    const problem = rangeProblem(text, infra.infra.spec);
    const range = problem === undefined ? parseRange(text) : undefined;
    if (range === undefined) {
      problems
        .for({ kind: "InfraClusterAttachment", namespace: a.metadata.namespace, name: a.metadata.name })
        .warning(
          "spec.appsIngress.metallb.ipAddressPoolRange",
          "InvalidAddressRange",
          `${problem ?? JSON.stringify(text)}; DHCP does not keep it free of VMIs`,
        );
      continue;
    }
    out.push({ ...range, what: `the MetalLB range of ${a.metadata.namespace}/${a.metadata.name}` });
  }
  return out;
}

function key(v: VirtualMachineInstance): string {
  return `${v.metadata.namespace}/${v.metadata.name}`;
}

/** VMI interfaces attached to the Infra's NAD, oldest VMI first so clashes resolve stably. */
function collectInterfaces(
  infra: ResolvedInfra,
  vmis: Iterable<VirtualMachineInstance>,
  problems: Problems,
): LiveInterface[] {
  const p = problems.for(infra.ref);
  const out: LiveInterface[] = [];
  const seenMac = new Map<string, string>();
  const sorted = [...vmis].sort(
    (a, b) => cmp(a.metadata.creationTimestamp ?? "", b.metadata.creationTimestamp ?? "") || cmp(key(a), key(b)),
  );
  for (const vmi of sorted) {
    for (const net of vmi.spec?.networks ?? []) {
      const ref = net.multus?.networkName;
      if (ref === undefined || !onNetwork(ref, vmi.metadata.namespace, infra)) continue;
      const spec = vmi.spec?.domain?.devices?.interfaces?.find((i) => i.name === net.name);
      const status = vmi.status?.interfaces?.find((i) => i.name === net.name);
      const macText = (spec?.macAddress ?? status?.mac ?? "").toLowerCase().replace(/-/g, ":");
      if (!MAC_PATTERN.test(macText)) {
        p.warning(
          "",
          "VMIWithoutMAC",
          `VMI ${key(vmi)} interface ${net.name ?? "?"} has no MAC address yet; it gets a reservation once KubeVirt reports one`,
        );
        continue;
      }
      const holder = seenMac.get(macText);
      if (holder !== undefined) {
        p.warning(
          "",
          "DuplicateMAC",
          `MAC ${macText} of VMI ${key(vmi)} is already used by VMI ${holder}; only the older one gets an address`,
        );
        continue;
      }
      seenMac.set(macText, key(vmi));
      let reported: number | undefined;
      for (const text of [status?.ipAddress, ...(status?.ipAddresses ?? [])]) {
        const addr = parseIPv4(stripPrefix(text ?? ""));
        if (addr !== undefined && isHostAddress(infra.cidr, addr)) {
          reported = addr;
          break;
        }
      }
      out.push({ vmi: key(vmi), mac: macText, reported });
    }
  }
  return out;
}

/**
 * Multus networkName is "name" (the VMI's namespace) or "namespace/name". A CUDN's NAD has the
 * CUDN's name in every namespace the CUDN selects, so there the name alone says the VMI is on it.
 */
function onNetwork(ref: string, vmiNamespace: string, infra: ResolvedInfra): boolean {
  const slash = ref.indexOf("/");
  const namespace = slash < 0 ? vmiNamespace : ref.slice(0, slash);
  const name = ref.slice(slash + 1);
  if (infra.network.attachment.kind === CUDN) return name === infra.network.attachment.name;
  return namespace === infra.nad.namespace && name === infra.nad.name;
}
