// `oooi serve --dns-udp-processes 2`: a child process answers UDP on serve's own socket. Proven by
// stopping serve (SIGSTOP): only the helper can read the socket then, so every answer dig gets
// comes from it — the right view, and the records of the latest edit. A helper killed is started
// again; serve killed takes its helpers with it.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, ServeProcess, until } from "../support/cli.js";
import { digShort } from "../dns/server/helpers.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const dir = mkdtempSync(join(tmpdir(), "oooi-serve-udp-processes-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const API = "api.alpha.clusters.example.com";
const CONSOLE = "console-openshift-console.apps.alpha.clusters.example.com";
const VLAN = "127.0.8.5";
const POD = "127.0.0.1";

/** Live processes whose parent is `pid` and whose command line runs the UDP helper script. */
function helpersOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command's closing parenthesis: state, ppid, ...
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (Number(ppid) === pid && state !== "Z" && cmdline.includes("udp-process.js")) found.push(Number(entry));
    } catch {
      // The process ended while being read.
    }
  }
  return found;
}

/** Runs `check` while serve is stopped, so only its helpers read the DNS socket. */
async function withServeStopped<T>(pid: number, check: () => Promise<T>): Promise<T> {
  process.kill(pid, "SIGSTOP");
  try {
    return await check();
  } finally {
    process.kill(pid, "SIGCONT");
  }
}

describe.skipIf(digMissing)("oooi serve --dns-udp-processes", () => {
  it("a helper answers on serve's socket with both views and every edit; it is restarted, and ends with serve", async () => {
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      dir,
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--dns-udp-processes",
      "2",
      "--debounce",
      "20",
      "--log-level",
      "debug",
    ]);
    const pid = serve.child.pid ?? 0;
    try {
      const port = await serve.dnsPort();
      expect(serve.log).toContain("UDP in 2 processes");
      await until(async () => (await digShort(port, VLAN, API)) === "127.0.8.4", "the VLAN answer");
      const [helper] = helpersOf(pid);
      expect(helpersOf(pid)).toHaveLength(1);

      await withServeStopped(pid, async () => {
        expect(await digShort(port, VLAN, API)).toBe("127.0.8.4");
        expect(await digShort(port, POD, API)).toBe("172.30.200.10");
        expect(await digShort(port, VLAN, CONSOLE)).toBe("127.0.8.200");
      });

      const file = join(dir, "attachments.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replaceAll("127.0.8.200", "127.0.8.201"));
      await until(async () => (await digShort(port, VLAN, CONSOLE)) === "127.0.8.201", "the edit in serve's answers");
      // The edit reached the helper too: asked many times, no stale answer from either process.
      await withServeStopped(pid, async () => {
        expect(await digShort(port, VLAN, CONSOLE)).toBe("127.0.8.201");
      });
      const answers = await Promise.all(Array.from({ length: 20 }, () => digShort(port, VLAN, CONSOLE)));
      expect(new Set(answers)).toEqual(new Set(["127.0.8.201"]));

      process.kill(helper ?? 0, "SIGKILL");
      await until(() => serve.log.includes(`UDP helper process ${String(helper)} exited (SIGKILL)`), "the exit logged");
      await until(() => helpersOf(pid).length === 1 && !helpersOf(pid).includes(helper ?? 0), "a new helper", 10_000);
      // The new helper serves the latest records, not the example's.
      await until(async () => {
        const answer = await withServeStopped(pid, () => digShort(port, VLAN, CONSOLE));
        return answer === "127.0.8.201";
      }, "the new helper answering");

      const [second] = helpersOf(pid);
      serve.child.kill("SIGKILL");
      await serve.exited;
      await until(() => !alive(second ?? 0), "the helper gone with serve", 10_000);
    } finally {
      await serve.stop();
      for (const p of helpersOf(pid)) process.kill(p, "SIGKILL");
    }
  });
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
