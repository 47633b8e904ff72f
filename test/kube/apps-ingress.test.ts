// Apps ingress automation against two real API servers: the management cluster (our CRDs, the
// operator authorized only by deploy/rbac) and a hosted cluster reachable ONLY at the address the
// management Service kube-apiserver.<CP> reports — a loopback ClusterIP (the management cluster's
// service range is 127.200.0.0/16) where a TCP relay listens. The kubeconfig Secret names a host
// that does not resolve here, so the operator must dial the Service address and still verify TLS
// against the kubeconfig's host. Nothing runs MetalLB or OLM: the test plays them (serving
// minimal MetalLB CRDs, writing the Service's status.loadBalancer) and watches every phase.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { ATTACHMENT_FINALIZER } from "../../src/operator/desired/objects.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import type { RunningOperator } from "../../src/operator/process/options.js";
import { runOperator } from "../../src/operator/process/run.js";
import { Metrics } from "../../src/metrics/index.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { startXdsServer, type XdsServer } from "../../src/xds/server/index.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP, KubeCluster } from "../support/kube/cluster.js";
import { TcpRelay } from "../support/kube/relay.js";
import { FakeDataPlane, INFRA_NAD, counter } from "../operator/support.js";
import { createNamespaces, GROUP_PATH, installCrds, list, operatorToken } from "./support.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";
import type { Logger } from "../../src/util/logger.js";

type Obj = {
  metadata: {
    name: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
};
type AppsStatus = {
  phase?: string;
  reason?: string;
  message?: string;
  externalIP?: string;
  externalHostname?: string;
  lastSyncTime?: string;
};

const API_VIP = "127.200.0.10";
const DOMAIN = "alpha.clusters.example.com";
const ATT = `${GROUP_PATH}/namespaces/clusters/infraclusterattachments`;

/** Everything the operator installs in the hosted cluster, in cleanup order. */
const HOSTED_OBJECTS = [
  "/api/v1/namespaces/openshift-ingress/services/oooi-ingress",
  "/apis/metallb.io/v1beta1/namespaces/openshift-operators/l2advertisements/advertise-apps-pool",
  "/apis/metallb.io/v1beta1/namespaces/openshift-operators/ipaddresspools/apps-pool",
  "/apis/metallb.io/v1beta1/namespaces/openshift-operators/metallbs/metallb",
  "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-operators/subscriptions/metallb-operator",
  "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-operators/clusterserviceversions/metallb-operator.v4.20.0",
];

/** The OLM and MetalLB kinds, minimal: right group, version, names and scope; a schema keeping anything. */
function crds(group: string, version: string, kinds: readonly [string, string][]): Record<string, unknown>[] {
  return kinds.map(([kind, plural]) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  }));
}
const OLM_CRDS = crds("operators.coreos.com", "v1alpha1", [
  ["Subscription", "subscriptions"],
  ["ClusterServiceVersion", "clusterserviceversions"],
]);
const METALLB_CRDS = crds("metallb.io", "v1beta1", [
  ["MetalLB", "metallbs"],
  ["IPAddressPool", "ipaddresspools"],
  ["L2Advertisement", "l2advertisements"],
]);

