// The DHCP model's small pure pieces, one table each: MetalLB's range forms (parseRange), the
// table comparison that decides whether a DHCPServer's status must be written
// (sameAllocationTable), and the probe's start (fnv1a, checked against FNV-1a's published vectors).
import { describe, expect, test } from "vitest";
import type { DHCPAllocation } from "../../src/api/schema.js";
import { fnv1a, sameAllocationTable } from "../../src/model/allocations.js";
import { parseRange } from "../../src/model/apps-ingress.js";
import { formatIPv4 } from "../../src/model/ipv4.js";

describe('parseRange: MetalLB\'s "first-last" and CIDR forms', () => {
  test.each<[string, string | undefined]>([
    ["192.0.2.10-192.0.2.20", "192.0.2.10-192.0.2.20"],
    [" 192.0.2.10 - 192.0.2.20 ", "192.0.2.10-192.0.2.20"],
    ["192.0.2.10-192.0.2.10", "192.0.2.10-192.0.2.10"],
    ["192.0.2.20-192.0.2.10", undefined],
    ["192.0.2.10-", undefined],
    ["-192.0.2.10", undefined],
    ["192.0.2.10-192.0.2.20-192.0.2.30", undefined],
    ["192.0.2.0/24", "192.0.2.0-192.0.2.255"],
    ["192.0.2.5/30", "192.0.2.4-192.0.2.7"],
    [" 192.0.2.5 / 30 ", "192.0.2.4-192.0.2.7"],
    ["192.0.2.5/32", "192.0.2.5-192.0.2.5"],
    ["192.0.2.5", "192.0.2.5-192.0.2.5"],
    ["0.0.0.0/0", "0.0.0.0-255.255.255.255"],
    ["192.0.2.5/33", undefined],
    ["192.0.2.5/-1", undefined],
    ["192.0.2.5/1.5", undefined],
    ["192.0.2.5/", undefined],
    ["192.0.2/24", undefined],
    ["pool-a", undefined],
  ])("%j → %s", (text, want) => {
    const r = parseRange(text);
    expect(r === undefined ? undefined : `${formatIPv4(r.first)}-${formatIPv4(r.last)}`).toEqual(want);
  });
});

describe("sameAllocationTable: equal when every entry says the same, in the same order", () => {
  const row = (mac: string, ip: string, releasedAt?: string): DHCPAllocation => ({
    mac,
    ip,
    vmi: "ns/vm",
    ...(releasedAt === undefined ? {} : { releasedAt }),
  });
  const t = [
    row("02:00:00:00:00:01", "192.0.2.10"),
    row("02:00:00:00:00:02", "192.0.2.11", "2026-01-01T00:00:00.000Z"),
  ];
  test.each<[string, readonly DHCPAllocation[] | undefined, readonly DHCPAllocation[] | undefined, boolean]>([
    ["the same array", t, t, true],
    ["a copy", t, t.map((r) => ({ ...r })), true],
    ["no table and an empty one", undefined, [], true],
    ["no table on both sides", undefined, undefined, true],
    ["one entry fewer", t, t.slice(1), false],
    ["no table and one entry", undefined, t.slice(0, 1), false],
    ["another MAC", t, [{ ...t[0], mac: "02:00:00:00:00:09" } as DHCPAllocation, t[1] as DHCPAllocation], false],
    ["another address", t, [{ ...t[0], ip: "192.0.2.99" } as DHCPAllocation, t[1] as DHCPAllocation], false],
    ["another VMI", t, [t[0] as DHCPAllocation, { ...t[1], vmi: "ns/other" } as DHCPAllocation], false],
    [
      "released now",
      t,
      [row("02:00:00:00:00:01", "192.0.2.10", "2026-01-02T00:00:00.000Z"), t[1] as DHCPAllocation],
      false,
    ],
    ["the order", t, [...t].reverse(), false],
  ])("%s → %s", (_, a, b, want) => {
    expect([sameAllocationTable(a, b), sameAllocationTable(b, a)]).toEqual([want, want]);
  });
});

describe("fnv1a: FNV-1a, 32 bit", () => {
  // The test vectors published with the FNV specification (draft-eastlake-fnv).
  test.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["foobar", 0xbf9cf968],
  ])("%j → %i", (text, want) => {
    expect(fnv1a(text)).toBe(want);
  });
});
