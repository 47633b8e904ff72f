// buildAllocations called directly (src/model/allocations.ts): the persisted table read back
// (garbage, clashes, addresses no longer allowed), the messages each problem carries, and the pool
// counted exactly — the last free address is given, however many addresses VMs hold outside the pool.
import { describe, expect, test } from "vitest";
import type { DHCPAllocation } from "../../src/api/schema.js";
import {
  buildAllocations,
  poolUse,
  type AllocationInput,
  type Excluded,
  type LiveInterface,
} from "../../src/model/allocations.js";
import { parseIPv4 } from "../../src/model/ipv4.js";
import { Problems } from "../../src/model/problems.js";

const ip = (text: string): number => parseIPv4(text) ?? Number.NaN;
const CIDR = { network: ip("192.0.2.0"), first: ip("192.0.2.0"), last: ip("192.0.2.255"), prefix: 24 };
const NOW = Date.parse("2026-01-01T00:00:00Z");
const INFRA = { kind: "Infra" as const, namespace: "ns", name: "vlan" };
const mac = (n: number): string => `02:00:00:00:00:${n.toString(16).padStart(2, "0")}`;
const live = (n: number, reported?: string): LiveInterface => ({
  mac: mac(n),
  vmi: `ns/vm-${String(n)}`,
  reported: reported === undefined ? undefined : ip(reported),
});

function allocate(parts: {
  pool: [string, string];
  previous?: unknown[];
  live?: LiveInterface[];
  excluded?: Excluded[];
}): { table: readonly DHCPAllocation[]; problems: string[]; objects: string[] } {
  const problems = new Problems();
  const input: AllocationInput = {
    infra: INFRA,
    cidr: CIDR,
    pool: { first: ip(parts.pool[0]), last: ip(parts.pool[1]) },
    excluded: parts.excluded ?? [{ first: ip("192.0.2.1"), last: ip("192.0.2.1"), what: "the gateway" }],
    previous: (parts.previous ?? []) as DHCPAllocation[],
    live: parts.live ?? [],
    now: NOW,
    graceSeconds: 3600,
  };
  const table = buildAllocations(input, problems);
  const sorted = problems.sorted();
  return {
    table,
    problems: sorted.map((p) => `${p.object.kind} ${p.object.name} ${p.reason}: ${p.message}`),
    objects: sorted.map((p) => `${p.object.kind} ${p.object.namespace}/${p.object.name}`),
  };
}

const row = (m: number, address: string, extra: Record<string, unknown> = {}) => ({
  mac: mac(m),
  ip: address,
  vmi: `ns/vm-${String(m)}`,
  ...extra,
});

describe("the persisted table, read back", () => {
  test("an entry whose MAC is not one is ignored, and its address is free for a VMI reporting it", () => {
    const r = allocate({
      pool: ["192.0.2.100", "192.0.2.199"],
      previous: [row(1, "192.0.2.150", { mac: "zz" })],
      live: [live(2, "192.0.2.150")],
    });
    expect(r.table).toEqual([row(2, "192.0.2.150")]);
    expect(r.problems).toEqual([]);
  });

  test("a second MAC on an address is dropped, naming the holder; one off the CIDR or on an exclusion, naming why", () => {
    const r = allocate({
      pool: ["192.0.2.100", "192.0.2.199"],
      previous: [row(1, "192.0.2.150"), row(2, "192.0.2.150"), row(3, "198.51.100.7"), row(4, "192.0.2.1")],
      live: [live(1), live(2), live(3), live(4)],
    });
    expect(r.problems).toEqual([
      `Infra vlan AllocationDropped: 192.0.2.1 of ${mac(4)} (VMI ns/vm-4) is no longer allowed (the gateway); the MAC gets a new address`,
      `Infra vlan AllocationDropped: 192.0.2.150 of ${mac(2)} (VMI ns/vm-2) is also held by ${mac(1)}; the MAC gets a new address`,
      `Infra vlan AllocationDropped: 198.51.100.7 of ${mac(3)} (VMI ns/vm-3) is no longer allowed (outside the CIDR); the MAC gets a new address`,
    ]);
    expect(r.table.find((a) => a.mac === mac(1))?.ip).toBe("192.0.2.150");
  });

  test("a release time or VMI that is not a string reads as none: the release is stamped now, the VMI is empty", () => {
    const r = allocate({
      pool: ["192.0.2.100", "192.0.2.199"],
      previous: [row(1, "192.0.2.150", { releasedAt: 12_345, vmi: 7 })],
    });
    expect(r.table).toEqual([{ mac: mac(1), ip: "192.0.2.150", vmi: "", releasedAt: new Date(NOW).toISOString() }]);
  });
});

