// `oooi operator` as deployed, on a real control plane: the built CLI in a child process with a
// kubeconfig for deploy/'s ServiceAccount token. It converges the example, turns an Envoy's ACK into
// ProxyServer status, never has a request refused (its own /metrics says so), and on SIGTERM
// releases its Lease.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { httpGet } from "../support/http-get.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { metricsReaderBindingCommand } from "../../src/operator/desired/permissions.js";
import {
  createNamespaces,
  GROUP_PATH,
  installCrds,
  operatorToken,
  seedExample,
  serviceAccountToken,
  useKubeCluster,
} from "./support.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

describe.skipIf(KUBE_SKIP !== undefined)("oooi operator (built CLI) on a real API server", () => {
  let kubeconfig = "";
  // The page and /metrics are read as Prometheus would: a ServiceAccount bound to oooi-metrics-reader.
  let reader = "";
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    await seedExample(cluster);
    kubeconfig = cluster.writeKubeconfig("oooi-operator", await operatorToken(cluster));
    await createNamespaces(cluster, ["monitoring"]);
    await cluster.mustKubectl(["create", "serviceaccount", "prometheus", "-n", "monitoring"]);
    await cluster.mustKubectl(metricsReaderBindingCommand("monitoring:prometheus").split(" ").slice(1));
    const token = await serviceAccountToken(cluster, "monitoring", "prometheus");
    reader = `Bearer ${token}`;
  });

  it("converges, reports the Envoy's ACK, is refused nothing, and releases its Lease on SIGTERM", async () => {
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
        "--xds-plaintext",
      ],
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
    let envoy: EnvoyLikeClient | undefined;
    try {
      await eventually(() => {
        expect(log).toMatch(/probes and metrics on https:\/\/[\d.]+:\d+/);
        expect(log).toMatch(/xDS \(ADS\) server listening on port \d+/);
      }, 20_000);
      const xdsPort = /xDS \(ADS\) server listening on port (\d+)/.exec(log)?.[1] ?? "";
      const metricsUrl = `${/probes and metrics on (https:\/\/[\d.]+:\d+)/.exec(log)?.[1] ?? ""}/metrics`;

      await eventually(async () => {
        expect(
          (await kube().call("GET", `${GROUP_PATH}/namespaces/clusters/proxyservers/tenant-vlan-proxy`)).status,
        ).toBe(200);
      }, 30_000);
      envoy = new EnvoyLikeClient({
        address: `127.0.0.1:${xdsPort}`,
        node: { id: "proxy-a", cluster: "clusters/tenant-vlan-proxy" },
      });
      envoy.connect();
      const e = envoy;
      await e.waitFor(() => e.listeners.has("kube-6443"), "listeners");
      expect(e.version(LISTENER_TYPE_URL)).not.toBe("");
      await eventually(async () => {
        const ps = await kube().must<{ status?: { ackedVersion?: string } }>(
          "GET",
          `${GROUP_PATH}/namespaces/clusters/proxyservers/tenant-vlan-proxy`,
        );
        expect(ps.status?.ackedVersion).toBeTruthy();
      }, 30_000);
      const lease = await kube().must<{ spec: { holderIdentity?: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/oooi-system/leases/oooi-operator",
      );
      expect(lease.spec.holderIdentity).toBe("oooi-0");

      // The status page on the same port: the Infra and the Envoy that ACKed, as the page draws them.
      const statusUrl = metricsUrl.replace(/\/metrics$/, "/status.json");
      await eventually(async () => {
        const view = JSON.parse((await httpGet(statusUrl, { authorization: reader })).body) as {
          infras: { name: string }[];
          nodeGroups: { group: string; clients: { id: string; types: { state: string }[] }[] }[];
        };
        expect(view.infras.map((i) => i.name)).toContain("clusters/tenant-vlan");
        const client = view.nodeGroups.find((g) => g.group === "clusters/tenant-vlan-proxy")?.clients[0];
        expect(client?.id).toBe("proxy-a");
        expect(client?.types.some((t) => t.state === "SYNCED")).toBe(true);
      }, 30_000);
      expect((await httpGet(metricsUrl.replace(/\/metrics$/, "/"), { authorization: reader })).type).toMatch(
        /^text\/html/,
      );

      const { body: exposition } = await httpGet(metricsUrl, { authorization: reader });
      const refused = exposition
        .split("\n")
        .filter(
          (l) => l.startsWith("oooi_kube_requests_total{") && /code="(401|403|400|422)"/.test(l) && !l.endsWith(" 0"),
        );
      expect(refused, log).toEqual([]);
      expect(exposition).toMatch(/oooi_kube_requests_total\{method="PATCH",code="200"\} [1-9]/);

      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      const after = await kube().must<{ spec: { holderIdentity?: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/oooi-system/leases/oooi-operator",
      );
      expect(after.spec.holderIdentity ?? "").toBe("");
    } finally {
      envoy?.close();
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 120_000);
});
