// The built `oooi serve` (dist/cli/main.js) in a child process, on a copy of examples/standalone
// with an mTLS xDS port, and what the bench reads of it from outside: its resident memory
// (/proc/PID/status VmRSS) and its CPU time (/proc/PID/stat utime + stime), as `top` would.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import { issueCa, issueLeaf, loadCa, type IssuedCertificate } from "../../src/pki/issue.js";
import { nodeGroupUri } from "../../src/pki/spiffe.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");

/** The example's proxy node group, and a group no manifest defines. */
export const GROUP = "clusters/tenant-vlan-proxy";
export const UNKNOWN_GROUP = "nowhere/ghost-proxy";

/** Certificates for one run: the server's, the example group's and the unknown group's clients. */
export interface Pki {
  readonly dir: string;
  readonly group: ChannelCredentials;
  readonly unknown: ChannelCredentials;
  /** Client credentials for node group `namespace/name` (signed by the same CA). */
  client(namespace: string, name: string): Promise<ChannelCredentials>;
}

export async function makePki(): Promise<Pki> {
  const dir = mkdtempSync(join(tmpdir(), "oooi-bench-flood-"));
  const validity = { now: Date.now(), lifetimeMs: 86_400_000 };
  const ca = await issueCa("flood bench CA", validity);
  const loaded = await loadCa(ca.certPem, ca.keyPem);
  const server = await issueLeaf(loaded, { kind: "server", commonName: "oooi", dnsNames: ["localhost"] }, validity);
  const client = (ns: string, name: string) =>
    issueLeaf(loaded, { kind: "client", uri: nodeGroupUri(ns, name) }, validity);
  const [group, unknown] = await Promise.all([
    client("clusters", "tenant-vlan-proxy"),
    client("nowhere", "ghost-proxy"),
  ]);
  writeFileSync(join(dir, "ca.crt"), ca.certPem);
  writeFileSync(join(dir, "server.crt"), server.certPem);
  writeFileSync(join(dir, "server.key"), server.keyPem);
  const creds = (leaf: IssuedCertificate) =>
    credentials.createSsl(Buffer.from(ca.certPem), Buffer.from(leaf.keyPem), Buffer.from(leaf.certPem));
  return {
    dir,
    group: creds(group),
    unknown: creds(unknown),
    client: async (ns, name) => creds(await client(ns, name)),
  };
}

/** A running serve: its ports, its manifest folder, its pid. */
export class Served {
  readonly manifests: string;
  xdsPort = 0;
  dnsPort = 0;
  httpPort = 0;
  #log = "";
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;

  constructor(pki: Pki, extraArgs: readonly string[], name: string) {
    this.manifests = join(pki.dir, `manifests-${name}`);
    cpSync(join(ROOT, "examples", "standalone"), this.manifests, { recursive: true });
    const args = [
      CLI,
      "serve",
      "--manifests",
      this.manifests,
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--http-listen",
      "127.0.0.1:0",
      "--xds-tls-cert",
      join(pki.dir, "server.crt"),
      "--xds-tls-key",
      join(pki.dir, "server.key"),
      "--xds-tls-ca",
      join(pki.dir, "ca.crt"),
      "--log-format",
      "json",
      ...extraArgs,
    ];
    // FLOOD_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the serve process (written at its exit).
    const nodeArgs = process.env["FLOOD_NODE_ARGS"]?.split(" ").filter((a) => a !== "") ?? [];
    this.#child = spawn(process.execPath, [...nodeArgs, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    this.#child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      // Only the start-up lines are kept: a flood makes the log long.
      if (this.dnsPort === 0 || this.xdsPort === 0 || this.httpPort === 0) this.#log += d;
      this.xdsPort ||= Number(/xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(this.#log)?.[1] ?? 0);
      this.dnsPort ||= Number(/DNS responder listening on [\d.]+:(\d+)/.exec(this.#log)?.[1] ?? 0);
      this.httpPort ||= Number(/status page on http:\/\/[\d.]+:(\d+)\//.exec(this.#log)?.[1] ?? 0);
    });
    this.#exited = new Promise((resolve) => {
      this.#child.once("exit", () => {
        resolve();
      });
    });
  }

  get pid(): number {
    return this.#child.pid ?? 0;
  }

  /** Resolves once all three ports are known and /readyz says the first rendering is done. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#child.exitCode !== null)
        throw new Error(`serve exited (${String(this.#child.exitCode)}): ${this.#log}`);
      if (this.httpPort > 0 && this.xdsPort > 0 && this.dnsPort > 0) {
        const r = await fetch(`http://127.0.0.1:${String(this.httpPort)}/readyz`).catch(() => undefined);
        if (r?.ok === true) return;
      }
      if (Date.now() > deadline) throw new Error(`serve not ready after ${String(timeoutMs)} ms: ${this.#log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Resident memory in MiB. */
  rssMiB(): number {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(this.pid)}/status`, "utf8"));
    return Number(m?.[1] ?? Number.NaN) / 1024;
  }

  /** User + system CPU time so far, in ms (clock ticks of 10 ms: USER_HZ is 100 on Linux). */
  cpuMs(): number {
    const stat = readFileSync(`/proc/${String(this.pid)}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at state (field 3).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null) this.#child.kill("SIGTERM");
    const killed = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
    await this.#exited;
    clearTimeout(killed);
    rmSync(this.manifests, { recursive: true, force: true });
  }
}