describe("a reported address another MAC holds", () => {
  test("the reporter is told who holds it and what it gets instead — none when the pool is full", () => {
    const r = allocate({
      pool: ["192.0.2.100", "192.0.2.100"],
      previous: [row(1, "192.0.2.100")],
      live: [live(1), live(2, "192.0.2.100")],
    });
    expect(r.objects).toContain("VirtualMachineInstance ns/vm-2");
    expect(r.problems).toEqual([
      `Infra vlan AddressesExhausted: no free address in the pool 192.0.2.100-192.0.2.100 for VMI ns/vm-2 (${mac(2)}); it gets one when an address is released`,
      `VirtualMachineInstance vm-2 ReportedAddressConflict: reports 192.0.2.100, which is allocated to ${mac(1)}; that allocation stays, ${mac(2)} gets none`,
    ]);
  });
});

describe("the pool is counted exactly: its last free address is given", () => {
  test("however many addresses held or adopted outside it", () => {
    // Four VMs hold addresses outside the pool .100-.103 (adopted from their reports), one holds .100:
    // three addresses are free, and three new VMs get them.
    const outside = ["192.0.2.50", "192.0.2.51", "192.0.2.250", "192.0.2.251"];
    const previous = [...outside.map((a, i) => row(10 + i, a)), row(20, "192.0.2.100")];
    const r = allocate({
      pool: ["192.0.2.100", "192.0.2.103"],
      previous,
      live: [...previous.map((_, i) => live(i < 4 ? 10 + i : 20)), live(1), live(2), live(3)],
    });
    expect(r.problems).toEqual([]);
    expect(
      r.table
        .filter((a) => [mac(1), mac(2), mac(3)].includes(a.mac))
        .map((a) => a.ip)
        .sort(),
    ).toEqual(["192.0.2.101", "192.0.2.102", "192.0.2.103"]);
  });

  test.each([
    ["below the pool", ["192.0.2.50", "192.0.2.51"]],
    ["just above the pool", ["192.0.2.102", "192.0.2.103"]],
  ])("and while new VMs adopt reported addresses %s", (_, reports) => {
    const r = allocate({
      pool: ["192.0.2.100", "192.0.2.101"],
      live: [live(1, reports[0]), live(2, reports[1]), live(3), live(4)],
    });
    expect(r.problems).toEqual([]);
    expect(r.table.map((a) => a.ip).sort()).toEqual([...reports, "192.0.2.100", "192.0.2.101"].sort());
  });
});

describe("poolUse merges exclusions however they are listed", () => {
  test("overlapping exclusions given out of order count once", () => {
    const excluded: Excluded[] = [
      { first: ip("192.0.2.150"), last: ip("192.0.2.160"), what: "b" },
      { first: ip("192.0.2.120"), last: ip("192.0.2.155"), what: "a" },
    ];
    const use = poolUse({ cidr: CIDR, pool: { first: ip("192.0.2.100"), last: ip("192.0.2.199") }, excluded }, []);
    expect(use).toEqual({ addresses: 100 - 41, allocated: 0 });
  });
});