function fixtures(): Record<string, unknown>[] {
  return [
    {
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "Infra",
      metadata: { name: "tenant", namespace: "clusters" },
      spec: {
        networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" },
        infraComponents: {
          dhcp: { serverIP: "192.0.2.2", rangeStart: "192.0.2.100", rangeEnd: "192.0.2.199" },
          dns: { serverIP: "192.0.2.3" },
          proxy: { serverIP: "192.0.2.4" },
        },
      },
    },
    {
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "InfraClusterAttachment",
      metadata: { name: "alpha", namespace: "clusters" },
      spec: {
        infraRef: { name: "tenant" },
        hostedClusterRef: { name: "alpha", namespace: "clusters" },
        dns: { clusterName: "alpha", baseDomain: "clusters.example.com" },
        appsIngress: {
          enabled: true,
          metallb: { addressPoolName: "apps-pool", ipAddressPoolRange: "192.0.2.200-192.0.2.209" },
          service: {
            labels: { team: "apps" },
            annotations: { "external-dns.alpha.kubernetes.io/hostname": `*.apps.${DOMAIN}` },
          },
        },
      },
    },
    {
      // A typo'd range: refused with a reason, and alpha does not notice.
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "InfraClusterAttachment",
      metadata: { name: "typo", namespace: "clusters" },
      spec: {
        infraRef: { name: "tenant" },
        hostedClusterRef: { name: "typo", namespace: "clusters" },
        dns: { clusterName: "typo", baseDomain: "clusters.example.com" },
        appsIngress: {
          enabled: true,
          metallb: { addressPoolName: "apps-pool", ipAddressPoolRange: "192.0.2.150-192.0.2.160" },
        },
      },
    },
    {
      apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster",
      metadata: { name: "alpha", namespace: "clusters" },
      spec: { platform: { type: "KubeVirt" } },
    },
    ...["kube-apiserver", "oauth-openshift", "ignition-server-proxy", "konnectivity-server"].map((name, i) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "clusters-alpha" },
      spec: { type: "ClusterIP", clusterIP: `127.200.0.${String(10 + i)}`, ports: [{ port: 6443 }] },
    })),
    INFRA_NAD,
  ];
}

