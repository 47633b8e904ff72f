// Issue 5 "Done when", through the library entry point `oooi serve --kea-socket` uses: ClusterState
// → the real model → renderKea → KeaApplier → a real kea-dhcp4 in a test namespace, checked by
// real DHCP clients (busybox udhcpc) carrying VM MACs in another namespace.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { KeaSync, selectDhcpModel, type ApplierEvent, type KeaSyncOptions } from "../../src/dhcp/kea/index.js";
import { build } from "../../src/model/build.js";
import type { DhcpModel } from "../../src/model/types.js";
import type { Infra } from "../../src/api/schema.js";
import type { VirtualMachineInstance } from "../../src/api/external.js";
import { combine, infra, NS, vmi } from "../support/fixtures.js";
import { dhcpClientSkipReason } from "./support/dhcp-client.js";
import { keaSkipReason } from "./support/kea.js";
import { keaCommand } from "./support/kea-socket.js";
import { netnsExists } from "./support/netns.js";
import { createKeaRig, type KeaRig } from "./support/rig.js";

const skipReason = (await keaSkipReason()) ?? (await dhcpClientSkipReason());
const title = (name: string): string => (skipReason === undefined ? name : `${name} (skipped: ${skipReason})`);

const MAC_A = "02:00:00:00:0a:01";
const MAC_B = "02:00:00:00:0b:01";
const MAC_C = "02:00:00:00:0c:01";
const UNKNOWN = "02:00:00:00:ee:01";
/** Infra fixture: 192.0.2.0/24, gateway .1, DHCP .2, DNS .3, proxy .4, pool .100–.199. */
const SERVER = "192.0.2.2/24";

const vmA = vmi(NS, "worker-a", MAC_A, "192.0.2.50", { created: "2024-01-01T00:00:00Z" });
const vmB = vmi(NS, "worker-b", MAC_B, undefined, { created: "2024-01-01T00:01:00Z" });
const vmC = vmi(NS, "worker-c", MAC_C, undefined, { created: "2024-01-01T00:02:00Z" });

type InfraSpec = Parameters<typeof infra>[1];

/** The DHCP model the real model builds for one Infra and these VMIs. */
function model(vmis: readonly VirtualMachineInstance[], spec: InfraSpec = {}): DhcpModel {
  const infras: Infra[] = [infra("vlan100", spec)];
  const m = selectDhcpModel(build(combine({ infras }, { vmis: [...vmis] })).topologies);
  if (m === undefined) throw new Error("fixture Infra has no DHCP model");
  return m;
}

function reserved(m: DhcpModel, mac: string): string {
  const r = m.reservations.find((x) => x.hwAddress === mac);
  if (r === undefined) throw new Error(`no reservation for ${mac}`);
  return r.ipAddress;
}

function lastOctet(ip: string | undefined): number {
  return Number(ip?.split(".")[3]);
}

