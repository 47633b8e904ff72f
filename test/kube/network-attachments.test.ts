// How the operator attaches the DHCP, DNS and proxy pods to each network form oooi serves, on a real
// kube-apiserver, as deploy/'s ServiceAccount: every Infra goes through the real CRD (its CEL rules)
// and every object the operator writes through the real schemas. Per combination:
//   - a NAD with a classic CNI config (bridge, macvlan; legacy or structured form): a static-IPAM
//     copy per component next to the pod, selected by name;
//   - an OVN-Kubernetes localnet NAD (ovn-k8s-cni-overlay): the NAD itself, with the serverIP in `ips`;
//   - a localnet Secondary ClusterUserDefinedNetwork (IPAM disabled): no NAD of the user's exists;
//     the pod selects the NAD OVN-Kubernetes makes for the CUDN (named after it, in the namespace the
//     attachment names) with the serverIP in `ips` — OVN-Kubernetes honours a requested address on a
//     layer2/localnet network without subnets (ovn-kubernetes.io features/multiple-networks).
import { afterAll, describe, expect, it } from "vitest";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import type { RunningOperator } from "../../src/operator/process/options.js";
import { runOperator } from "../../src/operator/process/run.js";
import { Metrics } from "../../src/metrics/index.js";
import type { Logger } from "../../src/util/logger.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { cudnCrd, localnetCudn } from "../support/kube/cudn-crd.js";
import { FakeDataPlane, counter } from "../operator/support.js";
import { GROUP_PATH, createNamespaces, installCrds, list, operatorToken, useKubeCluster } from "./support.js";

const NETWORKS = "k8s.v1.cni.cncf.io/networks";
const CUDN_LABEL = { "oooi.test/vlan400": "true" };

type Json = Record<string, unknown>;

/** One Infra per namespace, on 10.<n>.0.0/24: gateway .1, DHCP .2, DNS .3, proxy .4. */
function infra(namespace: string, n: number, networkConfig: Json, dhcp: boolean): Json {
  const ip = (host: number) => `10.${String(n)}.0.${String(host)}`;
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "Infra",
    metadata: { name: namespace, namespace },
    spec: {
      networkConfig: { cidr: `10.${String(n)}.0.0/24`, gateway: ip(1), ...networkConfig },
      infraComponents: {
        dhcp: dhcp ? { serverIP: ip(2), rangeStart: ip(100), rangeEnd: ip(199) } : { enabled: false },
        dns: { serverIP: ip(3) },
        proxy: { serverIP: ip(4) },
      },
    },
  };
}

function nad(namespace: string, name: string, config: Json): Json {
  return {
    apiVersion: "k8s.cni.cncf.io/v1",
    kind: "NetworkAttachmentDefinition",
    metadata: { name, namespace },
    spec: { config: JSON.stringify({ cniVersion: "0.3.1", name, ...config }) },
  };
}

interface Combination {
  readonly name: string;
  readonly namespace: string;
  readonly objects: readonly Json[];
  readonly components: readonly ("dhcp" | "dns" | "proxy")[];
  /** The proxy pod's network-selection annotation. */
  readonly proxyNetworks: readonly Json[];
  /** The static-IPAM copies the operator writes (name → ipam), none when the network is referenced. */
  readonly copies: Readonly<Record<string, Json>>;
}

const LOCALNET_DHCP = { topology: "Localnet", role: "Secondary", exposure: "Layer2", ipam: "DHCP" };
const staticIpam = (n: number, host: number) => ({
  type: "static",
  addresses: [{ address: `10.${String(n)}.0.${String(host)}/24`, gateway: `10.${String(n)}.0.1` }],
});

