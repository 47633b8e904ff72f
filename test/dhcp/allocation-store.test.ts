// serve's persisted allocation tables (--out/dhcp-allocations.json): written, read back, refused
// when unusable, and kept for a DHCPServer missing from one rendering.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AllocationFileError, AllocationStore, readAllocationFile } from "../../src/pipeline/allocation-store.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { combine, infra, NS, vmi } from "../support/fixtures.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "oooi-alloc-"));
  dirs.push(d);
  return d;
}

describe("allocation store", () => {
  it("round-trips through the file and keeps a table its DHCPServer briefly lacks", () => {
    const store = new AllocationStore();
    const now = Date.parse("2026-01-01T00:00:00Z");
    const withVm = combine({ infras: [infra()], vmis: [vmi(NS, "w", "02:00:00:00:00:01")] });
    store.update(renderAll(withVm, { dhcpAllocations: store.tables, now }));
    const table = store.tables.get(`${NS}/vlan100-dhcp`);
    expect(table).toHaveLength(1);
    const path = join(tmp(), "dhcp-allocations.json");
    writeFileSync(path, store.encode());
    // Compared as plain maps: the store keeps its tables in a persistent map (util/overlay-map.ts).
    expect(readAllocationFile(path)).toEqual(new Map(store.tables));
    // The Infra is gone from one rendering: its table is not forgotten.
    store.update(renderAll(combine({}), { dhcpAllocations: store.tables, now }));
    expect(store.tables.get(`${NS}/vlan100-dhcp`)).toEqual(table);
  });

  it("a missing file is an empty start; a corrupt one is refused with its path", () => {
    const dir = tmp();
    expect(readAllocationFile(join(dir, "absent.json")).size).toBe(0);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{not json");
    expect(() => readAllocationFile(bad)).toThrow(AllocationFileError);
    expect(() => readAllocationFile(bad)).toThrow(bad);
  });
});
