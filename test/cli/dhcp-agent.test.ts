// Issue 5 item 3 through the real CLI (built dist/): `oooi serve` publishes each DHCPServer's
// KeaConfig over ADS, `oooi dhcp-agent` next to a real kea-dhcp4 (in a test namespace) applies it
// and ACKs or NACKs, and busybox udhcpc with VM MACs in another namespace checks what Kea serves.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerCredentials } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import type { VirtualMachineInstance } from "../../src/api/external.js";
import type { Infra } from "../../src/api/schema.js";
import { dhcpClientSkipReason } from "../dhcp/support/dhcp-client.js";
import { keaSkipReason } from "../dhcp/support/kea.js";
import { createKeaRig } from "../dhcp/support/rig.js";
import { infra, NS, vmi } from "../support/fixtures.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL, keaConfigResource } from "../../src/dhcp/kea-config-resource.js";
import { startXdsServer } from "../../src/xds/server/index.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const skipReason = (await keaSkipReason()) ?? (await dhcpClientSkipReason());
const hasOpenssl = skipUnless(toolMissing("openssl", "apt-get install openssl")) === undefined;
const NODE = `${NS}/vlan100-dhcp`;
const NODE_ID = "clusters/kea-vlan100-0";
const MAC_A = "02:00:00:00:2a:01";
const MAC_B = "02:00:00:00:2b:01";
const MAC_C = "02:00:00:00:2c:01";
const vmA = vmi(NS, "worker-a", MAC_A, "192.0.2.50");
const vmB = vmi(NS, "worker-b", MAC_B);
const vmC = vmi(NS, "worker-c", MAC_C);

/** A child `oooi` process with its stderr (pino lines) collected. */
interface Proc {
  readonly child: ChildProcess;
  log(): string;
  /** Resolves with the log offset just past the first match of `re` after `after`. */
  waitFor(re: RegExp, after?: number, timeoutMs?: number): Promise<number>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

function oooi(args: string[]): Proc {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    log += d;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      resolve(code);
    });
  });
  return {
    child,
    log: () => log,
    waitFor: async (re, after = 0, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(log.slice(after));
        if (m !== null) return after + m.index + m[0].length;
        if (child.exitCode !== null)
          throw new Error(
            `oooi ${args[0] ?? ""} exited (${String(child.exitCode)}) before ${String(re)}; log:\n${log}`,
          );
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(re)}; log:\n${log}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Parsed pino lines of a log. */
function lines(log: string): Record<string, unknown>[] {
  return log
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("oooi dhcp-agent command line", () => {
  it("rejects bad flags with one clear line and no stack trace", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["--xds", "127.0.0.1:1", "--node", "clusters/vlan100-dhcp"],
        /required option '--kea-socket <path>' not specified/,
      ],
      [
        ["--kea-socket", "/tmp/k", "--xds", "nowhere", "--node", "clusters/x"],
        /'--xds <host:port>' argument 'nowhere' is invalid\. expected host:port/,
      ],
      [
        ["--kea-socket", "/tmp/k", "--xds", "127.0.0.1:1", "--node", "vlan100-dhcp"],
        /'--node <ns\/name>' argument 'vlan100-dhcp' is invalid\. expected NAMESPACE\/NAME/,
      ],
      [
        ["--kea-socket", "/tmp/k", "--xds", "127.0.0.1:1", "--node", "a/b", "--tls-key", "/tmp/k"],
        /--tls-cert and --tls-key must be given together/,
      ],
      [
        ["--kea-socket", "/tmp/k", "--xds", "127.0.0.1:1", "--node", "a/b", "--tls-ca", "/nonexistent/ca.pem"],
        /cannot read --tls-ca \/nonexistent\/ca\.pem: ENOENT/,
      ],
    ];
    for (const [args, re] of cases) {
      const p = oooi(["dhcp-agent", ...args]);
      const code = await new Promise<number | null>((resolve) => {
        p.child.once("exit", resolve);
      });
      expect(code, p.log()).not.toBe(0);
      expect(p.log()).toMatch(re);
      expect(p.log()).not.toMatch(/^\s+at /m);
    }
  });

  it("keeps retrying an unreachable xDS server, says so, and exits 0 on SIGTERM", async () => {
    const p = oooi([
      "dhcp-agent",
      "--kea-socket",
      "/tmp/oooi-no-kea.sock",
      "--xds",
      "127.0.0.1:1",
      "--node",
      "clusters/vlan100-dhcp",
      "--node-id",
      "t/0",
    ]);
    cleanups.push(() => p.stop());
    const first = await p.waitFor(
      /cannot reach the xDS server 127\.0\.0\.1:1 \(connect ECONNREFUSED 127\.0\.0\.1:1\); retrying in/,
    );
    await p.waitFor(/cannot reach the xDS server 127\.0\.0\.1:1/, first);
    expect(await p.stop()).toBe(0);
    expect(p.log()).not.toMatch(/^\s+at /m);
  });
});