const COMBINATIONS: readonly Combination[] = [
  {
    name: "legacy NAD, bridge CNI: a static-IPAM copy per component",
    namespace: "net-legacy",
    objects: [
      nad("net-legacy", "vlan100", { type: "bridge", bridge: "br100", vlan: 100, ipam: {} }),
      infra("net-legacy", 1, { networkAttachmentDefinition: "vlan100" }, true),
    ],
    components: ["dhcp", "dns", "proxy"],
    proxyNetworks: [{ name: "net-legacy-proxy", namespace: "net-legacy", interface: "net1" }],
    copies: {
      "net-legacy-dhcp": staticIpam(1, 2),
      "net-legacy-dns": staticIpam(1, 3),
      "net-legacy-proxy": staticIpam(1, 4),
    },
  },
  {
    name: "structured NAD, Localnet Secondary with DHCP, bridge CNI: copies as the legacy form",
    namespace: "net-bridge",
    objects: [
      nad("net-bridge", "vlan200", { type: "bridge", bridge: "br200", vlan: 200, ipam: {} }),
      infra(
        "net-bridge",
        2,
        { attachment: { kind: "NetworkAttachmentDefinition", name: "vlan200" }, ...LOCALNET_DHCP },
        true,
      ),
    ],
    components: ["dhcp", "dns", "proxy"],
    proxyNetworks: [{ name: "net-bridge-proxy", namespace: "net-bridge", interface: "net1" }],
    copies: {
      "net-bridge-dhcp": staticIpam(2, 2),
      "net-bridge-dns": staticIpam(2, 3),
      "net-bridge-proxy": staticIpam(2, 4),
    },
  },
  {
    name: "structured NAD, Layer2 Secondary with External IPAM, macvlan CNI: copies, no DHCP",
    namespace: "net-macvlan",
    objects: [
      nad("net-macvlan", "vlan250", { type: "macvlan", master: "eth1.250", mode: "bridge", ipam: {} }),
      infra(
        "net-macvlan",
        5,
        {
          attachment: { kind: "NetworkAttachmentDefinition", name: "vlan250" },
          ...LOCALNET_DHCP,
          topology: "Layer2",
          ipam: "External",
        },
        false,
      ),
    ],
    components: ["dns", "proxy"],
    proxyNetworks: [{ name: "net-macvlan-proxy", namespace: "net-macvlan", interface: "net1" }],
    copies: { "net-macvlan-dns": staticIpam(5, 3), "net-macvlan-proxy": staticIpam(5, 4) },
  },
  {
    name: "legacy NAD, OVN-Kubernetes localnet: the NAD itself with the serverIP in ips",
    namespace: "net-ovn",
    objects: [
      nad("net-ovn", "vlan300", {
        type: "ovn-k8s-cni-overlay",
        topology: "localnet",
        netAttachDefName: "net-ovn/vlan300",
        vlanID: 300,
      }),
      infra("net-ovn", 3, { networkAttachmentDefinition: "vlan300" }, true),
    ],
    components: ["dhcp", "dns", "proxy"],
    proxyNetworks: [{ name: "vlan300", namespace: "net-ovn", interface: "net1", ips: ["10.3.0.4/24"] }],
    copies: {},
  },
  {
    name: "ClusterUserDefinedNetwork, Localnet Secondary with DHCP: its OVN-made NAD with the serverIP in ips",
    namespace: "net-cudn",
    objects: [
      localnetCudn("vlan400-localnet", 400, CUDN_LABEL),
      infra(
        "net-cudn",
        4,
        {
          attachment: { kind: "ClusterUserDefinedNetwork", name: "vlan400-localnet", namespace: "net-cudn" },
          ...LOCALNET_DHCP,
        },
        true,
      ),
    ],
    components: ["dhcp", "dns", "proxy"],
    proxyNetworks: [{ name: "vlan400-localnet", namespace: "net-cudn", interface: "net1", ips: ["10.4.0.4/24"] }],
    copies: {},
  },
];

type Deployment = {
  metadata: { name: string };
  spec: { template: { metadata: { annotations?: Record<string, string> } } };
};
type Nad = { metadata: { name: string }; spec: { config: string } };

