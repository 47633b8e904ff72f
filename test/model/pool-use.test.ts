// How full an Infra's DHCP pool is (DhcpModel.poolUse → oooi_dhcp_pool_* metrics): counted over the
// addresses the allocator may give — the pool's host addresses minus every exclusion — so a pool
// the allocator calls exhausted reads as 100 %.
import { describe, expect, it } from "vitest";
import { poolUse } from "../../src/model/allocations.js";
import { parseIPv4 } from "../../src/model/ipv4.js";
import type { DHCPAllocation } from "../../src/api/schema.js";

const ip = (text: string): number => parseIPv4(text) ?? Number.NaN;
const CIDR = { network: ip("192.0.2.0"), first: ip("192.0.2.0"), last: ip("192.0.2.255"), prefix: 24 };
const at = (addr: string): DHCPAllocation => ({ mac: "02:00:00:00:00:01", ip: addr, vmi: "ns/vm" });

describe("DHCP pool use", () => {
  it.each([
    {
      name: "a pool of ten with two allocations",
      pool: ["192.0.2.10", "192.0.2.19"],
      excluded: [],
      table: ["192.0.2.10", "192.0.2.11"],
      use: { addresses: 10, allocated: 2 },
    },
    {
      name: "exclusions inside the pool (overlapping ones once) are not addresses",
      pool: ["192.0.2.10", "192.0.2.19"],
      excluded: [
        ["192.0.2.10", "192.0.2.12"],
        ["192.0.2.12", "192.0.2.13"],
        ["192.0.2.50", "192.0.2.60"],
      ],
      table: [],
      use: { addresses: 6, allocated: 0 },
    },
    {
      name: "allocations outside the pool or on an exclusion are not counted",
      pool: ["192.0.2.10", "192.0.2.19"],
      excluded: [["192.0.2.15", "192.0.2.15"]],
      table: ["192.0.2.9", "192.0.2.15", "192.0.2.16", "not-an-address"],
      use: { addresses: 9, allocated: 1 },
    },
    {
      name: "the whole CIDR as pool: network and broadcast are not host addresses",
      pool: ["192.0.2.0", "192.0.2.255"],
      excluded: [["192.0.2.1", "192.0.2.1"]],
      table: [],
      use: { addresses: 253, allocated: 0 },
    },
    {
      name: "a full pool reads as all allocated",
      pool: ["192.0.2.10", "192.0.2.10"],
      excluded: [],
      table: ["192.0.2.10"],
      use: { addresses: 1, allocated: 1 },
    },
  ])("$name", ({ pool, excluded, table, use }) => {
    expect(
      poolUse(
        {
          cidr: CIDR,
          pool: { first: ip(pool[0] ?? ""), last: ip(pool[1] ?? "") },
          excluded: excluded.map(([first, last]) => ({ first: ip(first ?? ""), last: ip(last ?? ""), what: "x" })),
        },
        table.map(at),
      ),
    ).toEqual(use);
  });
});
