// The durable address table of one DHCPServer: previous allocations + the live VMI interfaces
// + now → the new allocation table and problems. Pure (no clock, no I/O); never throws.
//
// Rules (docs/reference.md#dhcp-allocations, #dhcp-grace): a MAC that holds an address keeps it while a VMI with that MAC exists and
// for `graceSeconds` after the last one went away (a VM restart or live migration makes a new VMI
// with the same MAC). A new MAC adopts the address its VMI reports when that address is free and
// allowed, else gets one from the pool by a probe that starts at a hash of the MAC and steps over
// taken addresses. It depends only on what is already allocated, never on other VMIs' reports.
import type { DHCPAllocation } from "../api/schema.js";
import { MAC_PATTERN } from "../api/schema.js";
import { formatIPv4, isHostAddress, parseIPv4, type Cidr } from "./ipv4.js";
import { cmp, type Problems } from "./problems.js";
import type { ObjectRef, PoolUse } from "./types.js";

export type Allocation = DHCPAllocation;

/** One VMI interface on the Infra's network, oldest VMI first. */
export interface LiveInterface {
  readonly mac: string;
  /** "<namespace>/<name>" of the VMI. */
  readonly vmi: string;
  /** The address the VMI reports on this network, if any. */
  readonly reported: number | undefined;
}

/** An inclusive address interval no VMI may be given (gateway, components, MetalLB ranges). */
export interface Excluded {
  readonly first: number;
  readonly last: number;
  /** What it is, for messages ("gateway", "MetalLB range of clusters/alpha"). */
  readonly what: string;
}

export interface AllocationInput {
  readonly infra: ObjectRef;
  readonly cidr: Cidr;
  /** Where new addresses come from; the CIDR's host addresses when the Infra sets no pool. */
  readonly pool: { readonly first: number; readonly last: number };
  readonly excluded: readonly Excluded[];
  /** The table as persisted (unchecked: it may come from an edited status or file). */
  readonly previous: readonly Allocation[];
  readonly live: readonly LiveInterface[];
  /** Milliseconds since the Unix epoch, injected by the caller. */
  readonly now: number;
  readonly graceSeconds: number;
}

/** Sorted by MAC; live ones have no releasedAt. */
export type AllocationTable = readonly Allocation[];

interface Entry {
  ip: number;
  vmi: string;
  releasedAt: string | undefined;
}

export function buildAllocations(input: AllocationInput, problems: Problems): AllocationTable {
  const { infra, cidr } = input;
  const isExcluded = (addr: number) => input.excluded.find((x) => addr >= x.first && addr <= x.last);
  const usable = (addr: number) => isHostAddress(cidr, addr) && isExcluded(addr) === undefined;

  // The persisted table, checked: an entry on an address that is no longer allowed (the Infra's
  // CIDR or a component moved onto it) cannot be served and is dropped with a warning.
  const byMac = new Map<string, Entry>();
  const owner = new Map<number, string>();
  for (const a of [...input.previous].sort((x, y) => cmp(x.mac, y.mac))) {
    const mac = typeof a.mac === "string" ? a.mac.toLowerCase() : "";
    const ip = typeof a.ip === "string" ? parseIPv4(a.ip) : undefined;
    if (!MAC_PATTERN.test(mac) || ip === undefined || byMac.has(mac)) continue;
    if (!usable(ip) || owner.has(ip)) {
      problems
        .for(infra)
        .warning(
          "",
          "AllocationDropped",
          `${a.ip} of ${mac} (VMI ${a.vmi}) is ${owner.has(ip) ? `also held by ${owner.get(ip) ?? ""}` : `no longer allowed (${isExcluded(ip)?.what ?? "outside the CIDR"})`}; the MAC gets a new address`,
        );
      continue;
    }
    const releasedAt = typeof a.releasedAt === "string" ? a.releasedAt : undefined;
    byMac.set(mac, { ip, vmi: typeof a.vmi === "string" ? a.vmi : "", releasedAt });
    owner.set(ip, mac);
  }

  const liveMacs = new Set<string>();
  const fresh: LiveInterface[] = [];
  for (const l of input.live) {
    if (liveMacs.has(l.mac)) continue;
    liveMacs.add(l.mac);
    const held = byMac.get(l.mac);
    if (held !== undefined) {
      held.vmi = l.vmi;
      held.releasedAt = undefined;
    } else {
      fresh.push(l);
    }
  }

  // Gone VMIs: stamp the release once, forget the address after the grace period.
  const nowText = new Date(Number.isFinite(input.now) ? input.now : 0).toISOString();
  for (const [mac, e] of byMac) {
    if (liveMacs.has(mac)) continue;
    if (e.releasedAt === undefined) {
      e.releasedAt = nowText;
      continue;
    }
    const since = Date.parse(e.releasedAt);
    if (!Number.isFinite(since) || input.now - since >= input.graceSeconds * 1000) {
      byMac.delete(mac);
      owner.delete(e.ip);
    }
  }

  const probe = new PoolProbe(input.pool, owner, input.excluded, cidr);
  for (const l of fresh) {
    const r = l.reported;
    let ip: number | undefined;
    if (r !== undefined && usable(r) && !owner.has(r)) ip = r;
    else ip = probe.next(l.mac);
    if (r !== undefined && owner.has(r)) {
      problems
        .for({ kind: "VirtualMachineInstance", namespace: namespaceOf(l.vmi), name: nameOf(l.vmi) })
        .warning(
          "status.interfaces",
          "ReportedAddressConflict",
          `reports ${formatIPv4(r)}, which is allocated to ${owner.get(r) ?? ""}; that allocation stays, ${l.mac} gets ${ip === undefined ? "none" : formatIPv4(ip)}`,
        );
    }
    if (ip === undefined) {
      problems
        .for(infra)
        .pending(
          "spec.infraComponents.dhcp.rangeStart",
          "AddressesExhausted",
          `no free address in the pool ${formatIPv4(input.pool.first)}-${formatIPv4(input.pool.last)} for VMI ${l.vmi} (${l.mac}); it gets one when an address is released`,
        );
      continue;
    }
    byMac.set(l.mac, { ip, vmi: l.vmi, releasedAt: undefined });
    owner.set(ip, l.mac);
    probe.taken(ip);
  }

  return [...byMac.entries()]
    .sort(([a], [b]) => cmp(a, b))
    .map(([mac, e]) => ({
      mac,
      ip: formatIPv4(e.ip),
      vmi: e.vmi,
      ...(e.releasedAt === undefined ? {} : { releasedAt: e.releasedAt }),
    }));
}