describe.skipIf(KUBE_SKIP !== undefined)("apps ingress against a management and a hosted kube-apiserver", () => {
  let mgmt: KubeCluster | undefined;
  let hosted: KubeCluster | undefined;
  let relay: TcpRelay | undefined;
  let xds: XdsServer | undefined;
  let envoy: EnvoyLikeClient | undefined;
  let op: RunningOperator | undefined;
  let startOperator: () => RunningOperator = () => assertNever("operator options");
  const complaints: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (o, m) => complaints.push(`${m} ${JSON.stringify(o)}`),
    error: (o, m) => complaints.push(`${m} ${JSON.stringify(o)}`),
  };
  const metrics = new Metrics().recorder(OPERATOR_METRICS);
  const M = (): KubeCluster => mgmt ?? assertNever("management cluster");
  const H = (): KubeCluster => hosted ?? assertNever("hosted cluster");

  beforeAll(async () => {
    [mgmt, hosted] = await Promise.all([
      KubeCluster.start({ controllerManager: false, serviceClusterIpRange: "127.200.0.0/16" }),
      KubeCluster.start({ controllerManager: false }),
    ]);
    const port = Number(new URL(hosted.url).port);
    relay = await TcpRelay.start({ host: "127.0.0.1", port }, API_VIP);
    await installCrds(mgmt);
    await createNamespaces(mgmt, ["clusters", "clusters-alpha", "clusters-typo"]);
    await hosted.mustKubectl(["apply", "--server-side", "-f", "-"], list(OLM_CRDS));
    await hosted.mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    await createNamespaces(hosted, ["openshift-ingress"]);
    const objects = fixtures().map((o) =>
      // The API server Service's port is the relay's: the only way into the hosted cluster.
      (o["metadata"] as { name: string }).name === "kube-apiserver"
        ? { ...o, spec: { type: "ClusterIP", clusterIP: API_VIP, ports: [{ port: relay?.port }] } }
        : o,
    );
    await mgmt.mustKubectl(["apply", "--server-side", "-f", "-"], list(objects));
    const token = await operatorToken(mgmt, {
      infraNamespaces: ["clusters"],
      controlPlaneNamespaces: ["clusters-alpha", "clusters-typo"],
    });
    const cache = new SnapshotCache({ check: checkEnvoySnapshot });
    cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
    xds = await startXdsServer({
      cache,
      listen: "127.0.0.1:0",
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const kubeConfig = mgmt.kubeConfigFor("operator", token);
    startOperator = () =>
      runOperator({
        kubeConfig,
        settings: operatorSettings({ namespace: "oooi-system" }),
        dataPlane: new FakeDataPlane(),
        onState: (_state, outputs) => {
          publishSnapshots(cache, outputs, logger);
        },
        logger,
        metrics,
        leaderElection: false,
        debounceMs: 20,
        resyncMs: 500,
        backoff: { initialMs: 50, maxMs: 500 },
        watch: { timeoutSeconds: 30, discoveryIntervalMs: 1000 },
        appsIngress: { resyncMs: 500, requestTimeoutMs: 2_000 },
      });
    op = startOperator();
    await op.ready;
    envoy = new EnvoyLikeClient({
      address: `127.0.0.1:${String(xds.port)}`,
      node: { id: "envoy-0", cluster: "clusters/tenant-proxy" },
    });
    envoy.connect();
  }, 300_000);

  afterAll(async () => {
    envoy?.close();
    await op?.close();
    await xds?.close();
    await relay?.stop();
    await Promise.all([mgmt?.stop(), hosted?.stop()]);
  }, 60_000);

  const apps = async (name = "alpha"): Promise<AppsStatus | undefined> =>
    (await M().must<Obj>("GET", `${ATT}/${name}`)).status?.["appsIngressStatus"] as AppsStatus | undefined;
  const phase = async (expected: Record<string, unknown>, name = "alpha"): Promise<AppsStatus> => {
    let last: AppsStatus | undefined;
    await eventually(async () => {
      last = await apps(name);
      expect(last).toMatchObject(expected);
    }, 30_000);
    return last ?? {};
  };
  const ready = async (expected: Record<string, unknown>, name = "alpha"): Promise<void> => {
    await eventually(async () => {
      const a = await M().must<Obj>("GET", `${ATT}/${name}`);
      const c = ((a.status?.["conditions"] ?? []) as Record<string, unknown>[]).find((c) => c["type"] === "Ready");
      expect(c).toMatchObject(expected);
    }, 30_000);
  };
  const hostedGet = (path: string) => H().call<Obj>("GET", path);
  const secretKubeconfig = (token = H().adminToken): string => {
    const h = H();
    // A host that resolves nowhere here but is on the serving certificate: only the Service address leads in.
    return JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "admin",
      clusters: [
        {
          name: "hosted",
          cluster: {
            server: "https://kubernetes.default.svc:6443",
            "certificate-authority-data": readFileSync(h.pki.caCert).toString("base64"),
          },
        },
      ],
      users: [{ name: "admin", user: { token } }],
      contexts: [{ name: "admin", context: { cluster: "hosted", user: "admin" } }],
    });
  };

  it("refuses a range overlapping the DHCP pool (Degraded/InvalidConfiguration, field named) without touching alpha", async () => {
    const s = await phase({ phase: "Degraded", reason: "InvalidConfiguration" }, "typo");
    expect(s.message).toContain("spec.appsIngress.metallb.ipAddressPoolRange");
    expect(s.message).toContain("overlaps the DHCP pool 192.0.2.100-192.0.2.199");
    // (It also waits for its control plane's Services; the message lists every reason.)
    await ready({ status: "False", message: expect.stringContaining("overlaps the DHCP pool") as unknown }, "typo");
  }, 60_000);

  // Every other cause of InvalidConfiguration, each provoked through the API on the same attachment.
  it.each([
    [{ addressPoolName: null }, "spec.appsIngress.metallb.addressPoolName: no MetalLB address pool name"],
    [
      { addressPoolName: "apps-pool", ipAddressPoolRange: null },
      "spec.appsIngress.metallb.ipAddressPoolRange: no address range for pool apps-pool",
    ],
    [{ ipAddressPoolRange: "198.51.100.10-198.51.100.20" }, "is not inside the Infra's network 192.0.2.0/24"],
    [{ ipAddressPoolRange: "192.0.2.3-192.0.2.9" }, "contains the DNS server (192.0.2.3)"],
    [{ ipAddressPoolRange: "192.0.2.4/32" }, "range 192.0.2.4-192.0.2.4 contains the proxy (192.0.2.4)"],
    [{ ipAddressPoolRange: "192.0.2.250-" }, 'spec.appsIngress.metallb.ipAddressPoolRange: "192.0.2.250-" is neither'],
  ])(
    "InvalidConfiguration for metallb %j: %s",
    async (metallb, message) => {
      await patchApps({ metallb }, "typo");
      // The previous row's status has the same phase and reason: wait for this row's message.
      const expected = expect.stringContaining(message) as unknown;
      await phase({ phase: "Degraded", reason: "InvalidConfiguration", message: expected }, "typo");
      await ready({ status: "False", message: expected }, "typo");
    },
    60_000,
  );

  it("a valid range on typo: Pending/WaitingForHostedCluster, then WaitingForAPIServerService", async () => {
    await patchApps({ metallb: { ipAddressPoolRange: "192.0.2.220-192.0.2.229" } }, "typo");
    await phase(
      { phase: "Pending", reason: "WaitingForHostedCluster", message: "HostedCluster clusters/typo not found" },
      "typo",
    );
    await M().must("POST", "/api/v1/namespaces/clusters/secrets", {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "typo-admin-kubeconfig" },
        data: { kubeconfig: Buffer.from(secretKubeconfig()).toString("base64") },
      },
    });
    await M().must("POST", "/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/hostedclusters", {
      body: {
        apiVersion: "hypershift.openshift.io/v1beta1",
        kind: "HostedCluster",
        metadata: { name: "typo" },
        spec: { platform: { type: "KubeVirt" } },
      },
    });
    await M().must("PATCH", "/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/hostedclusters/typo", {
      contentType: "application/merge-patch+json",
      body: { status: { kubeconfig: { name: "typo-admin-kubeconfig" } } },
    });
    await phase(
      {
        phase: "Pending",
        reason: "WaitingForAPIServerService",
        message: "Service clusters-typo/kube-apiserver not found",
      },
      "typo",
    );
  }, 60_000);

  it("waits for the HostedCluster's kubeconfig, then its Secret", async () => {
    await phase({ phase: "Pending", reason: "WaitingForKubeconfig" });
    await M().must("PATCH", "/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/hostedclusters/alpha", {
      contentType: "application/merge-patch+json",
      body: { status: { kubeconfig: { name: "alpha-admin-kubeconfig" } } },
    });
    await phase({
      phase: "Pending",
      reason: "WaitingForKubeconfig",
      message: "kubeconfig Secret clusters/alpha-admin-kubeconfig not found",
    });
  }, 60_000);

  it("reports HostedClusterAccessFailed while the Service address leads nowhere, then waits for a Ready Node", async () => {
    relay?.cut();
    await M().must("POST", "/api/v1/namespaces/clusters/secrets", {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "alpha-admin-kubeconfig" },
        data: { kubeconfig: Buffer.from(secretKubeconfig()).toString("base64") },
      },
    });
    const failed = await phase({ phase: "Degraded", reason: "HostedClusterAccessFailed" });
    expect(failed.message).toContain("hosted API");
    relay?.restore();
    await H().must("POST", "/api/v1/nodes", {
      body: {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "worker-0" },
        status: { conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady" }] },
      },
    });
    // The operator may first report the Node list it read before the POST landed ("0 Node(s)"): wait for ours.
    await phase({
      phase: "Pending",
      reason: "WaitingForHostedClusterNodes",
      message: expect.stringContaining("1 Node(s), none Ready") as unknown,
    });
    await ready({ status: "True" });
  }, 60_000);

  it("subscribes to metallb-operator: MetalLBInstallFailed without openshift-operators, then WaitingForMetalLBCRDs", async () => {
    await H().must("PATCH", "/api/v1/nodes/worker-0/status", {
      contentType: "application/merge-patch+json",
      body: { status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] } },
    });
    const failed = await phase({ phase: "Degraded", reason: "MetalLBInstallFailed" });
    expect(failed.message).toContain("Subscription metallb-operator");
    await ready({ status: "False", reason: "MetalLBInstallFailed" });
    await createNamespaces(H(), ["openshift-operators"]);
    await phase({ phase: "Pending", reason: "WaitingForMetalLBCRDs" });
    const sub = await hostedGet(
      "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-operators/subscriptions/metallb-operator",
    );
    expect(sub.status).toBe(200);
    expect(sub.body.spec).toEqual({
      channel: "stable",
      name: "metallb-operator",
      source: "redhat-operators",
      sourceNamespace: "openshift-marketplace",
      installPlanApproval: "Automatic",
    });
  }, 60_000);

  it("once the MetalLB CRDs are served: MetalLB, IPAddressPool, L2Advertisement, the Service; WaitingForExternalIP", async () => {
    await H().mustKubectl(["apply", "--server-side", "-f", "-"], list(METALLB_CRDS));
    await H().mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    await playOlmInstall();
    await phase({ phase: "Pending", reason: "WaitingForExternalIP" });
    const base = "/apis/metallb.io/v1beta1/namespaces/openshift-operators";
    expect((await hostedGet(`${base}/metallbs/metallb`)).status).toBe(200);
    expect((await hostedGet(`${base}/ipaddresspools/apps-pool`)).body.spec).toEqual({
      addresses: ["192.0.2.200-192.0.2.209"],
      autoAssign: true,
    });
    expect((await hostedGet(`${base}/l2advertisements/advertise-apps-pool`)).body.spec).toEqual({
      ipAddressPools: ["apps-pool"],
    });
    const svc = (await hostedGet("/api/v1/namespaces/openshift-ingress/services/oooi-ingress")).body;
    expect(svc.spec).toMatchObject({
      type: "LoadBalancer",
      selector: { "ingresscontroller.operator.openshift.io/deployment-ingresscontroller": "default" },
      ports: [
        { name: "http", port: 80 },
        { name: "https", port: 443 },
      ],
    });
    expect(svc.metadata.annotations).toMatchObject({
      "metallb.universe.tf/address-pool": "apps-pool",
      "external-dns.alpha.kubernetes.io/hostname": `*.apps.${DOMAIN}`,
    });
    expect(svc.metadata.labels).toMatchObject({ team: "apps" });
    // What the user adds to the Service themselves stays (server-side apply owns only oooi's fields).
    await H().mustKubectl(["-n", "openshift-ingress", "annotate", "service", "oooi-ingress", "note=mine"]);
    expect(envoy?.routes.get("http-80")).toBeUndefined();
  }, 90_000);

  it("a VIP in status.loadBalancer (seen by the watch) → Ready, *.apps routes at Envoy and the wildcard record", async () => {
    await setVip({ ip: "192.0.2.200" });
    const s = await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.200" });
    expect(s.lastSyncTime).toBeDefined();
    await expectRoutesTo("192.0.2.200");
    const svc = (await hostedGet("/api/v1/namespaces/openshift-ingress/services/oooi-ingress")).body;
    expect(svc.metadata.annotations?.["note"]).toBe("mine");
  }, 60_000);

  it("a VIP change moves the routes and the record", async () => {
    const before = await apps();
    await setVip({ ip: "192.0.2.201" });
    const s = await phase({ phase: "Ready", externalIP: "192.0.2.201" });
    expect(Date.parse(s.lastSyncTime ?? "")).toBeGreaterThanOrEqual(Date.parse(before?.lastSyncTime ?? ""));
    await expectRoutesTo("192.0.2.201");
    // Passes kept running meanwhile (resync 500 ms); an unchanged VIP writes nothing, so the time stays.
    expect((await apps())?.lastSyncTime).toBe(s.lastSyncTime);
  }, 60_000);

  it("an operator restart changes nothing: the same status (lastSyncTime too), routes and record", async () => {
    const before = await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.201" });
    await op?.close();
    op = startOperator();
    await op.ready;
    // Two status changes of typo, each a pass of its own: the first pass (alpha included) has ended.
    await patchApps({ metallb: { ipAddressPoolRange: "192.0.2.150-192.0.2.160" } }, "typo");
    await phase({ reason: "InvalidConfiguration", message: expect.stringContaining("overlaps") as unknown }, "typo");
    await patchApps({ metallb: { ipAddressPoolRange: "198.51.100.1-198.51.100.2" } }, "typo");
    await phase({ reason: "InvalidConfiguration", message: expect.stringContaining("not inside") as unknown }, "typo");
    expect(await apps()).toEqual(before);
    await expectRoutesTo("192.0.2.201");
  }, 60_000);

  it("a hostname-only VIP: Ready/ExternalHostnameOnly, Envoy targets the hostname, no wildcard record", async () => {
    await setVip({ hostname: "router-lb.example.net" });
    const s = await phase({
      phase: "Ready",
      reason: "ExternalHostnameOnly",
      externalHostname: "router-lb.example.net",
    });
    expect(s.externalIP).toBeUndefined();
    const e = envoy ?? assertNever("envoy");
    await eventually(() => {
      const tls = e.route({
        destinationPort: 443,
        sourceIp: "192.0.2.150",
        serverName: `console-openshift-console.apps.${DOMAIN}`,
        transportProtocol: "tls",
      });
      expect(tls?.endpoints).toEqual(["router-lb.example.net:443"]);
      expect(e.clusters.get(tls?.chain.cluster ?? "")?.json["type"]).toBe("LOGICAL_DNS");
    }, 30_000);
    await eventually(async () => {
      expect(await wildcardRecords()).toEqual([]);
    }, 30_000);
    await setVip({ ip: "192.0.2.201" });
    await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.201" });
    await expectRoutesTo("192.0.2.201");
  }, 60_000);

  it("IngressServiceFailed when the Service cannot be applied; Ready again when fixed", async () => {
    await patchApps({ service: { namespace: "no-such-namespace" } });
    const s = await phase({ phase: "Degraded", reason: "IngressServiceFailed", externalIP: "192.0.2.201" });
    expect(s.message).toContain("no-such-namespace/oooi-ingress");
    await expectRoutesTo("192.0.2.201");
    await patchApps({ service: { namespace: null } });
    await phase({ phase: "Ready", externalIP: "192.0.2.201" });
  }, 60_000);

  it("ExternalIPDiscoveryFailed while the Service cannot be watched (RBAC); last-good routes stay; Ready when it can", async () => {
    // A hosted identity that may apply the Service (and everything before it) but not list or watch it.
    await H().mustKubectl(
      ["apply", "--server-side", "-f", "-"],
      list([
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "no-watch", namespace: "default" } },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "no-watch" },
          rules: [
            { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list"] },
            { apiGroups: [""], resources: ["services"], verbs: ["get", "create", "update", "patch", "delete"] },
            { apiGroups: ["operators.coreos.com", "metallb.io"], resources: ["*"], verbs: ["*"] },
          ],
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "no-watch" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "no-watch" },
          subjects: [{ kind: "ServiceAccount", name: "no-watch", namespace: "default" }],
        },
      ]),
    );
    const tr = await H().must<{ status?: { token?: string } }>(
      "POST",
      "/api/v1/namespaces/default/serviceaccounts/no-watch/token",
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
    );
    await putKubeconfig(secretKubeconfig(tr.status?.token ?? assertNever("TokenRequest token")));
    const s = await phase({ phase: "Degraded", reason: "ExternalIPDiscoveryFailed", externalIP: "192.0.2.201" });
    expect(s.message).toContain("watching Service openshift-ingress/oooi-ingress");
    expect(s.message).toContain("keeps routing to 192.0.2.201");
    await ready({ status: "False", reason: "ExternalIPDiscoveryFailed" });
    await expectRoutesTo("192.0.2.201");
    await putKubeconfig(secretKubeconfig());
    await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.201" });
  }, 60_000);

  it("the hosted API going away mid-way: Degraded/HostedClusterAccessFailed, last-good routes and record stay", async () => {
    relay?.cut();
    const s = await phase({ phase: "Degraded", reason: "HostedClusterAccessFailed", externalIP: "192.0.2.201" });
    expect(s.message).toContain("keeps routing to 192.0.2.201");
    await ready({ status: "False", reason: "HostedClusterAccessFailed" });
    await expectRoutesTo("192.0.2.201");
    relay?.restore();
    await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.201" });
  }, 60_000);

  it("enabled: false cleans up; a failed cleanup is Degraded/CleanupFailed and retried; enabling again reinstalls", async () => {
    relay?.cut();
    await patchApps({ enabled: false });
    const failed = await phase({ phase: "Degraded", reason: "CleanupFailed" });
    expect(failed.message).toContain("cleanup of the hosted apps-ingress objects failed, retrying");
    // The hosted API itself (reached directly, not through the cut Service address) still holds the Service.
    expect((await hostedGet(HOSTED_OBJECTS[0] ?? "")).status).toBe(200);
    relay?.restore();
    await eventually(async () => {
      expect(await apps()).toBeUndefined();
    }, 30_000);
    for (const path of HOSTED_OBJECTS) expect((await hostedGet(path)).status, path).toBe(404);
    await eventually(() => {
      expect(envoy?.routes.get("http-80")).toBeUndefined();
    }, 30_000);
    expect((await M().must<Obj>("GET", `${ATT}/alpha`)).metadata.finalizers).toContain(ATTACHMENT_FINALIZER);

    await patchApps({ enabled: true });
    await phase({ phase: "Pending", reason: "WaitingForExternalIP" });
    await playOlmInstall();
    await setVip({ ip: "192.0.2.202" });
    await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.202" });
    await expectRoutesTo("192.0.2.202");
  }, 90_000);

  it("a renamed Service and pool: the new ones applied, the old ones deleted, appsIngressStatus.applied* names the new ones", async () => {
    await phase({
      appliedServiceName: "oooi-ingress",
      appliedServiceNamespace: "openshift-ingress",
      appliedAddressPoolName: "apps-pool",
      appliedL2AdvertisementName: "advertise-apps-pool",
    });
    await patchApps({ service: { name: "apps-ingress-2" }, metallb: { addressPoolName: "apps-pool-2" } });
    await phase({
      phase: "Pending",
      reason: "WaitingForExternalIP",
      appliedServiceName: "apps-ingress-2",
      appliedAddressPoolName: "apps-pool-2",
      appliedL2AdvertisementName: "advertise-apps-pool-2",
    });
    const base = "/apis/metallb.io/v1beta1/namespaces/openshift-operators";
    expect((await hostedGet("/api/v1/namespaces/openshift-ingress/services/apps-ingress-2")).status).toBe(200);
    expect((await hostedGet(`${base}/ipaddresspools/apps-pool-2`)).status).toBe(200);
    for (const path of HOSTED_OBJECTS.slice(0, 3)) expect((await hostedGet(path)).status, path).toBe(404);
    // Back to the first names: the renamed objects go the same way.
    await patchApps({ service: { name: "oooi-ingress" }, metallb: { addressPoolName: "apps-pool" } });
    await phase({ appliedServiceName: "oooi-ingress", appliedAddressPoolName: "apps-pool" });
    expect((await hostedGet("/api/v1/namespaces/openshift-ingress/services/apps-ingress-2")).status).toBe(404);
    expect((await hostedGet(`${base}/ipaddresspools/apps-pool-2`)).status).toBe(404);
    expect((await hostedGet(`${base}/l2advertisements/advertise-apps-pool-2`)).status).toBe(404);
    await setVip({ ip: "192.0.2.202" });
    await phase({ phase: "Ready", reason: "IngressReady", externalIP: "192.0.2.202" });
    await expectRoutesTo("192.0.2.202");
  }, 90_000);

  it("an attachment that turns apps ingress on after the loop has started is taken up (a pass looks only at what changed)", async () => {
    await M().must("POST", ATT, {
      body: {
        apiVersion: "hostedcluster.densityops.com/v1alpha1",
        kind: "InfraClusterAttachment",
        metadata: { name: "later", namespace: "clusters" },
        spec: {
          infraRef: { name: "tenant" },
          hostedClusterRef: { name: "later", namespace: "clusters" },
          dns: { clusterName: "later", baseDomain: "clusters.example.com" },
        },
      },
    });
    // Passes run meanwhile (the resync is 500 ms): without apps ingress it gets no status of it.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await apps("later")).toBeUndefined();
    await patchApps(
      { enabled: true, metallb: { addressPoolName: "apps-pool", ipAddressPoolRange: "192.0.2.230-192.0.2.231" } },
      "later",
    );
    await phase({ phase: "Pending", reason: "WaitingForHostedCluster" }, "later");
    await patchApps({ enabled: false }, "later");
    await eventually(async () => {
      expect(await apps("later")).toBeUndefined();
    }, 30_000);
    await M().must("DELETE", `${ATT}/later`);
  }, 60_000);

  it("delete: cleans the hosted objects in order, keeps routes meanwhile, then releases the finalizer", async () => {
    expect((await M().must<Obj>("GET", `${ATT}/alpha`)).metadata.finalizers).toContain(ATTACHMENT_FINALIZER);
    await M().must("DELETE", `${ATT}/alpha`);
    await eventually(async () => {
      expect((await M().call("GET", `${ATT}/alpha`)).status).toBe(404);
    }, 30_000);
    for (const path of HOSTED_OBJECTS) expect((await hostedGet(path)).status, path).toBe(404);
    await eventually(() => {
      expect(envoy?.routes.get("http-80")).toBeUndefined();
    }, 30_000);
    for (const code of ["401", "403"])
      expect(await counter(metrics, "oooi_kube_requests_total", `code="${code}"`), complaints.join("\n")).toBe(0);
  }, 60_000);

  /** OLM's part: it records the CSV it installed in the Subscription's status (cleanup deletes it too). */
  async function playOlmInstall(): Promise<void> {
    const olm = "/apis/operators.coreos.com/v1alpha1/namespaces/openshift-operators";
    await H().must("POST", `${olm}/clusterserviceversions`, {
      body: {
        apiVersion: "operators.coreos.com/v1alpha1",
        kind: "ClusterServiceVersion",
        metadata: { name: "metallb-operator.v4.20.0" },
        spec: {},
      },
    });
    await H().must("PATCH", `${olm}/subscriptions/metallb-operator`, {
      contentType: "application/merge-patch+json",
      body: { status: { installedCSV: "metallb-operator.v4.20.0" } },
    });
  }

  async function setVip(ingress: { ip?: string; hostname?: string }): Promise<void> {
    await H().must("PATCH", "/api/v1/namespaces/openshift-ingress/services/oooi-ingress/status", {
      contentType: "application/merge-patch+json",
      body: { status: { loadBalancer: { ingress: [ingress] } } },
    });
  }

  async function putKubeconfig(kubeconfig: string): Promise<void> {
    await M().must("PATCH", "/api/v1/namespaces/clusters/secrets/alpha-admin-kubeconfig", {
      contentType: "application/merge-patch+json",
      body: { data: { kubeconfig: Buffer.from(kubeconfig).toString("base64") } },
    });
  }

  /** The wildcard A records of the VLAN view's apps zone in the CoreDNS ConfigMap. */
  async function wildcardRecords(): Promise<string[]> {
    const cms = await M().must<{ items: Obj[] }>("GET", "/api/v1/namespaces/clusters/configmaps", {
      query: { labelSelector: "app.kubernetes.io/component=dns" },
    });
    return Object.entries(cms.items[0]?.data ?? {})
      .filter(([k]) => k.includes(`vlan.apps.${DOMAIN}`))
      .flatMap(([, v]) => v.split("\n").filter((l) => /^\*\s.*\sA\s/.test(l)));
  }

  async function patchApps(change: Record<string, unknown>, name = "alpha"): Promise<void> {
    await M().must("PATCH", `${ATT}/${name}`, {
      contentType: "application/merge-patch+json",
      body: { spec: { appsIngress: change } },
    });
  }

  /** *.apps.D on 443 (SNI) and 80 (Host) reach `vip`, and the VLAN view's zone answers it. */
  async function expectRoutesTo(vip: string): Promise<void> {
    const e = envoy ?? assertNever("envoy");
    await eventually(() => {
      const tls = e.route({
        destinationPort: 443,
        sourceIp: "192.0.2.150",
        serverName: `console-openshift-console.apps.${DOMAIN}`,
        transportProtocol: "tls",
      });
      expect(tls?.endpoints).toEqual([`${vip}:443`]);
      const vhosts = (e.routes.get("http-80")?.json["virtual_hosts"] ?? []) as {
        domains: string[];
        routes: { route: { cluster: string } }[];
      }[];
      const vhost = vhosts.find((v) => v.domains.includes(`*.apps.${DOMAIN}`));
      const cluster = vhost?.routes[0]?.route.cluster ?? "";
      const cla = e.endpoints.get(cluster)?.json as
        | {
            endpoints?: {
              lb_endpoints?: {
                endpoint?: { address?: { socket_address?: { address?: string; port_value?: number } } };
              }[];
            }[];
          }
        | undefined;
      const sa = cla?.endpoints?.[0]?.lb_endpoints?.[0]?.endpoint?.address?.socket_address;
      expect(`${sa?.address ?? ""}:${String(sa?.port_value ?? "")}`).toBe(`${vip}:80`);
    }, 30_000);
    await eventually(async () => {
      const records = await wildcardRecords();
      expect(records.length).toBeGreaterThan(0);
      for (const r of records) expect(r).toMatch(new RegExp(`\\sA\\s+${vip.replace(/\./g, "\\.")}$`));
    }, 30_000);
  }
});

function assertNever(what: string): never {
  throw new Error(`${what} did not start`);
}