describe.skipIf(KUBE_SKIP !== undefined)("the components' network attachment, per network form", () => {
  const namespaces = COMBINATIONS.map((c) => c.namespace);
  let token = "";
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    await cluster.mustKubectl(["apply", "--server-side", "-f", "-"], list([cudnCrd()]));
    await cluster.mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    token = await operatorToken(cluster, { infraNamespaces: namespaces, controlPlaneNamespaces: ["net-legacy-alpha"] });
    await createNamespaces(cluster, [...namespaces, "net-legacy-alpha"]);
    await cluster.mustKubectl(["label", "namespace", "net-cudn", "oooi.test/vlan400=true"]);
    await cluster.mustKubectl(["apply", "--server-side", "-f", "-"], list(COMBINATIONS.flatMap((c) => c.objects)));
  });

  const metrics = new Metrics().recorder(OPERATOR_METRICS);
  const complaints: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (o, m) => void complaints.push(`${m} ${JSON.stringify(o)}`),
    error: (o, m) => void complaints.push(`${m} ${JSON.stringify(o)}`),
  };
  let op: RunningOperator | undefined;
  afterAll(async () => {
    await op?.close();
  });

  it("the operator starts and owns every Infra's children", async () => {
    op = runOperator({
      kubeConfig: kube().kubeConfigFor("operator", token),
      settings: operatorSettings({ namespace: "oooi-system" }),
      dataPlane: new FakeDataPlane(),
      dnsProbe: false,
      logger,
      metrics,
      resyncMs: 500,
      leaseTiming: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 200 },
      backoff: { initialMs: 50, maxMs: 500 },
      watch: { timeoutSeconds: 30, discoveryIntervalMs: 1000 },
    });
    await op.ready;
    await eventually(async () => {
      for (const ns of namespaces) {
        const l = await kube().must<{ items: unknown[] }>("GET", `${GROUP_PATH}/namespaces/${ns}/proxyservers`);
        expect(l.items, ns).toHaveLength(1);
      }
    }, 30_000);
  }, 60_000);

  it.each(COMBINATIONS)("$name", async ({ namespace, components, proxyNetworks, copies }) => {
    await eventually(async () => {
      const deployments = await kube().must<{ items: Deployment[] }>(
        "GET",
        `/apis/apps/v1/namespaces/${namespace}/deployments`,
      );
      expect(deployments.items.map((d) => d.metadata.name).sort()).toEqual(components.map((c) => `${namespace}-${c}`));
      const proxy = deployments.items.find((d) => d.metadata.name === `${namespace}-proxy`);
      const annotation = proxy?.spec.template.metadata.annotations?.[NETWORKS] ?? "[]";
      expect(JSON.parse(annotation)).toEqual(proxyNetworks);
      // Every component selects the same network the same way, each with its own address.
      for (const d of deployments.items) {
        const nets = JSON.parse(d.spec.template.metadata.annotations?.[NETWORKS] ?? "[]") as Json[];
        expect(nets, d.metadata.name).toHaveLength(1);
      }
      const nads = await kube().must<{ items: Nad[] }>(
        "GET",
        `/apis/k8s.cni.cncf.io/v1/namespaces/${namespace}/network-attachment-definitions`,
      );
      const made = Object.fromEntries(
        nads.items
          .filter((n) => n.metadata.name.startsWith(`${namespace}-`))
          .map((n) => [n.metadata.name, (JSON.parse(n.spec.config) as { ipam?: Json }).ipam]),
      );
      expect(made).toEqual(copies);
    }, 30_000);
  });

  it("an attachment's externalService: <attachment>-proxy-external, LoadBalancer on 443 only, owned by it; gone when disabled", async () => {
    const path = `${GROUP_PATH}/namespaces/net-legacy/infraclusterattachments`;
    const created = await kube().must<{ metadata: { uid: string } }>("POST", path, {
      body: {
        apiVersion: "hostedcluster.densityops.com/v1alpha1",
        kind: "InfraClusterAttachment",
        metadata: { name: "alpha", namespace: "net-legacy" },
        spec: {
          infraRef: { name: "net-legacy" },
          hostedClusterRef: { name: "alpha", namespace: "net-legacy" },
          dns: { clusterName: "alpha", baseDomain: "example.com" },
          externalService: {
            enabled: true,
            addressPoolName: "public",
            labels: { "external-dns/publish": "true" },
            annotations: { "external-dns.alpha.kubernetes.io/hostname": "oauth.alpha.example.com" },
          },
        },
      },
    });
    type Service = {
      metadata: { annotations?: Record<string, string>; ownerReferences?: { kind: string; uid: string }[] };
      spec: { type: string; ports: { port: number }[] };
    };
    const svcPath = "/api/v1/namespaces/net-legacy/services/alpha-proxy-external";
    await eventually(async () => {
      const svc = await kube().must<Service>("GET", svcPath);
      expect(svc.spec.type).toBe("LoadBalancer");
      expect(svc.spec.ports.map((p) => p.port)).toEqual([443]);
      expect(svc.metadata.annotations).toMatchObject({
        "metallb.universe.tf/address-pool": "public",
        "external-dns.alpha.kubernetes.io/hostname": "oauth.alpha.example.com",
      });
      expect(svc.metadata.ownerReferences?.map((o) => [o.kind, o.uid])).toEqual([
        ["InfraClusterAttachment", created.metadata.uid],
      ]);
    }, 30_000);
    await kube().must("PATCH", `${path}/alpha`, {
      contentType: "application/merge-patch+json",
      body: { spec: { externalService: { enabled: false } } },
    });
    await eventually(async () => {
      expect((await kube().call("GET", svcPath)).status).toBe(404);
    }, 30_000);
  });

  it("wrote nothing the API server refused", async () => {
    for (const code of ["401", "403", "400", "422"]) {
      expect(
        await counter(metrics, "oooi_kube_requests_total", `code="${code}"`),
        `HTTP ${code} seen:\n${complaints.join("\n")}`,
      ).toBe(0);
    }
    // The CUDN itself stays the platform's: the operator neither copies nor changes it.
    const cudn = await kube().must<{ metadata: { managedFields?: { manager: string }[] } }>(
      "GET",
      "/apis/k8s.ovn.org/v1/clusteruserdefinednetworks/vlan400-localnet",
    );
    expect(cudn.metadata.managedFields?.map((f) => f.manager)).toEqual(["kubectl"]);
  });
});
