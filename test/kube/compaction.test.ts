// A watch that resumes after etcd compaction, for real. The operator reaches a real API server
// (watch cache off, so etcd itself answers watches) through a relay the test cuts. While it is cut
// the Infra changes, and etcd's history is compacted past every revision the operator holds; on
// reconnecting, its watches from those revisions get 410 Gone from the API server, it re-lists,
// and only the re-list can tell it about the change, which it then applies.
import { afterAll, describe, expect, it } from "vitest";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import { runOperator } from "../../src/operator/process/run.js";
import type { RunningOperator } from "../../src/operator/process/options.js";
import { Metrics } from "../../src/metrics/index.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { TcpRelay } from "../support/kube/relay.js";
import { FakeDataPlane, counter, quietLogger } from "../operator/support.js";
import {
  GROUP_PATH,
  createNamespaces,
  installCrds,
  list,
  operatorToken,
  seedExample,
  useKubeCluster,
} from "./support.js";

const DHCP = `${GROUP_PATH}/namespaces/clusters/dhcpservers/tenant-vlan-dhcp`;

describe.skipIf(KUBE_SKIP !== undefined)("watch after etcd compaction", () => {
  let token = "";
  const kube = useKubeCluster({ controllerManager: false, watchCache: false }, async (cluster) => {
    await installCrds(cluster);
    await seedExample(cluster);
    await createNamespaces(cluster, ["churn"]);
    token = await operatorToken(cluster);
  });
  let relay: TcpRelay | undefined;
  let op: RunningOperator | undefined;
  afterAll(async () => {
    await op?.close();
    await relay?.stop();
  }, 120_000);

  it("gets 410 Gone from the real API server, re-lists, and acts on what changed meanwhile", async () => {
    const leaseTime = async (): Promise<string | undefined> =>
      (await kube().must<{ spec?: { leaseConfig?: { leaseTime?: string } } }>("GET", DHCP)).spec?.leaseConfig
        ?.leaseTime;
    relay = await TcpRelay.start({ host: "127.0.0.1", port: Number(new URL(kube().url).port) });
    const metrics = new Metrics().recorder(OPERATOR_METRICS);
    op = runOperator({
      kubeConfig: kube().kubeConfigFor("operator", token, `https://127.0.0.1:${String(relay.port)}`),
      settings: operatorSettings({ namespace: "oooi-system" }),
      dataPlane: new FakeDataPlane(),
      logger: quietLogger,
      metrics,
      leaderElection: false,
      debounceMs: 20,
      resyncMs: 500,
      backoff: { initialMs: 50, maxMs: 300 },
      watch: { timeoutSeconds: 60, discoveryIntervalMs: 1000 },
    });
    await op.ready;
    await eventually(async () => {
      expect(await leaseTime()).toBe("1h");
    }, 30_000);
    expect(await counter(metrics, "oooi_watch_restarts_total", 'reason="expired"')).toBe(0);

    relay.cut();
    await kube().must("PATCH", `${GROUP_PATH}/namespaces/clusters/infras/tenant-vlan`, {
      contentType: "application/merge-patch+json",
      body: { spec: { infraComponents: { dhcp: { leaseTime: "45m" } } } },
    });
    // Unrelated writes move etcd's revision on, then compaction drops the history before it.
    await kube().mustKubectl(
      ["apply", "--server-side", "-f", "-"],
      list(
        Array.from({ length: 5 }, (_, i) => ({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `churn-${String(i)}`, namespace: "churn" },
          data: { i: String(i) },
        })),
      ),
    );
    const compactedAt = await kube().compactEtcd();
    expect(compactedAt).toBeGreaterThan(0);
    // The history really is gone: the API server itself refuses a watch from before the compaction.
    const stale = await kube().call<{ code?: number; reason?: string }>("GET", `${GROUP_PATH}/infras`, {
      query: { watch: "true", resourceVersion: "1", timeoutSeconds: "1" },
    });
    expect(JSON.stringify(stale.body)).toMatch(/"code":410/);
    relay.restore();

    await eventually(async () => {
      expect(await counter(metrics, "oooi_watch_restarts_total", 'resource="infras",reason="expired"')).toBeGreaterThan(
        0,
      );
      expect(await leaseTime()).toBe("45m");
    }, 30_000);
  }, 120_000);
});
