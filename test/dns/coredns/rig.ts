// Real CoreDNS on loopback, fed the renderer's ConfigMap data. Only what cannot work on a test
// host is rewritten: the listening port (53 → a free port, bound to 127.0.0.1), the health, ready
// and metrics ports (their address is the rendered {$POD_IP}, given as 127.0.0.1), the mount directory (→ a temp dir), the forward targets (→ the test upstream)
// and, where asked, a view's VLAN CIDR (→ a loopback CIDR so `dig -b` can be a VLAN client).
// Everything else — block order, views, plugins, zone files — is CoreDNS's to accept or refuse.
import { spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { peerBinary } from "../../support/peers.js";
import { COREFILE_KEY, DEFAULT_MOUNT_DIR } from "../../../src/dns/render/index.js";
import { cidrContains, parseCidr, parseIPv4 } from "../../../src/model/ipv4.js";
import type { DnsModel } from "../../../src/model/types.js";

export const COREDNS = peerBinary("coredns-v1.14.7/coredns", "coredns");

/** How the rendered files are adapted to loopback. */
export interface LoopbackRewrite {
  readonly port: number;
  readonly readyPort: number;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly dir: string;
  readonly upstream: { readonly host: string; readonly port: number };
  /** A view CIDR → the CIDR written instead; identity when absent. */
  readonly cidr?: (cidr: string) => string;
  /** Drops the `cache` plugin (see StartOptions.withoutCache). */
  readonly withoutCache?: boolean;
}

/** The renderer's Corefile with only the loopback adaptations of `r` applied. */
export function rewriteCorefile(corefile: string, r: LoopbackRewrite): string {
  const mapCidr = r.cidr ?? ((c: string) => c);
  return corefile
    .split("\n")
    .flatMap((line) => {
      const block = /^(\S+):53 \{$/.exec(line);
      if (block !== null) return [`${block[1] ?? ""}:${r.port} {`, "    bind 127.0.0.1"];
      if (r.withoutCache === true && /^\s+cache \d+$/.test(line)) return [];
      return [
        line
          // The address stays as rendered ({$POD_IP}, which CoreDNS itself fills in: POD_IP is
          // 127.0.0.1 here, see startCoreDns); only the port moves.
          .replace(/^(\s+health \S*):\d+$/, `$1:${r.healthPort}`)
          .replace(/^(\s+ready \S*):\d+$/, `$1:${r.readyPort}`)
          .replace(/^(\s+prometheus \S*):\d+$/, `$1:${r.metricsPort}`)
          .replace(/^(\s+)forward \. .*$/, `$1forward . ${r.upstream.host}:${r.upstream.port}`)
          .replace(
            /^(\s+file )(\S+)/,
            (_m, head: string, path: string) =>
              `${head}${path.startsWith(`${DEFAULT_MOUNT_DIR}/`) ? join(r.dir, path.slice(DEFAULT_MOUNT_DIR.length + 1)) : path}`,
          )
          .replace(
            /incidr\(client_ip\(\), '([^']+)'\)/,
            (_m, cidr: string) => `incidr(client_ip(), '${mapCidr(cidr)}')`,
          ),
      ];
    })
    .join("\n");
}

/** 127.<b>.<c>.<d>/<n> for a.b.c.d/n: the same host bits on loopback (n ≥ 8). */
export function loopbackCidr(cidr: string): string {
  const [ip = "", bits = ""] = cidr.split("/");
  if (Number(bits) < 8) throw new Error(`${cidr}: cannot move a prefix shorter than /8 onto loopback`);
  return `127.${ip.split(".").slice(1).join(".")}/${bits}`;
}

/** `model` with its VLAN view on loopback and the loopback resolver as its only upstream. */
export function modelOnLoopback(model: DnsModel): DnsModel {
  const [vlan, pods] = model.views;
  if (vlan.sourceCidr === undefined) throw new Error(`${model.name}: no VLAN view`);
  return { ...model, views: [{ ...vlan, sourceCidr: loopbackCidr(vlan.sourceCidr) }, pods], upstreams: ["127.0.0.1"] };
}

/** A source address inside a CIDR (its network address + 1), for `dig -b`. */
export function clientIn(cidr: string): string {
  const [ip = ""] = cidr.split("/");
  const octets = ip.split(".").map(Number);
  octets[3] = (octets[3] ?? 0) + 1;
  return octets.join(".");
}

/** A pod-network source: a loopback address outside `vlanCidr`. */
export function podClientOutside(vlanCidr: string): string {
  const cidr = parseCidr(vlanCidr);
  const candidate = ["127.0.0.1", "127.255.255.254", "127.128.0.1"].find((ip) => {
    const addr = parseIPv4(ip);
    return cidr === undefined || addr === undefined || !cidrContains(cidr, addr);
  });
  if (candidate === undefined) throw new Error(`${vlanCidr} covers every pod-network test source`);
  return candidate;
}

/** A port free for both UDP and TCP on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const udp = createSocket("udp4");
    const ok = await new Promise<boolean>((resolve) => {
      udp.once("error", () => {
        resolve(false);
      });
      udp.bind(port, "127.0.0.1", () => {
        resolve(true);
      });
    });
    await new Promise<void>((resolve) => {
      udp.close(() => {
        resolve();
      });
    }).catch(() => undefined);
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
    if (ok) return port;
  }
}

export interface CoreDns {
  readonly host: string;
  readonly port: number;
  /** The health, ready and prometheus plugins' ports (on POD_IP, 127.0.0.1). */
  readonly healthPort: number;
  readonly readyPort: number;
  readonly metricsPort: number;
  readonly dir: string;
  /** Everything CoreDNS printed (the `log` plugin's query lines included). */
  output(): string;
  /** Rewrites the ConfigMap data in place (atomically per file), as a ConfigMap volume update does. */
  write(files: Readonly<Record<string, string>>): void;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly upstream: { readonly host: string; readonly port: number };
  readonly cidr?: (cidr: string) => string;
  /**
   * Without `cache` (only forwarding blocks carry it): for comparisons with the embedded responder,
   * which caches nothing (CoreDNS's cache sets AA on every reply it serves, forwarded ones included).
   */
  readonly withoutCache?: boolean;
}

