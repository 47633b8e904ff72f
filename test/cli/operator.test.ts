// `oooi operator` as deployed, minus Kubernetes itself: the built CLI in a child process against the
// fake API server. It converges the example, serves ADS from its watches, turns Envoy ACKs into
// ProxyServer status, and on SIGTERM stops writing and releases its Lease.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/protos.js";
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

describe("oooi operator", () => {
  it("converges, serves ADS, reports the Envoys' ACK in status, and releases its Lease on SIGTERM", async () => {
    const fake = await seededFake();
    const kubeconfig = await writeKubeconfig(fake.url, dir);
    const child = spawn(
      process.execPath,
      [CLI, "operator", "--kubeconfig", kubeconfig, "--xds-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"],
      {
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: "oooi-0" },
      },
    );
    let log = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      log += d;
    });
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    const envoy: EnvoyLikeClient[] = [];
    try {
      await eventually(() => {
        expect(log).toMatch(/xDS \(ADS\) server listening on port \d+/);
      }, 15_000);
      const port = /xDS \(ADS\) server listening on port (\d+)/.exec(log)?.[1] ?? "";

      // Children and workloads appear.
      await eventually(() => {
        expect(
          find(fake, "hostedcluster.densityops.com/v1alpha1", "ProxyServer", "clusters", "tenant-vlan-proxy"),
        ).toBeDefined();
        expect(find(fake, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
      }, 15_000);

      // Two Envoy replicas of the proxy get the example's listeners and ACK them.
      for (const id of ["proxy-a", "proxy-b"]) {
        const c = new EnvoyLikeClient({
          address: `127.0.0.1:${port}`,
          node: { id, cluster: "clusters/tenant-vlan-proxy" },
        });
        envoy.push(c);
        c.connect();
      }
      for (const c of envoy) await c.waitFor(() => c.listeners.has("kube-6443"), "listeners");
      const lds = envoy[0]?.version(LISTENER_TYPE_URL);
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
});
