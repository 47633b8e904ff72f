// REFERENCE §4: the Kea subnet, its options, and one stable reservation per VMI interface on the VLAN.
import { createHash } from "node:crypto";
import type { VirtualMachineInstance } from "../api/external.js";
import { MAC_PATTERN } from "../api/schema.js";
import { formatIPv4, isHostAddress, maskOf, parseIPv4 } from "./ipv4.js";
import type { ResolvedInfra } from "./infra.js";
import { cmp, type Problems } from "./problems.js";
import type { DhcpModel, Reservation } from "./types.js";
import { stripPrefix } from "./workers.js";

interface Candidate {
  readonly vmi: VirtualMachineInstance;
  readonly mac: string;
  /** The address the VMI already holds on this network, if any. */
  readonly current: number | undefined;
}

/**
 * Reservations keep an address for as long as its VMI exists: the address a VMI already holds
 * is reserved for it; a VMI without one gets a deterministic free address (from a hash of its
 * MAC) outside the dynamic pool and away from the gateway and the component addresses. Live
 * migration keeps the MAC, hence the reservation.
 */
export function buildDhcp(infra: ResolvedInfra, vmis: readonly VirtualMachineInstance[], problems: Problems): DhcpModel | undefined {
  const d = infra.dhcp;
  if (d === undefined) return undefined;
  const dnsServers = infra.dns !== undefined ? [infra.dns.serverIP] : infra.upstreams === "resolv.conf" ? [] : [...infra.upstreams];
  if (dnsServers.length === 0) {
    problems.warning(infra.ref, "spec.networkConfig.dnsServers", "NoResolverAdvertised",
      "DNS is disabled and dnsServers is \"resolv.conf\": DHCP clients are given no resolver");
  }

  const reserved = new Set<number>();
  for (const text of [infra.gateway, d.serverIP, infra.dns?.serverIP, infra.proxy?.serverIP]) {
    const addr = text === undefined ? undefined : parseIPv4(text);
    if (addr !== undefined) reserved.add(addr);
  }
  const inPool = (addr: number) => d.pool !== undefined && addr >= d.pool.start && addr <= d.pool.end;

  const candidates = collectCandidates(infra, vmis, problems);
  const seenMac = new Set<string>();
  const taken = new Set<number>(reserved);
  const out: Reservation[] = [];
  const later: Candidate[] = [];

  // First every VMI that already holds a usable address keeps it, even inside the pool (oldest
  // first on a clash): Kea then must check reservations before handing out pool addresses.
  for (const c of candidates) {
    if (seenMac.has(c.mac)) {
      problems.warning(infra.ref, "", "DuplicateMAC", `MAC ${c.mac} of VMI ${key(c.vmi)} is used by another VMI; only the first gets a reservation`);
      continue;
    }
    seenMac.add(c.mac);
    if (c.current !== undefined && !taken.has(c.current)) {
      taken.add(c.current);
      out.push(reservation(c, c.current));
    } else {
      later.push(c);
    }
  }

  // Then the others get a deterministic free address outside the pool.
  const free: number[] = [];
  for (let a = infra.cidr.first; a <= infra.cidr.last; a++) {
    if (isHostAddress(infra.cidr, a) && !taken.has(a) && !inPool(a)) free.push(a);
  }
  const freeSet = new Set(free);
  for (const c of later) {
    const addr = pick(c.mac, free, freeSet);
    if (addr === undefined) {
      problems.warning(infra.ref, "spec.networkConfig.cidr", "AddressesExhausted", `no free address outside the DHCP pool for VMI ${key(c.vmi)} (${c.mac})`);
      continue;
    }
    freeSet.delete(addr);
    out.push(reservation(c, addr));
  }

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
    reservations: out.sort((x, y) => cmp(x.hwAddress, y.hwAddress)),
  };
}

function reservation(c: Candidate, addr: number): Reservation {
  return { hwAddress: c.mac, ipAddress: formatIPv4(addr), hostname: c.vmi.metadata.name, vmi: key(c.vmi) };
}

function key(v: VirtualMachineInstance): string {
  return `${v.metadata.namespace}/${v.metadata.name}`;
}

/** Hash of the MAC picks the starting point; the next free address after it is taken. */
function pick(mac: string, free: readonly number[], freeSet: ReadonlySet<number>): number | undefined {
  if (freeSet.size === 0) return undefined;
  const start = createHash("sha256").update(mac).digest().readUInt32BE(0) % free.length;
  for (let i = 0; i < free.length; i++) {
    const addr = free[(start + i) % free.length];
    if (addr !== undefined && freeSet.has(addr)) return addr;
  }
  return undefined;
}

/** VMI interfaces attached to the Infra's NAD, oldest VMI first so clashes resolve stably. */
function collectCandidates(infra: ResolvedInfra, vmis: readonly VirtualMachineInstance[], problems: Problems): Candidate[] {
  const out: Candidate[] = [];
  const sorted = [...vmis].sort((a, b) =>
    cmp(a.metadata.creationTimestamp ?? "", b.metadata.creationTimestamp ?? "") || cmp(key(a), key(b)));
  for (const vmi of sorted) {
    for (const net of vmi.spec?.networks ?? []) {
      const ref = net.multus?.networkName;
      if (ref === undefined || !sameNad(ref, vmi.metadata.namespace, infra.nad)) continue;
      const spec = vmi.spec?.domain?.devices?.interfaces?.find((i) => i.name === net.name);
      const status = vmi.status?.interfaces?.find((i) => i.name === net.name);
      const macText = (spec?.macAddress ?? status?.mac ?? "").toLowerCase().replace(/-/g, ":");
      if (!MAC_PATTERN.test(macText)) {
        problems.warning(infra.ref, "", "VMIWithoutMAC", `VMI ${key(vmi)} interface ${net.name ?? "?"} has no MAC address yet; it gets a reservation once KubeVirt reports one`);
        continue;
      }
      let current: number | undefined;
      for (const text of [status?.ipAddress, ...(status?.ipAddresses ?? [])]) {
        const addr = parseIPv4(stripPrefix(text ?? ""));
        if (addr !== undefined && isHostAddress(infra.cidr, addr)) {
          current = addr;
          break;
        }
      }
      out.push({ vmi, mac: macText, current });
    }
  }
  return out;
}

/** Multus networkName is "name" (the VMI's namespace) or "namespace/name". */
function sameNad(ref: string, vmiNamespace: string, nad: { name: string; namespace: string }): boolean {
  const slash = ref.indexOf("/");
  const namespace = slash < 0 ? vmiNamespace : ref.slice(0, slash);
  const name = slash < 0 ? ref : ref.slice(slash + 1);
  return namespace === nad.namespace && name === nad.name;
}
