// Running the real ISC Kea DHCPv4 server in tests: discovery of the installed binary and hooks,
// a private work directory per test, `kea-dhcp4 -t` checks and a briefly running daemon inside a
// network namespace. Every path Kea writes (lock, pid, lease file, socket) is in the work dir.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keaCommand } from "./kea-socket.js";
import type { Netns } from "./netns.js";
import { run, which, type RunResult } from "./run.js";
import { skipUnless } from "../../support/peers.js";

const LEASE_CMDS = "libdhcp_lease_cmds.so";

/** Why Kea integration tests cannot run here, or undefined when they can. */
async function keaMissing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return "not root: network namespaces need root";
  if ((await which("kea-dhcp4")) === undefined) return "kea-dhcp4 not installed (apt-get install kea-dhcp4-server)";
  if ((await which("ip")) === undefined) return "ip (iproute2) not installed";
  if ((await findHooksDirectory()) === undefined) return `${LEASE_CMDS} not found in any installed package`;
  return undefined;
}

/** Why the real-Kea suites skip (printed; under OOOI_REQUIRE_PEERS=1 it fails the run instead). */
export async function keaSkipReason(): Promise<string | undefined> {
  return skipUnless(await keaMissing());
}

/**
 * Directory of the installed libdhcp_lease_cmds.so: asked of dpkg (Debian ships it in
 * kea-common), else found by walking the usual library roots.
 */
export async function findHooksDirectory(): Promise<string | undefined> {
  const dpkg = await run("dpkg-query", ["-S", `*/${LEASE_CMDS}`]).catch(() => undefined);
  for (const line of dpkg?.code === 0 ? dpkg.stdout.split("\n") : []) {
    const path = line.slice(line.indexOf(": ") + 2).trim();
    if (path.endsWith(`/${LEASE_CMDS}`) && existsSync(path)) return path.slice(0, -LEASE_CMDS.length - 1);
  }
  for (const root of ["/usr/lib", "/usr/lib64", "/usr/local/lib", "/opt"]) {
    const found = findFile(root, LEASE_CMDS, 5);
    if (found !== undefined) return found;
  }
  return undefined;
}

function findFile(dir: string, name: string, depth: number): string | undefined {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return undefined;
  }
  if (entries.includes(name)) return dir;
  if (depth === 0) return undefined;
  for (const e of entries.sort()) {
    const sub = join(dir, e);
    let isDir = false;
    try {
      isDir = statSync(sub).isDirectory();
    } catch {
      /* dangling link */
    }
    const found = isDir ? findFile(sub, name, depth - 1) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A private directory for one Kea instance and the paths to render into its config. */
export interface KeaWorkDir {
  readonly dir: string;
  readonly configFile: string;
  readonly controlSocket: string;
  readonly leaseFile: string;
  /** KEA_LOCKFILE_DIR / KEA_PIDFILE_DIR pointing into `dir`. */
  readonly env: Readonly<Record<string, string>>;
  /** Writes the configuration Kea will read. */
  writeConfig(config: unknown): void;
  remove(): void;
}

/** Creates a fresh work directory (short path: unix socket names are limited to 107 bytes). */
export function keaWorkDir(): KeaWorkDir {
  const dir = mkdtempSync(join(tmpdir(), "oooi-kea-"));
  const configFile = join(dir, "kea-dhcp4.json");
  return {
    dir,
    configFile,
    controlSocket: join(dir, "kea4-ctrl-socket"),
    leaseFile: join(dir, "kea-leases4.csv"),
    env: { KEA_LOCKFILE_DIR: dir, KEA_PIDFILE_DIR: dir },
    writeConfig: (config) => {
      writeFileSync(configFile, JSON.stringify(config, null, 2));
    },
    remove: () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `kea-dhcp4 -t FILE` inside the namespace: exit 0 means Kea accepts the configuration. */
export function keaCheckConfig(ns: Netns, work: KeaWorkDir): Promise<RunResult> {
  return ns.exec("kea-dhcp4", ["-t", work.configFile], { env: work.env });
}

/** A kea-dhcp4 daemon started by startKea(). */
export interface KeaProcess {
  readonly pid: number;
  /** Everything Kea printed so far (its loggers write to stdout). */
  output(): string;
  /** SIGTERM, then SIGKILL if it lingers; resolves once the process has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `kea-dhcp4 -c FILE` inside the namespace and waits until its control socket answers.
 * `ip netns exec` execs Kea in place, so the child pid is Kea's own.
 */
export async function startKea(ns: Netns, work: KeaWorkDir, readyTimeoutMs = 15_000): Promise<KeaProcess> {
  const [cmd, ...args] = ns.argv("kea-dhcp4", ["-c", work.configFile]);
  const child = spawn(cmd ?? "ip", args, {
    env: { ...process.env, ...work.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      resolve();
    });
  });
  const proc: KeaProcess = {
    pid: child.pid ?? -1,
    output: () => out,
    stop: () => stopChild(child, exited),
  };
  try {
    await waitForSocket(work.controlSocket, child, readyTimeoutMs);
  } catch (err) {
    await proc.stop();
    throw new Error(`${(err as Error).message}\n--- kea output ---\n${out}`);
  }
  return proc;
}

async function waitForSocket(socketPath: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `kea-dhcp4 exited (${String(child.exitCode ?? child.signalCode)}) before its control socket answered`,
      );
    }
    if (existsSync(socketPath)) {
      const ok = await keaCommand(socketPath, "version-get", undefined, 2_000).then(
        () => true,
        () => false,
      );
      if (ok) return;
    }
    if (Date.now() > deadline) throw new Error(`control socket ${socketPath} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