describe.skipIf(skipReason !== undefined)(title("KeaSync against a real kea-dhcp4"), () => {
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

  async function runningReservations(r: KeaRig): Promise<string[][]> {
    const got = await keaCommand(r.work.controlSocket, "config-get");
    const subnets = (
      got.arguments?.["Dhcp4"] as { subnet4: { reservations: { "hw-address": string; "ip-address": string }[] }[] }
    ).subnet4;
    return subnets.flatMap((s) => s.reservations.map((x) => [x["hw-address"], x["ip-address"]]));
  }

  it("a VMI with an address gets exactly it; one without gets a free address, the same on every renewal", async () => {
    const r = await rig();
    await r.startKea();
    const s = sync(r);
    const m = model([vmA, vmB]);
    const applied = await s.update(m);
    expect(applied).toMatchObject({ status: "applied", persisted: true });

    const [a, b] = await r.leases([MAC_A, MAC_B]);
    expect(a, a?.log).toMatchObject({
      bound: true,
      ip: "192.0.2.50",
      hostname: "worker-a",
      router: "192.0.2.1",
      netmask: "255.255.255.0",
    });
    expect(a?.dns).toEqual(["192.0.2.3"]);
    const bIp = reserved(m, MAC_B);
    expect(b, b?.log).toMatchObject({ bound: true, ip: bIp, hostname: "worker-b" });
    // Free = inside the pool (issue 10; this used to expect outside it), not the gateway or a component address.
    expect(lastOctet(bIp) >= 100 && lastOctet(bIp) <= 199).toBe(true);
    expect(["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.50"]).not.toContain(bIp);

    // Renewal asking for the held address, then a fresh DISCOVER: the same address each time.
    const [renewed] = await r.leases([MAC_B], { requestIp: bIp });
    const [again] = await r.leases([MAC_B]);
    expect(renewed?.ip, renewed?.log).toBe(bIp);
    expect(again?.ip, again?.log).toBe(bIp);

    // KubeVirt now reports the leased address on the VMI: the model keeps the same reservation,
    // so the configuration is identical and nothing is sent to Kea.
    const reported = model([vmA, vmi(NS, "worker-b", MAC_B, bIp, { created: "2024-01-01T00:01:00Z" })]);
    expect(reserved(reported, MAC_B)).toBe(bIp);
    expect(await s.update(reported)).toEqual({ status: "unchanged", hash: (applied as { hash: string }).hash });
  });

  it("a VMI added to the state gets its lease without restarting Kea; bursts coalesce to the newest", async () => {
    const r = await rig();
    const kea = await r.startKea();
    // A wrong --dhcp-interface cannot cut Kea off: the interfaces it was started with are kept.
    const s = sync(r, { interface: "eth9" });
    expect(await s.update(model([vmA]))).toMatchObject({ status: "applied" });
    const running = await keaCommand(r.work.controlSocket, "config-get");
    expect(
      (running.arguments?.["Dhcp4"] as { "interfaces-config": { interfaces: string[] } })["interfaces-config"]
        .interfaces,
    ).toEqual(["net1"]);
    const [c0] = await r.leases([MAC_C], { tries: 2 });
    expect(c0?.bound, c0?.log).toBe(false);

    // Three updates in one tick: the first is sent at once, the second is replaced by the third.
    const results = await Promise.all([
      s.update(model([vmA, vmB])),
      s.update(model([vmA])),
      s.update(model([vmA, vmB, vmC])),
    ]);
    expect(results.map((x) => x?.status)).toEqual(["applied", "superseded", "applied"]);

    const m = model([vmA, vmB, vmC]);
    const [a, b, c] = await r.leases([MAC_A, MAC_B, MAC_C]);
    expect([a?.ip, b?.ip, c?.ip]).toEqual(["192.0.2.50", reserved(m, MAC_B), reserved(m, MAC_C)]);
    expect(c?.hostname).toBe("worker-c");
    // Same Kea process throughout.
    const status = await keaCommand(r.work.controlSocket, "status-get");
    expect(status.arguments?.["pid"]).toBe(kea.pid);
    expect(r.kea?.pid).toBe(kea.pid);
  });

  it("after re-creating the applier and then restarting Kea, every VMI gets its old address back", async () => {
    const r = await rig();
    await r.startKea();
    const m = model([vmA, vmB, vmC]);
    const first = sync(r);
    expect(await first.update(m)).toMatchObject({ status: "applied", persisted: true });
    const before = await r.leases([MAC_A, MAC_B, MAC_C]);
    expect(before.map((l) => l.bound)).toEqual([true, true, true]);

    // Operator restart: a fresh applier knows nothing and applies the same model again.
    first.close();
    const second = sync(r);
    expect(await second.update(model([vmA, vmB, vmC]))).toMatchObject({ status: "applied" });

    // Kea restart: it comes back from the file config-write rewrote, and with the memfile leases.
    await r.stopKea();
    const kea = await r.startKea();
    const written = JSON.parse(readFileSync(r.work.configFile, "utf8")) as { Dhcp4: { subnet4: unknown[] } };
    expect(written.Dhcp4.subnet4).toHaveLength(1);
    const leases = await keaCommand(r.work.controlSocket, "lease4-get-all");
    const held = (leases.arguments?.["leases"] as { "hw-address": string; "ip-address": string }[])
      .map((l) => [l["hw-address"], l["ip-address"]])
      .sort();
    expect(held).toEqual(before.map((l, i) => [[MAC_A, MAC_B, MAC_C][i], l.ip]).sort());

    const after = await r.leases([MAC_A, MAC_B, MAC_C]);
    expect(after.map((l) => l.ip)).toEqual(before.map((l) => l.ip));
    expect(after.map((l) => l.ip)).toEqual(["192.0.2.50", reserved(m, MAC_B), reserved(m, MAC_C)]);

    // The applier notices the new Kea process and re-sends, although the config is unchanged.
    expect(await second.update(m)).toMatchObject({ status: "applied" });
    expect((await keaCommand(r.work.controlSocket, "status-get")).arguments?.["pid"]).toBe(kea.pid);
    // The pool plus the one reservation outside it (worker-a kept .50; B and C are allocated in the pool).
    expect(await second.leaseCounts()).toEqual({ activeLeases: 3, totalLeases: 100 + 1 });
  });

  it("a config Kea rejects is reported with Kea's message and Kea keeps serving the previous one", async () => {
    const r = await rig();
    await r.startKea();
    const s = sync(r);
    const good = model([vmA]);
    expect(await s.update(good)).toMatchObject({ status: "applied" });
    const previous = await runningReservations(r);

    // A Kea image whose hooks live elsewhere: the real model, a wrong hooks directory.
    const wrongHooks = sync(r, { hooksDirectory: `${r.work.dir}/no-hooks` });
    const rejected = await wrongHooks.update(model([vmA, vmC]));
    expect(rejected).toMatchObject({ status: "rejected", command: "config-test", result: 1 });
    expect(rejected?.status === "rejected" ? rejected.text : "").toMatch(/libdhcp_lease_cmds\.so/);

    // A reservation outside the subnet (what a broken renderer could produce).
    const cfg = s.render(good);
    const subnet = cfg.Dhcp4.subnet4[0];
    if (subnet === undefined) throw new Error("no subnet");
    const stray = {
      ...cfg,
      Dhcp4: {
        ...cfg.Dhcp4,
        subnet4: [
          {
            ...subnet,
            reservations: [
              ...subnet.reservations,
              { "hw-address": MAC_C, "ip-address": "10.99.0.5", "user-context": { vmi: "x/stray" } },
            ],
          },
        ],
      },
    };
    const refused = await s.applier.apply(stray);
    expect(refused).toMatchObject({ status: "rejected", command: "config-test" });
    expect(refused.status === "rejected" ? refused.text : "").toMatch(/10\.99\.0\.5/);

    expect(await runningReservations(r)).toEqual(previous);
    const [a, c] = await r.leases([MAC_A, MAC_C], { tries: 2 });
    expect(a?.ip, a?.log).toBe("192.0.2.50");
    expect(c?.bound, c?.log).toBe(false);
    // The good config is still what Kea runs, so it is not re-sent.
    expect(await s.update(good)).toMatchObject({ status: "unchanged" });
  });

  it("an unknown MAC gets no lease under deny, a pool lease under pool", async () => {
    const r = await rig();
    await r.startKea();
    const s = sync(r);
    expect(await s.update(model([vmA]))).toMatchObject({ status: "applied" });
    const [a, denied] = await r.leases([MAC_A, UNKNOWN], { tries: 2 });
    expect(a?.ip, a?.log).toBe("192.0.2.50");
    expect(denied?.bound, denied?.log).toBe(false);

    expect(await s.update(model([vmA], { infraComponents: { dhcp: { unknownClients: "pool" } } }))).toMatchObject({
      status: "applied",
    });
    const [a2, pooled] = await r.leases([MAC_A, UNKNOWN]);
    expect(a2?.ip, a2?.log).toBe("192.0.2.50");
    expect(pooled?.bound, pooled?.log).toBe(true);
    expect(lastOctet(pooled?.ip)).toBeGreaterThanOrEqual(100);
    expect(lastOctet(pooled?.ip)).toBeLessThanOrEqual(199);
    expect(await s.leaseCounts()).toEqual({ activeLeases: 2, totalLeases: 101 });
  });

  it("waits with backoff while the socket is missing, then applies the newest config once Kea starts", async () => {
    const r = await rig();
    const events: ApplierEvent[] = [];
    const s = sync(r, {
      applier: {
        onEvent: (e) => {
          events.push(e);
        },
      },
    });
    const waiting = (): ApplierEvent[] => events.filter((e) => e.type === "waiting");

    const stale = s.update(model([vmA]));
    while (waiting().length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    const newest = s.update(model([vmA, vmB]));
    expect(await stale).toEqual({ status: "superseded" });

    await r.startKea();
    expect(await newest).toMatchObject({ status: "applied", persisted: true });
    const delays = waiting().map((e) => (e.type === "waiting" ? e.delayMs : 0));
    expect(waiting()[0]).toMatchObject({ attempt: 1 });
    expect(JSON.stringify(waiting()[0])).toMatch(/not reachable.*ENOENT/);
    expect(delays.length).toBeGreaterThanOrEqual(3);

    const m = model([vmA, vmB]);
    const [a, b] = await r.leases([MAC_A, MAC_B]);
    expect([a?.ip, b?.ip]).toEqual(["192.0.2.50", reserved(m, MAC_B)]);
  });
});
