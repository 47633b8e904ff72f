// DHCPServer status figures from Kea's own data. Pure.
//   activeLeases: leases from lease4-get-all in state 0 ("default") that have not expired yet;
//     Kea reclaims expired leases only periodically, so expiry is checked here too.
//   totalLeases:  addresses Kea can hand out under the running configuration: every pool's size
//     plus every reservation outside the pools (VMIs that kept an address from before oooi may be
//     reserved outside the pool, which Kea's pool-only `total-addresses` statistic would miss).
import { parseIPv4 } from "../../model/ipv4.js";

/** The two DHCPServer status counters. */
export interface LeaseCounts {
  readonly activeLeases: number;
  readonly totalLeases: number;
}

interface KeaLease {
  readonly cltt?: unknown;
  readonly "valid-lft"?: unknown;
  readonly state?: unknown;
}

/** Leases in the `arguments.leases` of a lease4-get-all answer that are held right now (`nowSeconds`: Unix time). */
export function countActiveLeases(leases: unknown, nowSeconds: number): number {
  if (!Array.isArray(leases)) return 0;
  let n = 0;
  for (const l of leases as KeaLease[]) {
    const state = typeof l.state === "number" ? l.state : 0;
    const cltt = typeof l.cltt === "number" ? l.cltt : 0;
    const lifetime = typeof l["valid-lft"] === "number" ? l["valid-lft"] : 0;
    if (state === 0 && cltt + lifetime > nowSeconds) n++;
  }
  return n;
}

/** Addresses a Dhcp4 configuration can lease: pool sizes plus reservations outside every pool, over all subnets. */
export function addressCapacity(dhcp4: unknown): number {
  const subnets = (dhcp4 as { subnet4?: unknown } | null)?.subnet4;
  if (!Array.isArray(subnets)) return 0;
  let total = 0;
  for (const s of subnets as { pools?: unknown; reservations?: unknown }[]) {
    const ranges = (Array.isArray(s.pools) ? (s.pools as { pool?: unknown }[]) : [])
      .map((p) => (typeof p.pool === "string" ? poolRange(p.pool) : undefined))
      .filter((r): r is [number, number] => r !== undefined);
    for (const [a, b] of ranges) total += b - a + 1;
    for (const r of Array.isArray(s.reservations) ? (s.reservations as { "ip-address"?: unknown }[]) : []) {
      const ip = typeof r["ip-address"] === "string" ? parseIPv4(r["ip-address"]) : undefined;
      if (ip !== undefined && !ranges.some(([a, b]) => ip >= a && ip <= b)) total++;
    }
  }
  return total;
}

/** Kea pool syntax: "first - last" or "network/prefix". */
function poolRange(text: string): [number, number] | undefined {
  const dash = text.split("-").map((t) => t.trim());
  if (dash.length === 2) {
    const a = parseIPv4(dash[0] ?? "");
    const b = parseIPv4(dash[1] ?? "");
    return a !== undefined && b !== undefined && a <= b ? [a, b] : undefined;
  }
  const [addr, prefixText] = text.trim().split("/");
  const base = parseIPv4(addr ?? "");
  const prefix = Number(prefixText);
  if (base === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  const first = base - (base % size);
  return [first, first + size - 1];
}
