// Issue 3 item 5 through the real CLI: Envoy-like clients on `oooi serve`'s ADS port receive the
// example's configuration, and a YAML edit (a worker's Machine address) arrives as a new LDS
// version on the open streams — no reconnect — routing the new address to its own control plane.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const exec = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "oooi-serve-xds-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("oooi serve serves ADS", () => {
  it("pushes a worker leaving (its Machine and VMI deleted) to every connected Envoy without a reconnect", async () => {
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const child = spawn(
      process.execPath,
      [
        CLI,
        "serve",
        "--manifests",
        dir,
        "--xds-listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        "--no-dns",
        "--debounce",
        "20",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      log += d;
    });
    const clients: EnvoyLikeClient[] = [];
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(log), "xDS server listening");
      const port = /xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(log)?.[1] ?? "";
      for (const [i, protocol] of (["sotw", "delta", "sotw"] as const).entries()) {
        const c = new EnvoyLikeClient({
          address: `127.0.0.1:${port}`,
          node: { id: `envoy-${String(i)}`, cluster: "clusters/tenant-vlan-proxy" },
          protocol,
        });
        clients.push(c);
        c.connect();
      }
      const kube = (src: string) => ({ destinationPort: 6443, sourceIp: src, transportProtocol: "tls" as const });
      const alpha = "clusters-alpha/kube-apiserver:6443";
      for (const c of clients)
        await c.waitFor(() => c.route(kube("127.0.8.11"))?.chain.cluster === alpha, "alpha's worker routed");
      const before = clients.map((c) => c.version(LISTENER_TYPE_URL));
      const streams = clients.map((c) => c.streamCount);

      // Where oooi runs DHCP a guest's report moves no route (its allocation does), so the change
      // pushed here is a worker going away: its Machine and its VMI deleted.
      const file = join(dir, "observed.yaml");
      const docs = readFileSync(file, "utf8").split(/^---$/m);
      // Saved atomically, as editors do: a truncate-and-write could be read half-written.
      writeFileSync(`${file}.tmp`, docs.filter((d) => !/^ {2}name: alpha-workers-1$/m.test(d)).join("---"));
      renameSync(`${file}.tmp`, file);
      for (const c of clients)
        await c.waitFor(() => c.route(kube("127.0.8.11")) === undefined, "the gone worker no longer routed");
      expect(clients.map((c) => c.version(LISTENER_TYPE_URL))).not.toEqual(before);
      expect(clients.every((c) => c.route(kube("127.0.8.10"))?.chain.cluster === alpha)).toBe(true);
      expect(clients.map((c) => c.streamCount)).toEqual(streams);
      expect(clients.flatMap((c) => c.violations)).toEqual([]);

      // What an operator on call would look at: `oooi debug nodes` and /metrics.
      const nodes = await exec(process.execPath, [CLI, "debug", "nodes", "--xds", `127.0.0.1:${port}`]);
      for (const id of ["envoy-0", "envoy-1", "envoy-2"]) expect(nodes.stdout).toContain(id);
      expect(nodes.stdout).toContain("clusters/tenant-vlan-proxy");
      const metricsPort = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(log)?.[1] ?? "";
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(text).toMatch(/oooi_xds_streams\{protocol="sotw"\} 2/);
      expect(text).toMatch(/oooi_xds_pushes_total\{[^}]*type="lds"[^}]*\} [1-9]/);
    } finally {
      for (const c of clients) c.close();
      child.kill("SIGTERM");
    }
  });
});
