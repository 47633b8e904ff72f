// End to end against the fake API server: the operator converges the example (children, workloads,
// NADs, Services, NetworkPolicy, finalizers, status), follows Machine changes into onState, reports
// component readiness and NACKs, keeps an invalid Infra from disturbing a valid one, and only makes
// requests its RBAC grants.
import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/api/schema.js";
import { desiredState } from "../../src/operator/desired/index.js";
import { ATTACHMENT_FINALIZER, ATTACHMENTS_ANNOTATION } from "../../src/operator/desired/objects.js";
import { allPermissions } from "../../src/operator/desired/permissions.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { APPLIED_HASH_ANNOTATION, desiredHash } from "../../src/operator/writing/applied.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { markDeploymentsAvailable, readyOf, seededFake, startOperator, stored, storedList } from "./support.js";

let fake: FakeApiServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await fake?.stop();
  close = undefined;
  fake = undefined;
});

describe("operator against the fake API server", () => {
  it("converges the example: every desired object applied with its content, finalizers, status", async () => {
    fake = await seededFake();
    const f = fake;
    const { op, states, dataPlane } = startOperator(f);
    close = () => op.close();
    await op.ready;
    await eventually(() => {
      expect(op.isLeader()).toBe(true);
    });

    // Every object desiredState computes from the last state is in the cluster, applied from that content.
    await eventually(() => {
      const last = states.last();
      expect(last).toBeDefined();
      if (last === undefined) return;
      const nadConfig = (
        stored(f, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "clusters", "vlan100")?.["spec"] as {
          config: string;
        }
      ).config;
      const want = desiredState({
        state: last.state,
        outputs: last.outputs,
        settings: operatorSettings({ namespace: "oooi-system" }),
        networkAttachments: new Map([["clusters/vlan100", nadConfig]]),
      });
      const all = [...want.infras.flatMap((i) => i.objects), ...want.crossNamespace];
      expect(all.length).toBeGreaterThan(15);
      for (const o of all) {
        const live = stored(f, o.apiVersion, o.kind, o.metadata.namespace ?? "", o.metadata.name);
        expect(live, `${o.kind} ${o.metadata.name}`).toBeDefined();
        expect(
          (live?.["metadata"] as { annotations?: Record<string, string> }).annotations?.[APPLIED_HASH_ANNOTATION],
        ).toBe(desiredHash(o));
      }
    }, 15_000);

    // What a reader checks by hand: kinds, the copied NAD with static IPAM, the policy, the finalizers.
    const names = (kind: string, apiVersion: string) =>
      storedList(f, apiVersion, kind, "clusters").map((o) => (o["metadata"] as { name: string }).name);
    expect(names("Deployment", "apps/v1")).toEqual(["tenant-vlan-dhcp", "tenant-vlan-dns", "tenant-vlan-proxy"]);
    expect(names("ProxyServer", API_VERSION)).toEqual(["tenant-vlan-proxy"]);
    const nad = stored(f, "k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "clusters", "tenant-vlan-dns");
    expect(JSON.parse((nad?.["spec"] as { config: string }).config)).toMatchObject({
      type: "bridge",
      vlan: 100,
      ipam: { type: "static", addresses: [{ address: "127.0.8.3/24" }] },
    });
    const np = stored(f, "networking.k8s.io/v1", "NetworkPolicy", "clusters-alpha", "allow-infrastructure");
    expect((np?.["metadata"] as { annotations: Record<string, string> }).annotations[ATTACHMENTS_ANNOTATION]).toBe(
      "clusters/alpha",
    );
    for (const a of storedList(f, API_VERSION, "InfraClusterAttachment", "clusters")) {
      expect((a["metadata"] as { finalizers?: string[] }).finalizers).toEqual([ATTACHMENT_FINALIZER]);
    }
    const cm = stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns");
    expect(Object.keys((cm?.["data"] ?? {}) as object)).toContain("Corefile");

    // Workloads not available yet: the Infra is not Ready, and says why.
    await eventually(() => {
      const infra = stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");
      expect(readyOf(infra)).toMatchObject({ status: "False", reason: "ComponentsNotReady", observedGeneration: 1 });
      expect((infra?.["status"] as Record<string, unknown>)["componentStatus"]).toEqual({
        dhcpReady: false,
        dnsReady: false,
        proxyReady: false,
      });
    });
    const firstTransition = readyOf(stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan"))?.["lastTransitionTime"];

    markDeploymentsAvailable(f);
    await eventually(() => {
      const infra = stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");
      expect(readyOf(infra)).toMatchObject({ status: "True", reason: "ReconciliationSucceeded" });
      expect(infra?.["status"]).toMatchObject({
        componentStatus: { dhcpReady: true, dnsReady: true, proxyReady: true },
        attachments: { total: 2 },
        observedGeneration: 1,
      });
      const alpha = stored(f, API_VERSION, "InfraClusterAttachment", "clusters", "alpha");
      expect(alpha?.["status"]).toMatchObject({
        domain: "alpha.clusters.example.com",
        controlPlaneNamespace: "clusters-alpha",
      });
      expect(readyOf(alpha)).toMatchObject({ status: "True" });
      // A status set by someone else survives (apps ingress is not ours to write).
      expect(alpha?.["status"]).toMatchObject({ appsIngressStatus: { externalIP: "127.0.8.200" } });
    });

    // A NACK: surfaced on the ProxyServer and flips proxyReady; the transition time moves.
    dataPlane.update((d) => d.nacks.set("clusters/tenant-vlan-proxy", "duplicate filter chain match"));
    await eventually(() => {
      const proxy = stored(f, API_VERSION, "ProxyServer", "clusters", "tenant-vlan-proxy");
      expect(proxy?.["status"]).toMatchObject({ lastNack: "duplicate filter chain match" });
      expect(readyOf(proxy)).toMatchObject({ status: "False", reason: "ConfigurationRejected" });
      const infra = stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");
      expect(infra?.["status"]).toMatchObject({ componentStatus: { proxyReady: false, dnsReady: true } });
      expect(readyOf(infra)?.["message"]).toMatch(/rejected the configuration: duplicate filter chain match/);
    });
    expect(readyOf(stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan"))?.["lastTransitionTime"]).toEqual(
      expect.any(String),
    );
    expect(firstTransition).toEqual(expect.any(String));

    // A new worker (a Machine whose VMI is not observed yet) reaches onState (the xDS cache's feed)
    // with its source range. An existing worker's report would move nothing: where oooi runs DHCP
    // its VMI's allocation is its source.
    const machine = stored(f, "cluster.x-k8s.io/v1beta1", "Machine", "clusters-alpha", "alpha-workers-1");
    const annotations =
      (machine?.["metadata"] as { annotations?: Record<string, string> } | undefined)?.annotations ?? {};
    f.seed({
      apiVersion: "cluster.x-k8s.io/v1beta1",
      kind: "Machine",
      metadata: { name: "alpha-workers-9", namespace: "clusters-alpha", annotations },
      spec: machine?.["spec"] ?? {},
      status: { addresses: [{ type: "InternalIP", address: "127.0.8.77" }] },
    });
    await eventually(() => {
      const backends = states.last()?.outputs.model.topologies[0]?.proxy?.backends ?? [];
      const svc = backends.find((b) => b.name === "clusters/alpha/kubernetes-service");
      expect(svc?.sourcePrefixRanges).toEqual(expect.arrayContaining(["127.0.8.77/32"]));
    });

    // Every request the operator made is granted by the generated RBAC.
    const grants = allPermissions();
    const seen = new Set<string>();
    for (const r of f.requests.all()) {
      if (r.verb === "discovery" || r.resource === undefined) continue;
      const key = `${r.verb} ${r.group ?? ""}/${r.resource}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const ok = grants.some(
        (g) => g.apiGroup === (r.group ?? "") && g.resources.includes(r.resource ?? "") && g.verbs.includes(r.verb),
      );
      expect(ok, `not granted: ${key}`).toBe(true);
    }
    expect(seen.size).toBeGreaterThan(20);
  });

  it("reports an invalid Infra beside a valid one, which still converges", async () => {
    fake = await seededFake();
    const f = fake;
    f.seed({
      apiVersion: API_VERSION,
      kind: "Infra",
      metadata: { name: "broken", namespace: "clusters" },
      spec: { networkConfig: { cidr: "10.0.0.0/33", gateway: "10.0.0.1", networkAttachmentDefinition: "vlan100" } },
    });
    const { op } = startOperator(f, { leaderElection: false });
    close = () => op.close();
    await eventually(() => {
      const broken = stored(f, API_VERSION, "Infra", "clusters", "broken");
      expect(readyOf(broken)).toMatchObject({ status: "False", reason: "InvalidSpec", observedGeneration: 1 });
      expect(readyOf(broken)?.["message"]).toMatch(/cidr/);
      expect(stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
      expect(readyOf(stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan"))).toMatchObject({
        reason: "ComponentsNotReady",
      });
    }, 15_000);
    expect(
      storedList(f, "apps/v1", "Deployment")
        .map((d) => (d["metadata"] as { name: string }).name)
        .filter((n) => n.startsWith("broken")),
    ).toEqual([]);
  });
});
