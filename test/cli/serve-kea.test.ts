// Issue 5 "Done when", through the real CLI: `oooi serve --kea-socket` in a child process drives a
// real kea-dhcp4 in a test namespace; busybox udhcpc with VM MACs in another namespace checks it.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { VirtualMachineInstance } from "../../src/api/external.js";
import { dhcpClientSkipReason } from "../dhcp/support/dhcp-client.js";
import { keaSkipReason } from "../dhcp/support/kea.js";
import { createKeaRig, type KeaRig } from "../dhcp/support/rig.js";
import { infra, NS, vmi } from "../support/fixtures.js";

const skipReason = (await keaSkipReason()) ?? (await dhcpClientSkipReason());
const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const MAC_A = "02:00:00:00:1a:01";
const MAC_B = "02:00:00:00:1b:01";
const MAC_C = "02:00:00:00:1c:01";
const vmA = vmi(NS, "worker-a", MAC_A, "192.0.2.50");
const vmB = vmi(NS, "worker-b", MAC_B);
const vmC = vmi(NS, "worker-c", MAC_C);

interface Oooi {
  child: ChildProcess;
  log: () => string;
  waitFor: (re: RegExp, after?: number) => Promise<number>;
}

function writeState(dir: string, vmis: VirtualMachineInstance[]): void {
  writeFileSync(
    join(dir, "state.json"),
    JSON.stringify({ apiVersion: "v1", kind: "List", items: [infra("vlan100"), ...vmis] }),
  );
}

function startOooi(rig: KeaRig, dir: string): Oooi {
  const child = spawn(
    process.execPath,
    [
      CLI,
      "serve",
      "--manifests",
      dir,
      "--kea-socket",
      rig.work.controlSocket,
      "--kea-hooks-dir",
      rig.hooksDirectory,
      "--kea-lease-file",
      rig.work.leaseFile,
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--debounce",
      "50",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    log += d;
  });
  const waitFor = async (re: RegExp, after = 0): Promise<number> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const m = re.exec(log.slice(after));
      if (m !== null) return after + m.index + m[0].length;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(re)}; log:\n${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, log: () => log, waitFor };
}

async function stop(o: Oooi): Promise<void> {
  if (o.child.exitCode !== null) return;
  const exited = new Promise((r) => o.child.once("exit", r));
  o.child.kill("SIGTERM");
  await exited;
}

describe.skipIf(skipReason !== undefined)(
  `oooi serve --kea-socket${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    const cleanups: (() => Promise<void> | void)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it("hands out the reserved addresses, picks up a new VMI live, and survives oooi and Kea restarts", async () => {
      const rig = await createKeaRig({ serverAddress: "192.0.2.2/24" });
      cleanups.push(() => rig.destroy());
      const dir = mkdtempSync(join(tmpdir(), "oooi-serve-kea-"));
      cleanups.push(() => {
        rmSync(dir, { recursive: true, force: true });
      });
      await rig.startKea();
      writeState(dir, [vmA, vmB]);

      let oooi = startOooi(rig, dir);
      cleanups.push(() => stop(oooi));
      const mark = await oooi.waitFor(/Kea configuration applied/);
      const [a, b] = await rig.leases([MAC_A, MAC_B]);
      expect(a, a?.log).toMatchObject({ bound: true, ip: "192.0.2.50", hostname: "worker-a" });
      expect(b?.bound, b?.log).toBe(true);
      const bIp = b?.ip;

      // A VMI added to the manifests gets its lease without restarting Kea.
      const pid = rig.kea?.pid;
      writeState(dir, [vmA, vmB, vmC]);
      await oooi.waitFor(/Kea configuration applied/, mark);
      const [c] = await rig.leases([MAC_C]);
      expect(c?.bound, c?.log).toBe(true);
      expect(rig.kea?.pid).toBe(pid);

      // Restart oooi, then Kea (memfile persisted): every VMI gets its old address back.
      await stop(oooi);
      oooi = startOooi(rig, dir);
      await oooi.waitFor(/rendered/);
      await rig.stopKea();
      await rig.startKea();
      await oooi.waitFor(/Kea configuration applied/);
      const again = await rig.leases([MAC_A, MAC_B, MAC_C]);
      expect(again.map((l) => l.ip)).toEqual(["192.0.2.50", bIp, c?.ip]);
    });
  },
);
