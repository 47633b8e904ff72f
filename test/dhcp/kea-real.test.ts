// The rendered configuration against the real Kea 2.2: `kea-dhcp4 -t` must accept it, a daemon
// started on it must answer config-get / config-test / lease4-get-all on its control socket, and
// a real DHCP client must get exactly what the model says. Kea runs in network namespaces this
// file creates and deletes.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderKea, type KeaRenderOptions } from "../../src/dhcp/render/index.js";
import type { DhcpModel } from "../../src/model/types.js";
import { dhcpClientSkipReason, requestLease } from "./support/dhcp-client.js";
import {
  findHooksDirectory,
  keaCheckConfig,
  keaSkipReason,
  keaWorkDir,
  startKea,
  type KeaProcess,
  type KeaWorkDir,
} from "./support/kea.js";
import { keaCommand } from "./support/kea-socket.js";
import { createNetns, netnsExists, peerName, type Netns } from "./support/netns.js";
import { openPool, reservationOutsideSubnet, validModels, wideDeny } from "./support/models.js";

const skipReason = await keaSkipReason();
const clientSkipReason = skipReason ?? (await dhcpClientSkipReason());
const title = (name: string, reason: string | undefined): string =>
  reason === undefined ? name : `${name} (skipped: ${reason})`;

/** The server's own address with the subnet's prefix length, e.g. 10.20.0.2/22. */
function serverAddress(m: DhcpModel): string {
  return `${m.serverIP}/${m.subnet.split("/")[1] ?? "32"}`;
}

interface Rig {
  readonly ns: Netns;
  readonly work: KeaWorkDir;
  readonly options: KeaRenderOptions;
  /** Namespace holding the peer end of the server's interface; only with a client. */
  readonly client?: Netns;
}

