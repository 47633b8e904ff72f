// `oooi operator` started before its API server, as a pod may be: the built CLI in its default (mTLS)
// mode against a loopback port nothing listens on. It stays up and not ready, then a real
// kube-apiserver starts on that very port and the operator converges — its CA Secret made, the
// example's Infra rendered into a ProxyServer and onto the status page. On main it exited 13 right
// after its first "retrying" line (issue 27, finding 3). Default pacing: no test-only knob.
import { describe, expect, it } from "vitest";
import { CA_SECRET } from "../../src/pki/store.js";
import { CliProcess, until } from "../support/cli.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP, KubeCluster } from "../support/kube/cluster.js";
import { createNamespaces, GROUP_PATH, installCrds, seedExample } from "./support.js";

describe.skipIf(KUBE_SKIP !== undefined)("oooi operator (built CLI) started before its API server", () => {
  it("stays up and not ready while the port is closed, then converges once kube-apiserver listens there", async () => {
    const cluster = await KubeCluster.prepare();
    const op = new CliProcess(
      "operator",
      [
        "--kubeconfig",
        cluster.kubeconfig,
        "--xds-listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        // This test reads /status.json as the API server comes; who may read it is operator-http-auth's test.
        "--http-auth",
        "none",
        "--log-format",
        "json",
      ],
      { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: "oooi-0" },
    );
    try {
      await until(
        () =>
          op.child.exitCode !== null || /API server unreachable \(API discovery\): connect ECONNREFUSED/.test(op.log),
        "the first failed attempt, or an exit",
      );
      expect(op.child.exitCode, op.log).toBe(null);
      const base = /probes and metrics on (http:\/\/[\d.]+:\d+)/.exec(op.log)?.[1] ?? "";
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);

      await cluster.boot({ controllerManager: false });
      // Booting took seconds: on main the process was long gone by now.
      expect(op.child.exitCode, op.log).toBe(null);
      await createNamespaces(cluster, ["oooi-system"]);
      await installCrds(cluster);
      await seedExample(cluster);

      await eventually(() => {
        expect(op.log).toMatch(/API server answered \(API discovery\) after \S+, \d+ attempts/);
      }, 90_000);
      await eventually(async () => {
        expect((await cluster.call("GET", `/api/v1/namespaces/oooi-system/secrets/${CA_SECRET}`)).status).toBe(200);
      }, 60_000);
      await eventually(async () => {
        expect(
          (await cluster.call("GET", `${GROUP_PATH}/namespaces/clusters/proxyservers/tenant-vlan-proxy`)).status,
        ).toBe(200);
      }, 90_000);
      await eventually(async () => {
        const view = (await (await fetch(`${base}/status.json`)).json()) as { infras: { name: string }[] };
        expect(view.infras.map((i) => i.name)).toContain("clusters/tenant-vlan");
      }, 60_000);
      await eventually(async () => {
        expect((await fetch(`${base}/readyz`)).status).toBe(200);
      }, 60_000);

      op.child.kill("SIGTERM");
      expect(await op.exited).toBe(0);
    } finally {
      if (op.child.exitCode === null) op.child.kill("SIGKILL");
      await cluster.stop();
    }
  }, 300_000);
});
