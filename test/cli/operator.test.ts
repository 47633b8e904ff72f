// `oooi operator` as deployed, minus Kubernetes itself: the built CLI in a child process against the
// fake API server. It converges the example, serves ADS from its watches, turns Envoy ACKs into
// ProxyServer status, and on SIGTERM stops writing and releases its Lease.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { credentials } from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { eventually, writeKubeconfig, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { seededFake } from "../operator/support.js";

/** The object, or undefined when the fake does not hold it. */
function find(
  fake: FakeApiServer,
  apiVersion: string,
  kind: string,
  ns: string,
  name: string,
): Record<string, unknown> | undefined {
  const k = fake.store.kindByGvk(apiVersion, kind);
  if (k === undefined) throw new Error(`fake does not serve ${apiVersion} ${kind}`);
  try {
    return fake.store.get(k, ns, name);
  } catch {
    return undefined;
  }
}

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const dir = mkdtempSync(join(tmpdir(), "oooi-operator-cli-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The built operator as a pod runs it, against `fake`; its stderr (pino JSON lines) accumulates in log(). */
interface SpawnedOperator {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  log(): string;
  /** The ADS port it logged, once it has. */
  port(): string | undefined;
}

async function spawnOperator(
  fake: FakeApiServer,
  pod: string,
  extra: readonly string[] = [],
): Promise<SpawnedOperator> {
  const kubeconfig = await writeKubeconfig(fake.url, dir);
  const child = spawn(
    process.execPath,
    [
      CLI,
      "operator",
      "--kubeconfig",
      kubeconfig,
      "--xds-listen",
      "127.0.0.1:0",
      "--http-listen",
      "127.0.0.1:0",
      ...extra,
    ],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: pod },
    },
  );
  let log = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    log += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  return {
    child,
    exited,
    log: () => log,
    port: () => /xDS \(ADS\) server listening on port (\d+)/.exec(log)?.[1],
  };
}