describe.skipIf(skipReason !== undefined)(title("real kea-dhcp4", skipReason), () => {
  let hooksDirectory = "";
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    hooksDirectory = (await findHooksDirectory()) ?? "";
  });

  afterEach(async () => {
    // Newest first: stop Kea before deleting its namespaces and work directory.
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setUp(model: DhcpModel, withClient = false): Promise<Rig> {
    const work = keaWorkDir();
    cleanups.push(() => {
      work.remove();
    });
    let client: Netns | undefined;
    if (withClient) {
      client = await createNetns([], "oooi-cli");
      cleanups.push(() => client?.delete());
    }
    const ns = await createNetns([
      {
        name: model.interface,
        address: serverAddress(model),
        ...(client === undefined ? {} : { peerNetns: client.name }),
      },
    ]);
    cleanups.push(() => ns.delete());
    const options = { controlSocket: work.controlSocket, leaseFile: work.leaseFile, hooksDirectory };
    work.writeConfig(renderKea(model, options));
    return { ns, work, options, ...(client === undefined ? {} : { client }) };
  }

  async function start(rig: Rig): Promise<KeaProcess> {
    // startKea stops Kea itself when it never becomes ready.
    const kea = await startKea(rig.ns, rig.work);
    cleanups.push(() => kea.stop());
    return kea;
  }

  for (const model of validModels) {
    it(`kea-dhcp4 -t accepts ${model.name}`, async () => {
      const { ns, work } = await setUp(model);
      const r = await keaCheckConfig(ns, work);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    });
  }

  it("kea-dhcp4 -t rejects a reservation outside the subnet", async () => {
    const { ns, work } = await setUp(reservationOutsideSubnet);
    const r = await keaCheckConfig(ns, work);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/10\.99\.0\.5/);
  });

  it("kea-dhcp4 -t loads the hook: a wrong hooks directory is rejected", async () => {
    const { ns, work, options } = await setUp(wideDeny);
    work.writeConfig(renderKea(wideDeny, { ...options, hooksDirectory: `${work.dir}/no-hooks` }));
    const r = await keaCheckConfig(ns, work);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/libdhcp_lease_cmds\.so/);
  });

  it("a running kea-dhcp4 serves the reservations and lease_cmds over its control socket", async () => {
    const rig = await setUp(wideDeny);
    await start(rig);
    const socket = rig.work.controlSocket;

    const got = await keaCommand(socket, "config-get");
    expect(got.result, got.text).toBe(0);
    const running = got.arguments?.["Dhcp4"] as {
      subnet4: { id: number; reservations: { "hw-address": string; "ip-address": string; hostname: string }[] }[];
    };
    const subnet = running.subnet4.find((s) => s.id === 1);
    expect(subnet?.reservations.map((r) => [r["hw-address"], r["ip-address"], r.hostname])).toEqual([
      ["02:00:00:00:00:0a", "10.20.2.10", "worker-a"],
      ["02:00:00:00:00:2b", "10.20.2.11", "worker-b"],
      ["02:00:00:00:00:ff", "10.20.3.254", "worker-z"],
    ]);

    const leases = await keaCommand(socket, "lease4-get-all");
    // 3 = "empty": the command exists (lease_cmds is loaded) and no lease was handed out yet.
    expect([0, 3], leases.text).toContain(leases.result);
    expect((await keaCommand(socket, "no-such-command")).result).toBe(2);

    // The agent pushes renderKea() output with config-test/config-set: the running Kea must
    // accept another rendered model and refuse a broken one.
    const ok = await keaCommand(socket, "config-test", renderKea(openPool, rig.options));
    expect(ok.result, ok.text).toBe(0);
    const bad = await keaCommand(socket, "config-test", renderKea(reservationOutsideSubnet, rig.options));
    expect(bad.result).toBe(1);
  });

  it("deletes its namespaces", async () => {
    const { ns } = await setUp(wideDeny);
    expect(await netnsExists(ns.name)).toBe(true);
    await ns.delete();
    expect(await netnsExists(ns.name)).toBe(false);
  });

  describe.skipIf(clientSkipReason !== undefined)(title("with a DHCP client (udhcpc)", clientSkipReason), () => {
    it("deny: a reserved MAC gets its address, hostname, netmask and every resolver; an unknown MAC gets nothing", async () => {
      const rig = await setUp(wideDeny, true);
      await start(rig);
      const client = rig.client as Netns;
      const iface = peerName(wideDeny.interface);

      const known = await requestLease(client, iface, rig.work.dir, { mac: "02:00:00:00:00:2b" });
      expect(known.bound, known.log).toBe(true);
      expect(known).toMatchObject({
        ip: "10.20.2.11",
        netmask: "255.255.252.0",
        router: "10.20.0.1",
        hostname: "worker-b",
        leaseSeconds: 3600,
      });
      expect(known.dns).toEqual(["10.20.0.3", "192.0.2.53"]);

      const unknown = await requestLease(client, iface, rig.work.dir, { mac: "02:00:00:00:00:99", tries: 2 });
      expect(unknown.bound, unknown.log).toBe(false);

      const leases = await keaCommand(rig.work.controlSocket, "lease4-get-all");
      expect(leases.result, leases.text).toBe(0);
      const held = (leases.arguments?.["leases"] as { "ip-address": string; "hw-address": string }[]).map((l) => [
        l["hw-address"],
        l["ip-address"],
      ]);
      expect(held).toEqual([["02:00:00:00:00:2b", "10.20.2.11"]]);
    });

    it("pool: an unknown MAC gets an address from the pool", async () => {
      const rig = await setUp(openPool, true);
      await start(rig);
      const lease = await requestLease(rig.client as Netns, peerName(openPool.interface), rig.work.dir, {
        mac: "02:00:00:00:00:99",
      });
      expect(lease.bound, lease.log).toBe(true);
      const last = Number(lease.ip?.split(".")[3]);
      expect(lease.ip?.startsWith("192.168.50.")).toBe(true);
      expect(last).toBeGreaterThanOrEqual(100);
      expect(last).toBeLessThanOrEqual(200);
      expect(lease.dns).toEqual([]);
      expect(lease.leaseSeconds).toBe(1800);
    });
  });
});