/** The pool's use by `table`, counted over the same addresses PoolProbe gives out. */
export function poolUse(input: Pick<AllocationInput, "cidr" | "pool" | "excluded">, table: AllocationTable): PoolUse {
  const { first, last } = hostPool(input.pool, input.cidr);
  let blocked = 0;
  for (const x of mergeIntervals(input.excluded))
    blocked += Math.max(0, Math.min(x.last, last) - Math.max(x.first, first) + 1);
  const allocated = table.filter((a) => {
    const ip = parseIPv4(a.ip);
    return ip !== undefined && ip >= first && ip <= last && !input.excluded.some((x) => ip >= x.first && ip <= x.last);
  }).length;
  return { addresses: Math.max(0, last - first + 1 - blocked), allocated };
}

/** The pool clipped to the CIDR's host addresses. */
function hostPool(pool: { first: number; last: number }, cidr: Cidr): { first: number; last: number } {
  return {
    first: Math.max(pool.first, cidr.first + (cidr.prefix >= 31 ? 0 : 1)),
    last: Math.min(pool.last, cidr.last - (cidr.prefix >= 31 ? 0 : 1)),
  };
}

/**
 * Free pool addresses without scanning the pool: a linear probe from hash(MAC) over the pool,
 * skipping taken and excluded addresses. The free count is kept so a full pool costs nothing.
 */
class PoolProbe {
  readonly #first: number;
  readonly #size: number;
  readonly #owner: ReadonlyMap<number, string>;
  readonly #excluded: readonly Excluded[];
  #free: number;

  constructor(
    pool: { first: number; last: number },
    owner: ReadonlyMap<number, string>,
    excluded: readonly Excluded[],
    cidr: Cidr,
  ) {
    const { first, last } = hostPool(pool, cidr);
    this.#first = first;
    this.#size = Math.max(0, last - first + 1);
    this.#owner = owner;
    this.#excluded = excluded;
    let blocked = 0;
    for (const x of mergeIntervals(excluded))
      blocked += Math.max(0, Math.min(x.last, last) - Math.max(x.first, first) + 1);
    for (const ip of owner.keys()) if (ip >= first && ip <= last && !this.#isExcluded(ip)) blocked++;
    this.#free = this.#size - blocked;
  }

  /** The MAC's address, or undefined when the pool is full. */
  next(mac: string): number | undefined {
    if (this.#free <= 0) return undefined;
    const start = fnv1a(mac) % this.#size;
    for (let i = 0; i < this.#size; i++) {
      const addr = this.#first + ((start + i) % this.#size);
      if (!this.#owner.has(addr) && !this.#isExcluded(addr)) return addr;
    }
    return undefined;
  }

  taken(addr: number): void {
    if (addr >= this.#first && addr < this.#first + this.#size) this.#free--;
  }

  #isExcluded(addr: number): boolean {
    return this.#excluded.some((x) => addr >= x.first && addr <= x.last);
  }
}

function mergeIntervals(list: readonly Excluded[]): { first: number; last: number }[] {
  const sorted = [...list].sort((a, b) => a.first - b.first);
  const out: { first: number; last: number }[] = [];
  for (const x of sorted) {
    const top = out.at(-1);
    if (top !== undefined && x.first <= top.last + 1) top.last = Math.max(top.last, x.last);
    else out.push({ first: x.first, last: x.last });
  }
  return out;
}

/**
 * Whether two tables say the same (the persisted table fed back is a new array each time; this
 * costs the table's own size, not the cluster's). No table reads as an empty one, as build() does:
 * the first rendering after start has none, and feeds back an empty table for every DHCPServer.
 */
export function sameAllocationTable(
  a: readonly DHCPAllocation[] | undefined,
  b: readonly DHCPAllocation[] | undefined,
): boolean {
  if (a === b) return true;
  const [x, y] = [a ?? [], b ?? []];
  if (x.length !== y.length) return false;
  return x.every((p, i) => {
    const q = y[i];
    return q !== undefined && p.mac === q.mac && p.ip === q.ip && p.vmi === q.vmi && p.releasedAt === q.releasedAt;
  });
}

/** FNV-1a, 32 bit: a stable, well-spread start for the probe (no crypto needed, no node: import). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A VMI key is "<namespace>/<name>". */
function namespaceOf(key: string): string {
  return key.slice(0, key.indexOf("/"));
}

function nameOf(key: string): string {
  return key.slice(key.indexOf("/") + 1);
}