describe("oooi operator", () => {
  it("converges, serves ADS, reports the Envoys' ACK in status, and releases its Lease on SIGTERM", async () => {
    const fake = await seededFake();
    const op = await spawnOperator(fake, "oooi-0");
    const { child, exited } = op;
    const envoy: EnvoyLikeClient[] = [];
    try {
      await eventually(() => {
        expect(op.port()).toBeDefined();
      }, 15_000);
      const port = op.port() ?? "";

      // Children and workloads appear.
      await eventually(() => {
        expect(
          find(fake, "hostedcluster.densityops.com/v1alpha1", "ProxyServer", "clusters", "tenant-vlan-proxy"),
        ).toBeDefined();
        expect(find(fake, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
      }, 15_000);

      // mTLS by default: the proxy's client certificate is in the Secret its pod mounts.
      await eventually(() => {
        expect(find(fake, "v1", "Secret", "clusters", "tenant-vlan-proxy-xds-tls")).toBeDefined();
      }, 15_000);
      const data = (find(fake, "v1", "Secret", "clusters", "tenant-vlan-proxy-xds-tls")?.["data"] ?? {}) as Record<
        string,
        string
      >;
      const pem = (k: string): Buffer => Buffer.from(data[k] ?? "", "base64");
      const creds = credentials.createSsl(pem("ca.crt"), pem("tls.key"), pem("tls.crt"), {
        checkServerIdentity: (_host: string, cert: PeerCertificate) =>
          checkServerIdentity("oooi-xds.oooi-system.svc", cert),
      });
      // Plaintext is refused: no listener without a certificate.
      const plain = new EnvoyLikeClient({
        address: `127.0.0.1:${port}`,
        node: { id: "plain", cluster: "clusters/tenant-vlan-proxy" },
      });
      envoy.push(plain);
      plain.connect();

      // Two Envoy replicas of the proxy get the example's listeners and ACK them.
      for (const id of ["proxy-a", "proxy-b"]) {
        const c = new EnvoyLikeClient({
          address: `127.0.0.1:${port}`,
          node: { id, cluster: "clusters/tenant-vlan-proxy" },
          credentials: creds,
        });
        envoy.push(c);
        c.connect();
      }
      for (const c of envoy.slice(1)) await c.waitFor(() => c.listeners.has("kube-6443"), "listeners");
      expect(plain.listeners.size).toBe(0);
      const lds = envoy[1]?.version(LISTENER_TYPE_URL);
      expect(lds).not.toBe("");

      // The ACKs show up on the ProxyServer's status.
      await eventually(() => {
        const ps = find(
          fake,
          "hostedcluster.densityops.com/v1alpha1",
          "ProxyServer",
          "clusters",
          "tenant-vlan-proxy",
        ) as { status?: { ackedVersion?: string } } | undefined;
        expect(ps?.status?.ackedVersion).toBeTruthy();
      }, 15_000);
      expect(find(fake, "coordination.k8s.io/v1", "Lease", "oooi-system", "oooi-operator")).toMatchObject({
        spec: { holderIdentity: "oooi-0" },
      });

      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      const lease = find(fake, "coordination.k8s.io/v1", "Lease", "oooi-system", "oooi-operator") as
        { spec?: { holderIdentity?: string } } | undefined;
      expect(lease?.spec?.holderIdentity ?? "").toBe("");
    } finally {
      for (const c of envoy) c.close();
      if (child.exitCode === null) child.kill("SIGKILL");
      await fake.stop();
    }
  });

  it("logs a change that moved a group's versions as one line, then its clients' ACKs (the change feed)", async () => {
    const fake = await seededFake();
    const op = await spawnOperator(fake, "oooi-0", ["--xds-plaintext"]);
    type Line = { level: number; msg: string; [k: string]: unknown };
    const changes = (): Line[] =>
      op
        .log()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Line)
        .filter((l) => /^change \d+: /.test(l.msg));
    let client: EnvoyLikeClient | undefined;
    try {
      await eventually(() => {
        expect(op.port()).toBeDefined();
        expect(changes().length).toBeGreaterThan(0);
      }, 15_000);
      client = new EnvoyLikeClient({
        address: `127.0.0.1:${op.port() ?? ""}`,
        node: { id: "proxy-a", cluster: "clusters/tenant-vlan-proxy" },
      });
      client.connect();
      const c = client;
      await c.waitFor(() => c.listeners.has("kube-6443"), "listeners");
      const before = changes().length;
      // A worker leaves: its Machine and its VMI are deleted.
      for (const kind of ["Machine", "VirtualMachineInstance"]) {
        const k = fake.store.kindByGvk(kind === "Machine" ? "cluster.x-k8s.io/v1beta1" : "kubevirt.io/v1", kind);
        if (k === undefined) throw new Error(`fake does not serve ${kind}`);
        fake.store.delete(k, "clusters-alpha", "alpha-workers-1", {});
      }
      // Each delete is a batch of its own (no coalescing window); the one that moved LDS is logged.
      const gone = () =>
        changes()
          .slice(before)
          .find((l) => /alpha-workers-1 removed/.test(l.msg));
      await eventually(() => {
        expect(gone()).toBeDefined();
      }, 15_000);
      const line = gone();
      expect(line?.msg).toMatch(/(Machine|VirtualMachineInstance) clusters-alpha\/alpha-workers-1 removed/);
      expect(line?.msg).toMatch(/rebuilt Infra clusters\/tenant-vlan → .*clusters\/tenant-vlan-proxy: LDS /);
      expect(line?.["clients"]).toBe(1);
      await eventually(() => {
        expect(changes().find((l) => l["change"] === line?.["change"] && /ACKed by/.test(l.msg))).toMatchObject({
          level: 30,
          acked: 1,
          clients: 1,
        });
      }, 15_000);
    } finally {
      client?.close();
      op.child.kill("SIGTERM");
      await op.exited;
      await fake.stop();
    }
  });

  it("on SIGTERM with the API server unresponsive, still closes its streams and exits within a bound", async () => {
    const fake = await seededFake();
    const op = await spawnOperator(fake, "oooi-1", ["--xds-plaintext"]);
    const { child, exited } = op;
    let envoy: EnvoyLikeClient | undefined;
    let stopped = false;
    let silent: Server | undefined;
    const held: Socket[] = [];
    try {
      await eventually(() => {
        expect(op.port()).toBeDefined();
        expect(find(fake, "coordination.k8s.io/v1", "Lease", "oooi-system", "oooi-operator")).toMatchObject({
          spec: { holderIdentity: "oooi-1" },
        });
        expect(
          find(fake, "hostedcluster.densityops.com/v1alpha1", "ProxyServer", "clusters", "tenant-vlan-proxy"),
        ).toBeDefined();
      }, 15_000);
      const port = op.port() ?? "";
      const e = new EnvoyLikeClient({
        address: `127.0.0.1:${port}`,
        node: { id: "proxy-a", cluster: "clusters/tenant-vlan-proxy" },
      });
      envoy = e;
      e.connect();
      await e.waitFor(() => e.listeners.has("kube-6443"), "listeners");
      const disconnected = new Promise((r) => e.events.once("disconnected", r));

      // The API server goes silent: its address still accepts connections but never answers.
      const apiPort = Number(new URL(fake.url).port);
      await fake.stop();
      stopped = true;
      silent = createServer((socket) => {
        held.push(socket);
      });
      const s = silent;
      await new Promise<void>((resolve) => s.listen(apiPort, "127.0.0.1", resolve));
      child.kill("SIGTERM");
      // A bound, not a measurement: the process must be gone well before a kubelet's SIGKILL.
      const code = await Promise.race([
        exited,
        new Promise<string>((r) =>
          setTimeout(() => {
            r("still running");
          }, 10_000),
        ),
      ]);
      expect(code, op.log()).not.toBe("still running");
      expect(code).not.toBeNull();
      console.log(
        op
          .log()
          .split("\n")
          .filter((l) => /shut|abandon|exiting|release|report/.test(l))
          .join("\n"),
      );
      await disconnected;
    } finally {
      envoy?.close();
      if (child.exitCode === null) child.kill("SIGKILL");
      if (!stopped) await fake.stop();
      for (const socket of held) socket.destroy();
      silent?.close();
    }
  }, 40_000);
});

// A kubelet's SIGTERM can land in any phase of start-up; each must end in a clean exit, never a
// process that ignores it (held until SIGKILL) nor one the default action kills (its Lease held).
describe("oooi operator: SIGTERM during start-up", () => {
  const phases: readonly { when: string; line: RegExp; says: RegExp; apiDown?: true }[] = [
    {
      when: "the API server does not answer yet",
      apiDown: true,
      line: /API server unreachable \(API discovery\)/,
      says: /shutting down before start-up finished/,
    },
    { when: "the xDS server is starting", line: /--xds-plaintext: xDS is served without TLS/, says: /shutting down/ },
    {
      when: "the xDS server listens, the watches are starting",
      line: /xDS \(ADS\) server listening/,
      says: /shutting down: writes stop/,
    },
    { when: "every watch has listed", line: /every watched resource listed/, says: /shutting down: writes stop/ },
  ];
  it.each(phases)(
    "when $when: exits 0 and says it is shutting down",
    async ({ line, says, apiDown }) => {
      const fake = await seededFake();
      if (apiDown === true) fake.failNext(1_000, { match: { path: "/apis" }, code: 503 });
      const op = await spawnOperator(fake, "oooi-2", ["--xds-plaintext"]);
      try {
        await eventually(() => {
          expect(op.log()).toMatch(line);
        }, 15_000);
        op.child.kill("SIGTERM");
        const code = await Promise.race([
          op.exited,
          new Promise<string>((r) =>
            setTimeout(() => {
              r("still running");
            }, 10_000),
          ),
        ]);
        expect(code, op.log()).toBe(0);
        expect(op.log()).toMatch(says);
      } finally {
        if (op.child.exitCode === null) op.child.kill("SIGKILL");
        await fake.stop();
      }
    },
    30_000,
  );
});

describe("oooi operator: a kubeconfig it cannot use", () => {
  /** Runs the built CLI to its exit; the operator must stop before it dials anything. */
  const run = (args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [CLI, "operator", "--xds-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", ...args],
        {
          stdio: ["ignore", "ignore", "pipe"],
          env,
        },
      );
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.on("exit", (code) => {
        resolve({ code, stderr });
      });
    });
  // No $KUBECONFIG, no pod variables, a home without ~/.kube.
  const bare = (): NodeJS.ProcessEnv => ({
    PATH: process.env["PATH"],
    HOME: join(dir, "empty-home"),
    POD_NAMESPACE: "oooi-system",
  });

  it("names the file, the user and the field; exit 2, no stack trace", async () => {
    const path = join(dir, "bad-exec.kubeconfig");
    writeFileSync(
      path,
      JSON.stringify({
        "current-context": "c",
        clusters: [{ name: "k", cluster: { server: "https://127.0.0.1:1" } }],
        users: [{ name: "dev", user: { exec: { command: "get-token" } } }],
        contexts: [{ name: "c", context: { cluster: "k", user: "dev" } }],
      }),
    );
    const { code, stderr } = await run(["--kubeconfig", path], bare());
    expect(code).toBe(2);
    expect(stderr).toContain(`kubeconfig ${path}, user "dev": exec.apiVersion must be client.authentication.k8s.io/v1`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("none given and none found: says every way to give one", async () => {
    const { code, stderr } = await run([], bare());
    expect(code).toBe(2);
    expect(stderr).toMatch(/no cluster configuration: pass --kubeconfig, set \$KUBECONFIG/);
  });
});
