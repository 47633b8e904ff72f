// Issues 10 and 18 against a real kea-dhcp4 and busybox udhcpc in namespaces the tests create and
// delete: a VMI waiting to report keeps its address while another reports one; Kea restarted with
// oooi stopped serves every reservation from the config it persisted; `serve --kea-socket`
// against a Kea started with its own lease file keeps that lease file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DHCPAllocation } from "../../src/api/schema.js";
import type { VirtualMachineInstance } from "../../src/api/external.js";
import { bootstrapKeaConfig } from "../../src/dhcp/kea/bootstrap.js";
import { KeaSync, selectDhcpModel, type KeaSyncOptions } from "../../src/dhcp/kea/index.js";
import { build } from "../../src/model/build.js";
import type { DhcpModel } from "../../src/model/types.js";
import { combine, infra, NS, vmi } from "../support/fixtures.js";
import { dhcpClientSkipReason } from "./support/dhcp-client.js";
import { keaSkipReason } from "./support/kea.js";
import { keaCommand } from "./support/kea-socket.js";
import { netnsExists } from "./support/netns.js";
import { createKeaRig, type KeaRig } from "./support/rig.js";

const skipReason = (await keaSkipReason()) ?? (await dhcpClientSkipReason());
const title = (name: string): string => (skipReason === undefined ? name : `${name} (skipped: ${skipReason})`);

const SERVER = "192.0.2.2/24";
const NOW = Date.parse("2026-01-01T00:00:00Z");
const MACS = ["02:00:00:00:0a:01", "02:00:00:00:0b:01", "02:00:00:00:0c:01"] as const;
const vm = (i: number, ip?: string) =>
  vmi(NS, `worker-${String(i)}`, MACS[i] ?? "", ip, { created: `2026-01-01T00:00:0${String(i)}Z` });

/** The real model's DHCP model from these VMIs and the persisted table. */
function model(vmis: readonly VirtualMachineInstance[], previous: readonly DHCPAllocation[] = []): DhcpModel {
  const state = {
    ...combine({ infras: [infra()] }, { vmis: [...vmis] }),
    dhcpAllocations: new Map([[`${NS}/vlan100-dhcp`, previous]]),
    now: NOW,
  };
  const m = selectDhcpModel(build(state).topologies);
  if (m === undefined) throw new Error("fixture Infra has no DHCP model");
  return m;
}

function ipOf(m: DhcpModel, mac: string): string {
  const a = m.allocations.find((x) => x.mac === mac);
  if (a === undefined) throw new Error(`no allocation for ${mac}`);
  return a.ip;
}

describe.skipIf(skipReason !== undefined)(title("allocations on a real kea-dhcp4"), () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function rig(): Promise<KeaRig> {
    const r = await createKeaRig({ serverAddress: SERVER });
    cleanups.push(async () => {
      await r.destroy();
      expect(await netnsExists(r.server.name)).toBe(false);
      expect(await netnsExists(r.client.name)).toBe(false);
    });
    return r;
  }

  function sync(r: KeaRig, extra: Partial<KeaSyncOptions> = {}): KeaSync {
    const s = new KeaSync({
      socketPath: r.work.controlSocket,
      leaseFile: r.work.leaseFile,
      hooksDirectory: r.hooksDirectory,
      ...extra,
    });
    cleanups.push(() => {
      s.close();
    });
    return s;
  }

  it("a VMI waiting to report keeps its address (and its lease) while another VMI reports one", async () => {
    const r = await rig();
    await r.startKea();
    const s = sync(r);
    const first = model([vm(0)]);
    expect((await s.update(first))?.status).toBe("applied");
    const ip = ipOf(first, MACS[0]);
    expect(Number(ip.split(".")[3])).toBeGreaterThanOrEqual(100);
    expect((await r.leases([MACS[0]]))[0]?.ip).toBe(ip);
    // worker-1 reports 192.0.2.7 (adopted); worker-0 still has not reported.
    const next = model([vm(0), vm(1, "192.0.2.7")], first.allocations);
    expect(ipOf(next, MACS[0])).toBe(ip);
    expect((await s.update(next))?.status).toBe("applied");
    // Authoritative Kea would NAK a moved address: the renewal is granted, and a fresh DORA agrees.
    const [renewed] = await r.leases([MACS[0]], { requestIp: ip });
    expect(renewed?.ip).toBe(ip);
    const [fresh, other] = await r.leases([MACS[0], MACS[1]]);
    expect([fresh?.ip, other?.ip]).toEqual([ip, "192.0.2.7"]);
  });

  it("Kea restarted while oooi is stopped serves every reservation from its persisted config", async () => {
    const r = await rig();
    await r.startKea();
    const s = sync(r);
    const m = model([vm(0), vm(1), vm(2)]);
    const applied = await s.update(m);
    expect(applied).toMatchObject({ status: "applied", persisted: true });
    s.close();
    await r.stopKea();
    // config-write replaced the seed (subnet4: []) in the file Kea starts from.
    const onDisk = JSON.parse(readFileSync(r.work.configFile, "utf8")) as { Dhcp4: { subnet4: unknown[] } };
    expect(onDisk.Dhcp4.subnet4).toHaveLength(1);
    await r.startKea();
    const leases = await r.leases([...MACS]);
    expect(leases.map((l) => l.ip)).toEqual(MACS.map((mac) => ipOf(m, mac)));
  });

  it("serve --kea-socket keeps the lease file of a Kea started with its own; leases as before", async () => {
    const r = await rig();
    const own = join(r.work.dir, "own-leases4.csv");
    r.work.writeConfig(
      bootstrapKeaConfig({
        controlSocket: r.work.controlSocket,
        interfaces: ["net1"],
        leaseFile: own,
        hooksDirectory: r.hooksDirectory,
      }),
    );
    await r.startKea();
    // No leaseFile: as `serve --kea-socket` without --kea-lease-file.
    const s = new KeaSync({ socketPath: r.work.controlSocket, hooksDirectory: r.hooksDirectory });
    cleanups.push(() => {
      s.close();
    });
    const m = model([vm(0)]);
    expect((await s.update(m))?.status).toBe("applied");
    const got = await keaCommand(r.work.controlSocket, "config-get");
    expect((got.arguments?.["Dhcp4"] as { "lease-database": { name: string } })["lease-database"].name).toBe(own);
    expect((await r.leases([MACS[0]]))[0]?.ip).toBe(ipOf(m, MACS[0]));
    expect(readFileSync(own, "utf8")).toContain(MACS[0]);
  });
});