const READY_TIMEOUT_MS = 45_000;
const START_ATTEMPTS = 3;

/** Starts CoreDNS on the rendered files; resolves once its `ready` endpoint says 200. */
export async function startCoreDns(files: Readonly<Record<string, string>>, options: StartOptions): Promise<CoreDns> {
  const binary = COREDNS.path;
  if (binary === undefined) throw new Error(COREDNS.skipReason);
  let lastError: unknown;
  // A free port can be taken between asking and binding; another attempt takes other ports.
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    try {
      return await startOnce(binary, files, options);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

async function startOnce(
  binary: string,
  files: Readonly<Record<string, string>>,
  options: StartOptions,
): Promise<CoreDns> {
  const dir = mkdtempSync(join(tmpdir(), "oooi-coredns-"));
  const rewrite: LoopbackRewrite = {
    port: await freePort(),
    readyPort: await freePort(),
    healthPort: await freePort(),
    metricsPort: await freePort(),
    dir,
    upstream: options.upstream,
    ...(options.cidr === undefined ? {} : { cidr: options.cidr }),
    withoutCache: options.withoutCache === true,
  };
  const write = (data: Readonly<Record<string, string>>): void => {
    // Zone files before the Corefile, so a reloaded Corefile never names a file not yet written.
    const keys = Object.keys(data).sort((a, b) => Number(a === COREFILE_KEY) - Number(b === COREFILE_KEY));
    for (const key of keys) {
      const text = data[key] ?? "";
      const content = key === COREFILE_KEY ? rewriteCorefile(text, rewrite) : text;
      writeFileSync(join(dir, `.${key}.tmp`), content);
      renameSync(join(dir, `.${key}.tmp`), join(dir, key));
    }
  };
  write(files);
  const child = spawn(binary, ["-conf", join(dir, COREFILE_KEY)], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    // What the downward API gives the pod: its address, where health and ready bind.
    env: { ...process.env, POD_IP: "127.0.0.1" },
  });
  let output = "";
  const keep = (d: Buffer): void => {
    // The log plugin prints a line per query: keep the tail, enough to explain a failure.
    output = (output + d.toString()).slice(-200_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const close = async (): Promise<void> => {
    await stop(child, exited);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(rewrite.readyPort, exited, () => output);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    host: "127.0.0.1",
    port: rewrite.port,
    healthPort: rewrite.healthPort,
    readyPort: rewrite.readyPort,
    metricsPort: rewrite.metricsPort,
    dir,
    output: () => output,
    write,
    close,
  };
}

async function waitReady(port: number, exited: Promise<number | null>, output: () => string): Promise<void> {
  const state = { dead: false };
  void exited.then(() => {
    state.dead = true;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (state.dead) throw new Error(`coredns exited before it was ready:\n${output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/ready`);
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`coredns not ready within ${READY_TIMEOUT_MS} ms:\n${output()}`);
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
