// The operator against a real kube-apiserver + etcd + kube-controller-manager, authenticated as the
// ServiceAccount deploy/ creates and authorized ONLY by deploy/rbac: every request it makes must be
// granted (a 403 fails the test), every object it writes must pass the real schemas, and the real
// machinery it relies on does its part — server-side apply ownership and conflicts, the status
// subresource, the attachment finalizer, and garbage collection of the Infra's children.
import { afterAll, describe, expect, it } from "vitest";
import { ATTACHMENT_FINALIZER } from "../../src/operator/desired/objects.js";
import { MANAGED_SELECTOR } from "../../src/api/labels.js";
import { FIELD_MANAGER, operatorSettings } from "../../src/operator/desired/settings.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import type { RunningOperator } from "../../src/operator/process/options.js";
import { runOperator } from "../../src/operator/process/run.js";
import { Metrics } from "../../src/metrics/index.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { FakeDataPlane, counter } from "../operator/support.js";
import { GROUP_PATH, installCrds, operatorToken, seedExample, useKubeCluster } from "./support.js";
import type { Logger } from "../../src/util/logger.js";

type Obj = {
  metadata: {
    name: string;
    generation?: number;
    finalizers?: string[];
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    managedFields?: { manager: string; operation: string; subresource?: string }[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};
type Items = { items: Obj[] };

describe.skipIf(KUBE_SKIP !== undefined)("operator on a real API server, as deploy/'s ServiceAccount", () => {
  let token = "";
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    // After the CRDs, so its garbage collector watches the Infra's kinds from the start.
    await cluster.startControllerManager();
    await seedExample(cluster);
    token = await operatorToken(cluster);
  });

  // Everything the operator said at warn or above: the evidence when a request is refused.
  const complaints: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (o, m) => {
      complaints.push(`${m} ${JSON.stringify(o)}`);
    },
    error: (o, m) => {
      complaints.push(`${m} ${JSON.stringify(o)}`);
    },
  };
  const metrics = new Metrics().recorder(OPERATOR_METRICS);
  const dataPlane = new FakeDataPlane();
  let op: RunningOperator | undefined;
  afterAll(async () => {
    await op?.close();
  });

  /** Fails when the API server refused or rejected any request so far. */
  async function expectNothingRefused(): Promise<void> {
    for (const code of ["401", "403", "400", "422"]) {
      expect(
        await counter(metrics, "oooi_kube_requests_total", `code="${code}"`),
        `HTTP ${code} seen:\n${complaints.join("\n")}`,
      ).toBe(0);
    }
  }

  const get = <T = Obj>(path: string): Promise<T> => kube().must<T>("GET", path);

  it("converges the example with only deploy/'s RBAC: children, workloads, NetworkPolicies, finalizers, Lease", async () => {
    op = runOperator({
      kubeConfig: kube().kubeConfigFor("operator", token),
      settings: operatorSettings({ namespace: "oooi-system" }),
      dataPlane,
      // The Services' ClusterIPs lead nowhere here (no kube-proxy); test/operator/dns-ready.test.ts asks a real CoreDNS.
      dnsProbe: false,
      logger,
      metrics,
      resyncMs: 500,
      leaseTiming: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 200 },
      backoff: { initialMs: 50, maxMs: 500 },
      watch: { timeoutSeconds: 30, discoveryIntervalMs: 1000 },
    });
    await op.ready;
    await eventually(() => {
      expect(op?.isLeader()).toBe(true);
    }, 20_000);
    await eventually(async () => {
      for (const kind of ["dhcpservers", "dnsservers", "proxyservers"]) {
        const l = await get<Items>(`${GROUP_PATH}/namespaces/clusters/${kind}`);
        expect(
          l.items.map((o) => o.metadata.name),
          kind,
        ).toHaveLength(1);
      }
      const deployments = await get<Items>("/apis/apps/v1/namespaces/clusters/deployments");
      expect(deployments.items.map((d) => d.metadata.name).sort()).toEqual([
        "tenant-vlan-dhcp",
        "tenant-vlan-dns",
        "tenant-vlan-proxy",
      ]);
      for (const ns of ["clusters-alpha", "clusters-beta"]) {
        await get(`/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/allow-infrastructure`);
      }
      for (const name of ["alpha", "beta"]) {
        const a = await get(`${GROUP_PATH}/namespaces/clusters/infraclusterattachments/${name}`);
        expect(a.metadata.finalizers).toContain(ATTACHMENT_FINALIZER);
      }
    }, 30_000);
    const lease = await get<{ spec: { holderIdentity?: string } }>(
      "/apis/coordination.k8s.io/v1/namespaces/oooi-system/leases/oooi-operator",
    );
    expect(lease.spec.holderIdentity).toBeTruthy();
    await expectNothingRefused();
  }, 120_000);

  it("writes status through the status subresource: observedGeneration follows, generation does not move", async () => {
    // No kubelets here: play the Deployment controller's part by writing the workloads' status.
    const deployments = await get<Items>("/apis/apps/v1/namespaces/clusters/deployments");
    for (const d of deployments.items) {
      await kube().must("PATCH", `/apis/apps/v1/namespaces/clusters/deployments/${d.metadata.name}/status`, {
        contentType: "application/merge-patch+json",
        body: {
          status: {
            observedGeneration: d.metadata.generation,
            replicas: 1,
            updatedReplicas: 1,
            readyReplicas: 1,
            availableReplicas: 1,
            conditions: [
              {
                type: "Available",
                status: "True",
                reason: "Test",
                message: "",
                lastTransitionTime: "2025-01-01T00:00:00Z",
                lastUpdateTime: "2025-01-01T00:00:00Z",
              },
            ],
          },
        },
      });
    }
    await eventually(async () => {
      const infra = await get(`${GROUP_PATH}/namespaces/clusters/infras/tenant-vlan`);
      expect(infra.status?.["observedGeneration"]).toBe(infra.metadata.generation);
      expect(infra.status).toMatchObject({
        componentStatus: { proxyReady: true, dnsReady: true },
        attachments: { total: 2 },
      });
      expect(infra.metadata.generation).toBe(1);
      const fields = infra.metadata.managedFields ?? [];
      expect(fields.find((f) => f.manager === FIELD_MANAGER && f.subresource === "status")?.operation).toBe("Apply");
    }, 30_000);
    await expectNothingRefused();
  }, 120_000);

  it("publishes the HostedCluster's Route hostnames: attachment status.endpoints names each source, the DNS ConfigMap answers them", async () => {
    const ignition = "ignition-server-clusters-alpha.apps.mgmt.example.net";
    const konnectivity = "konnectivity-alpha.hcp.example.net";
    // The test's HostedCluster CRD has no status subresource: status is written with the object.
    await kube().must("PATCH", "/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/hostedclusters/alpha", {
      contentType: "application/merge-patch+json",
      body: {
        spec: {
          services: [
            { service: "Ignition", servicePublishingStrategy: { type: "Route" } },
            {
              service: "Konnectivity",
              servicePublishingStrategy: { type: "Route", route: { hostname: konnectivity } },
            },
          ],
        },
        status: { ignitionEndpoint: ignition },
      },
    });
    await eventually(async () => {
      const a = await get(`${GROUP_PATH}/namespaces/clusters/infraclusterattachments/alpha`);
      expect(a.status?.["endpoints"]).toEqual([
        { name: "api", hostname: "api.alpha.clusters.example.com", port: 6443, source: "convention" },
        { name: "oauth", hostname: "oauth.alpha.clusters.example.com", port: 443, source: "convention" },
        { name: "ignition", hostname: ignition, port: 443, source: "HostedCluster status.ignitionEndpoint" },
        {
          name: "konnectivity",
          hostname: konnectivity,
          port: 443,
          source: "HostedCluster spec.services[Konnectivity].servicePublishingStrategy.route.hostname",
        },
      ]);
      const cms = await get<{ items: { data?: Record<string, string> }[] }>(
        `/api/v1/namespaces/clusters/configmaps?labelSelector=${encodeURIComponent(MANAGED_SELECTOR)}`,
      );
      const zones = cms.items.flatMap((c) => Object.values(c.data ?? {})).join("\n");
      expect(zones).toContain(ignition);
      expect(zones).toContain(konnectivity);
      expect(zones).not.toContain("ignition.alpha.clusters.example.com");
    }, 30_000);
    await expectNothingRefused();
  }, 120_000);

  it("server-side apply: a manager applying the operator's field is refused with a conflict naming it; its own fields survive the operator's next apply", async () => {
    const path = `${GROUP_PATH}/namespaces/clusters/dhcpservers/tenant-vlan-dhcp`;
    const before = await get(path);
    expect(
      before.metadata.managedFields?.find((f) => f.manager === FIELD_MANAGER && f.subresource === undefined)?.operation,
    ).toBe("Apply");
    const leaseTime = (before.spec?.["leaseConfig"] as { leaseTime?: string } | undefined)?.leaseTime;
    expect(leaseTime).toBe("1h");
    const someone = (spec: unknown, labels?: Record<string, string>, force = false) =>
      kube().call<{ reason?: string; message?: string }>("PATCH", path, {
        contentType: "application/apply-patch+yaml",
        query: { fieldManager: "someone-else", ...(force ? { force: "true" } : {}) },
        body: {
          apiVersion: "hostedcluster.densityops.com/v1alpha1",
          kind: "DHCPServer",
          metadata: { name: "tenant-vlan-dhcp", namespace: "clusters", ...(labels === undefined ? {} : { labels }) },
          ...(spec === undefined ? {} : { spec }),
        },
      });

    const conflict = await someone({ leaseConfig: { leaseTime: "2h" } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.reason).toBe("Conflict");
    expect(conflict.body.message).toContain(`conflict with "${FIELD_MANAGER}"`);
    expect(conflict.body.message).toContain(".spec.leaseConfig.leaseTime");

    // A field nobody else owns is the other manager's; the operator's next apply leaves it alone.
    expect((await someone(undefined, { "team.example.com/owner": "netops" })).status).toBe(200);
    await kube().must("PATCH", `${GROUP_PATH}/namespaces/clusters/infras/tenant-vlan`, {
      contentType: "application/merge-patch+json",
      body: { spec: { infraComponents: { dhcp: { leaseTime: "30m" } } } },
    });
    await eventually(async () => {
      const after = await get(path);
      expect((after.spec?.["leaseConfig"] as { leaseTime?: string }).leaseTime).toBe("30m");
      expect(after.metadata.labels?.["team.example.com/owner"]).toBe("netops");
      expect(after.metadata.managedFields?.map((f) => f.manager)).toEqual(
        expect.arrayContaining([FIELD_MANAGER, "someone-else"]),
      );
    }, 30_000);
    await expectNothingRefused();
  }, 120_000);

  it("holds a deleted attachment until its NetworkPolicy is gone, then the real API server removes it", async () => {
    await kube().must("DELETE", `${GROUP_PATH}/namespaces/clusters/infraclusterattachments/alpha`);
    await eventually(async () => {
      const r = await kube().call("GET", `${GROUP_PATH}/namespaces/clusters/infraclusterattachments/alpha`);
      expect(r.status).toBe(404);
    }, 30_000);
    expect(
      (
        await kube().call(
          "GET",
          "/apis/networking.k8s.io/v1/namespaces/clusters-alpha/networkpolicies/allow-infrastructure",
        )
      ).status,
    ).toBe(404);
    // beta is untouched.
    expect(
      (
        await kube().call(
          "GET",
          "/apis/networking.k8s.io/v1/namespaces/clusters-beta/networkpolicies/allow-infrastructure",
        )
      ).status,
    ).toBe(200);
    await expectNothingRefused();
  }, 120_000);

  it("deleting the Infra: kube-controller-manager's garbage collector removes every child it owns", async () => {
    const owned = async (): Promise<string[]> => {
      const names: string[] = [];
      for (const path of [
        `${GROUP_PATH}/namespaces/clusters/dhcpservers`,
        `${GROUP_PATH}/namespaces/clusters/dnsservers`,
        `${GROUP_PATH}/namespaces/clusters/proxyservers`,
        "/apis/apps/v1/namespaces/clusters/deployments",
        "/api/v1/namespaces/clusters/configmaps",
        "/api/v1/namespaces/clusters/services",
        "/apis/k8s.cni.cncf.io/v1/namespaces/clusters/network-attachment-definitions",
      ]) {
        const l = await kube().must<Items>("GET", path, { query: { labelSelector: MANAGED_SELECTOR } });
        names.push(...l.items.map((o) => `${path.split("/").pop() ?? ""}/${o.metadata.name}`));
      }
      return names.sort();
    };
    expect((await owned()).length).toBeGreaterThan(6);
    await kube().must("DELETE", `${GROUP_PATH}/namespaces/clusters/infras/tenant-vlan`);
    await eventually(async () => {
      expect(await owned()).toEqual([]);
    }, 60_000);
    // The Infra's own NAD (not the operator's) stays.
    expect(
      (await kube().call("GET", "/apis/k8s.cni.cncf.io/v1/namespaces/clusters/network-attachment-definitions/vlan100"))
        .status,
    ).toBe(200);
    await expectNothingRefused();
  }, 120_000);
});