/** A throwaway CA with a server certificate for 127.0.0.1 and a client certificate (openssl). */
function makePki(dir: string): Record<"ca" | "serverCert" | "serverKey" | "clientCert" | "clientKey", string> {
  const ssl = (...args: string[]): void => {
    execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  };
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  ssl("req", "-x509", ...key, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=oooi-test-ca");
  for (const [name, ext] of [
    ["server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth"],
    ["client", "extendedKeyUsage=clientAuth"],
  ] as const) {
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
    ssl("req", ...key, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=oooi-test-${name}`);
    ssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "1",
      "-extfile",
      `${name}.ext`,
    );
  }
  const p = (f: string): string => join(dir, f);
  return {
    ca: p("ca.pem"),
    serverCert: p("server.pem"),
    serverKey: p("server.key"),
    clientCert: p("client.pem"),
    clientKey: p("client.key"),
  };
}

describe.skipIf(!hasOpenssl)(
  `oooi dhcp-agent over mTLS${hasOpenssl ? "" : " (skipped: openssl not installed)"}`,
  () => {
    it("connects with --tls-ca/--tls-cert/--tls-key to a server that requires a client certificate", async () => {
      const dir = mkdtempSync(join(tmpdir(), "oooi-agent-tls-"));
      cleanups.push(() => {
        rmSync(dir, { recursive: true, force: true });
      });
      const pki = makePki(dir);
      const cache = new SnapshotCache({ check: checkEnvoySnapshot });
      cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
      cache.setSnapshot(
        NODE,
        new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource(NODE, { Dhcp4: { "valid-lifetime": 60 } })]]]),
      );
      const credentials = ServerCredentials.createSsl(
        readFileSync(pki.ca),
        [{ cert_chain: readFileSync(pki.serverCert), private_key: readFileSync(pki.serverKey) }],
        true,
      );
      const server = await startXdsServer({ cache, listen: "127.0.0.1:0", credentials });
      cleanups.push(() => server.close());
      const p = oooi([
        "dhcp-agent",
        "--kea-socket",
        join(dir, "no-kea.sock"),
        "--xds",
        `127.0.0.1:${String(server.port)}`,
        "--node",
        NODE,
        "--node-id",
        "t/tls",
        "--tls-ca",
        pki.ca,
        "--tls-cert",
        pki.clientCert,
        "--tls-key",
        pki.clientKey,
      ]);
      cleanups.push(() => p.stop());
      await p.waitFor(/connected to the xDS server/);
      expect(server.status.node("t/tls")?.node).toEqual({ id: "t/tls", cluster: NODE, userAgent: "oooi-dhcp-agent" });
      // Sent, and not ACKed: Kea is not there to take it.
      await p.waitFor(/Kea control socket \S+ not reachable yet, retrying/);
      const t = server.status.node("t/tls")?.types.find((x) => x.typeUrl === KEA_CONFIG_TYPE_URL);
      expect(t?.lastSent).toBeDefined();
      expect(t?.lastAcked).toBeUndefined();
      expect(await p.stop()).toBe(0);
    });
  },
);

describe.skipIf(skipReason !== undefined)(
  `oooi dhcp-agent drives a real Kea over ADS${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`,
  () => {
    it("serves reserved addresses, adds a VMI live, and NACKs a config Kea refuses while Kea keeps the last good one", async () => {
      // Kea starts listening nowhere, so the DHCPServer's interface comes from the pushed config.
      const rig = await createKeaRig({ serverAddress: "192.0.2.2/24", bootstrapInterfaces: [] });
      cleanups.push(() => rig.destroy());
      const dir = mkdtempSync(join(tmpdir(), "oooi-agent-"));
      cleanups.push(() => {
        rmSync(dir, { recursive: true, force: true });
      });
      const writeState = (inf: Infra, vmis: VirtualMachineInstance[]): void => {
        writeFileSync(
          join(dir, "state.json"),
          JSON.stringify({ apiVersion: "v1", kind: "List", items: [inf, ...vmis] }),
        );
      };
      writeState(infra("vlan100"), [vmA, vmB]);
      await rig.startKea();

      const serve = oooi(["serve", "--manifests", dir, "--xds-listen", "127.0.0.1:0", "--no-dns", "--debounce", "50"]);
      cleanups.push(() => serve.stop());
      await serve.waitFor(/xDS \(ADS\) server listening on 127\.0\.0\.1:\d+/);
      const port = /xDS \(ADS\) server listening on 127\.0\.0\.1:(\d+)/.exec(serve.log())?.[1] ?? "";
      const agent = oooi([
        "dhcp-agent",
        "--kea-socket",
        rig.work.controlSocket,
        "--xds",
        `127.0.0.1:${port}`,
        "--node",
        NODE,
        "--node-id",
        NODE_ID,
        "--kea-lease-file",
        rig.work.leaseFile,
        "--kea-hooks-dir",
        rig.hooksDirectory,
      ]);
      cleanups.push(() => agent.stop());

      // A VMI with an address gets exactly it; one without gets a lease too.
      let mark = await agent.waitFor(/Kea configuration applied; ACK version \w+/);
      const [a, b] = await rig.leases([MAC_A, MAC_B]);
      expect(a, a?.log).toMatchObject({ bound: true, ip: "192.0.2.50", hostname: "worker-a" });
      expect(b?.bound, b?.log).toBe(true);
      const pid = rig.kea?.pid;

      // A VMI added to the manifests gets its lease without restarting Kea.
      writeState(infra("vlan100"), [vmA, vmB, vmC]);
      mark = await agent.waitFor(/Kea configuration applied; ACK version \w+/, mark);
      const [c] = await rig.leases([MAC_C]);
      expect(c, c?.log).toMatchObject({ bound: true, hostname: "worker-c" });
      expect(rig.kea?.pid).toBe(pid);
      const acked = lines(agent.log())
        .filter((l) => typeof l["msg"] === "string" && l["msg"].startsWith("Kea configuration applied"))
        .at(-1)?.["version"];

      // A DHCPServer interface that does not exist in Kea's namespace: Kea refuses it, the agent
      // NACKs with Kea's words, the server records it, and Kea keeps serving the last good config.
      writeState(infra("vlan100", { infraComponents: { dhcp: { interface: "net9" } } }), [vmA, vmB, vmC]);
      await agent.waitFor(
        /NACK version \w+, Kea keeps version \w+: [^"]*interface 'net9' doesn't exist in the system/,
        mark,
      );
      const nack = lines(agent.log()).find((l) => typeof l["msg"] === "string" && l["msg"].startsWith("NACK"));
      expect(nack?.["msg"]).toContain(`Kea keeps version ${String(acked)}`);
      await serve.waitFor(/xDS client rejected configuration \(NACK\)/);
      const seen = lines(serve.log()).find((l) => l["msg"] === "xDS client rejected configuration (NACK)");
      expect(seen).toMatchObject({
        node: NODE_ID,
        group: NODE,
        typeUrl: "type.googleapis.com/oooi.dhcp.v1.KeaConfig",
        version: nack?.["version"],
      });
      expect(String(seen?.["error"])).toMatch(/interface 'net9' doesn't exist in the system/);
      const again = await rig.leases([MAC_A, MAC_C]);
      expect(again.map((l) => l.ip)).toEqual(["192.0.2.50", c?.ip]);
      expect(rig.kea?.pid).toBe(pid);

      expect(await agent.stop()).toBe(0);
    });
  },
);
