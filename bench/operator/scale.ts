// The benchmark's cluster, as plain JSON objects a fake API server can be seeded with: `infras`
// Infras (each with its own NAD and a /22 VLAN), `attachments` InfraClusterAttachments per Infra,
// each with its HostedCluster, control-plane Namespace, the four control-plane Services, a KubeVirt
// NodePool and `machines` CAPI Machines reporting one VLAN address. Names and addresses are pure
// functions of the indices, so the parent process can name a Machine without holding the objects.
import type { JsonObject } from "../../test/support/fake-apiserver/types.js";

/** How big the generated cluster is. */
export interface Scale {
  readonly infras: number;
  readonly attachments: number;
  readonly machines: number;
  /**
   * Machines, control-plane Services and Namespaces as their controllers leave them (labels, owner
   * references, conditions, node info…: what an informer caches); false: only the fields oooi reads.
   */
  readonly realistic: boolean;
}

/** Namespace of every Infra, attachment, HostedCluster, NodePool and Infra NAD. */
export const NS = "clusters";
/** Namespace the operator runs in (its Lease lives there). */
export const OPERATOR_NS = "oooi-system";

const pad = (n: number, width = 3): string => String(n).padStart(width, "0");

/** Infra i's name. */
export const infraName = (i: number): string => `infra-${pad(i)}`;
/** Hosted cluster (and attachment) a of Infra i. */
export const clusterName = (i: number, a: number): string => `hc-${pad(i)}-${String(a)}`;
/** Control-plane namespace of hosted cluster (i, a), HyperShift's `<ns>-<name>`. */
export const controlPlane = (i: number, a: number): string => `${NS}-${clusterName(i, a)}`;
/** Machine m of hosted cluster (i, a). */
export const machineName = (i: number, a: number, m: number): string => `${clusterName(i, a)}-w-${pad(m)}`;
/** The xDS node group of Infra i's proxy (`<namespace>/<ProxyServer>`). */
export const proxyGroup = (i: number): string => `${NS}/${infraName(i)}-proxy`;

/** Infra i's VLAN, a /22: 10.<i div 64>.<4·(i mod 64)>.0/22 (16,384 of them). */
function vlan(i: number): { readonly net: string; readonly third: number } {
  return { net: `10.${String(Math.floor(i / 64))}`, third: 4 * (i % 64) };
}

/** The address `k` of the VLAN's block `block` (0–3) of Infra i: <net>.<third + block>.<k+1>. */
function inVlan(i: number, block: number, k: number): string {
  const { net, third } = vlan(i);
  return `${net}.${String(third + block)}.${String(k)}`;
}

/** Initial address of machine m of (i, a): block 1, k = a·machines + m (needs ≤ 254 per Infra). */
export function initialAddress(scale: Scale, i: number, a: number, m: number): string {
  const k = a * scale.machines + m;
  return inVlan(i, 1 + Math.floor(k / 254), 1 + (k % 254));
}

/** The `n`-th fresh address of Infra i (never used before in the run): block 2, then block 3. */
export function freshAddress(i: number, n: number): string {
  return inVlan(i, 2 + Math.floor(n / 254), 1 + (n % 254));
}

/** A fixed, valid-looking UUID per (kind, indices): the generator stays a pure function of the indices. */
function uuid(kind: number, ...n: number[]): string {
  const hex = n.reduce((h, x) => (Math.imul(h ^ x, 16777619) >>> 0) % 2 ** 32, kind * 2654435761).toString(16);
  const body = hex.padStart(8, "0") + n.map((x) => x.toString(16).padStart(4, "0")).join("");
  const h = body.padEnd(32, "0").slice(0, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const T0 = "2026-11-30T08:00:00Z";

/** What CAPI's Machine controller and HyperShift's NodePool controller put on a KubeVirt worker Machine. */
function machineDetails(i: number, a: number, m: number, address: string): JsonObject & { metadata: JsonObject } {
  const hc = clusterName(i, a);
  const name = machineName(i, a, m);
  const set = `${hc}-workers-7d9f8c6b5`;
  const condition = (type: string): JsonObject => ({ type, status: "True", lastTransitionTime: T0 });
  return {
    metadata: {
      labels: {
        "cluster.x-k8s.io/cluster-name": `${NS}-${hc}-x7k2p`,
        "cluster.x-k8s.io/set-name": set,
        "hypershift.openshift.io/nodePool": `${hc}-workers`,
        "machine-template-hash": "3851472613",
      },
      annotations: {
        "hypershift.openshift.io/nodePool": `${NS}/${hc}-workers`,
        "hypershift.openshift.io/nodePoolTargetConfigVersion": "5f1c9a0e",
        "machine.cluster.x-k8s.io/exclude-node-draining": "",
      },
      finalizers: ["machine.cluster.x-k8s.io"],
      ownerReferences: [
        {
          apiVersion: "cluster.x-k8s.io/v1beta1",
          kind: "MachineSet",
          name: set,
          uid: uuid(1, i, a),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      bootstrap: { dataSecretName: `user-data-${hc}-workers-4b1f2e9d` },
      clusterName: `${NS}-${hc}-x7k2p`,
      infrastructureRef: {
        apiVersion: "infrastructure.cluster.x-k8s.io/v1alpha1",
        kind: "KubevirtMachine",
        name,
        namespace: controlPlane(i, a),
        uid: uuid(2, i, a, m),
      },
      nodeDeletionTimeout: "10s",
      providerID: `kubevirt://${name}`,
      version: "4.17.3",
    },
    status: {
      addresses: [
        { type: "InternalIP", address },
        { type: "Hostname", address: name },
        { type: "InternalDNS", address: name },
      ],
      bootstrapReady: true,
      conditions: ["Ready", "BootstrapReady", "DrainingSucceeded", "InfrastructureReady", "NodeHealthy"].map(condition),
      infrastructureReady: true,
      lastUpdated: T0,
      nodeInfo: {
        architecture: "amd64",
        bootID: uuid(3, i, a, m),
        containerRuntimeVersion: "cri-o://1.30.6-3.rhaos4.17.gitd8e4a3c.el9",
        kernelVersion: "5.14.0-427.42.1.el9_4.x86_64",
        kubeProxyVersion: "v1.30.5",
        kubeletVersion: "v1.30.5",
        machineID: uuid(4, i, a, m).replace(/-/g, ""),
        operatingSystem: "linux",
        osImage: "Red Hat Enterprise Linux CoreOS 417.94.202410211619-0",
        systemUUID: uuid(5, i, a, m),
      },
      nodeRef: { apiVersion: "v1", kind: "Node", name, uid: uuid(6, i, a, m) },
      observedGeneration: 2,
      phase: "Running",
    },
  };
}

/** A Machine as CAPI leaves it: the NodePool annotation and its VLAN address in status (and, realistic, the rest). */
export function machineObject(i: number, a: number, m: number, address: string, realistic = false): JsonObject {
  const meta = { name: machineName(i, a, m), namespace: controlPlane(i, a) };
  if (realistic) {
    const d = machineDetails(i, a, m, address);
    return { apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Machine", ...d, metadata: { ...meta, ...d.metadata } };
  }
  return {
    apiVersion: "cluster.x-k8s.io/v1beta1",
    kind: "Machine",
    metadata: { ...meta, annotations: { "hypershift.openshift.io/nodePool": `${NS}/${clusterName(i, a)}-workers` } },
    spec: { clusterName: clusterName(i, a) },
    status: { addresses: [{ type: "InternalIP", address }] },
  };
}

/** A control-plane Service as HyperShift's control-plane operator creates it. */
function serviceObject(
  realistic: boolean,
  namespace: string,
  name: string,
  clusterIP: string,
  port: number,
  owner: string,
): JsonObject {
  if (!realistic) {
    return {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { type: "ClusterIP", clusterIP, ports: [{ port }] },
    };
  }
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace,
      labels: { app: name, "hypershift.openshift.io/control-plane-component": name },
      ownerReferences: [
        {
          apiVersion: "hypershift.openshift.io/v1beta1",
          kind: "HostedControlPlane",
          name: owner,
          uid: uuid(7, port, clusterIP.length),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      type: "ClusterIP",
      clusterIP,
      clusterIPs: [clusterIP],
      internalTrafficPolicy: "Cluster",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      ports: [{ name: "https", port, protocol: "TCP", targetPort: port }],
      selector: { app: name, "hypershift.openshift.io/control-plane-component": name },
      sessionAffinity: "None",
    },
    status: { loadBalancer: {} },
  };
}

/** A control-plane Namespace as HyperShift creates it (and OpenShift annotates it). */
function namespaceObject(realistic: boolean, name: string, hc: string): JsonObject {
  if (!realistic) return { apiVersion: "v1", kind: "Namespace", metadata: { name } };
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: {
        "hypershift.openshift.io/hosted-control-plane": "true",
        "kubernetes.io/metadata.name": name,
        "pod-security.kubernetes.io/audit": "privileged",
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "privileged",
      },
      annotations: {
        "hypershift.openshift.io/cluster": `${NS}/${hc}`,
        "openshift.io/sa.scc.mcs": "s0:c27,c4",
        "openshift.io/sa.scc.supplemental-groups": "1000710000/10000",
        "openshift.io/sa.scc.uid-range": "1000710000/10000",
      },
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

function infraObject(i: number): JsonObject {
  const at = (block: number, k: number): string => inVlan(i, block, k);
  const { net, third } = vlan(i);
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "Infra",
    metadata: { name: infraName(i), namespace: NS },
    spec: {
      networkConfig: {
        cidr: `${net}.${String(third)}.0/22`,
        gateway: at(0, 1),
        networkAttachmentDefinition: `vlan-${pad(i)}`,
        dnsServers: ["198.51.100.53"],
      },
      infraComponents: {
        dhcp: { serverIP: at(0, 2), rangeStart: at(3, 100), rangeEnd: at(3, 250) },
        dns: { serverIP: at(0, 3) },
        proxy: { serverIP: at(0, 4), internalProxyService: `172.30.0.${String(1 + (i % 250))}` },
      },
    },
  };
}

function nadObject(i: number): JsonObject {
  const name = `vlan-${pad(i)}`;
  return {
    apiVersion: "k8s.cni.cncf.io/v1",
    kind: "NetworkAttachmentDefinition",
    metadata: { name, namespace: NS },
    spec: {
      config: JSON.stringify({
        cniVersion: "0.3.1",
        name,
        type: "bridge",
        bridge: `br-${name}`,
        vlan: 100 + i,
        ipam: {},
      }),
    },
  };
}

/** Every object of the cluster, Namespaces first (the fake wants them before their contents). */
export function* clusterObjects(scale: Scale): Generator<JsonObject> {
  for (let i = 0; i < scale.infras; i++) {
    for (let a = 0; a < scale.attachments; a++)
      yield namespaceObject(scale.realistic, controlPlane(i, a), clusterName(i, a));
  }
  for (let i = 0; i < scale.infras; i++) {
    yield nadObject(i);
    yield infraObject(i);
    for (let a = 0; a < scale.attachments; a++) {
      const hc = clusterName(i, a);
      const cp = controlPlane(i, a);
      const n = i * scale.attachments + a;
      yield {
        apiVersion: "hostedcluster.densityops.com/v1alpha1",
        kind: "InfraClusterAttachment",
        metadata: { name: hc, namespace: NS },
        spec: {
          infraRef: { name: infraName(i) },
          hostedClusterRef: { name: hc, namespace: NS },
          dns: { clusterName: hc, baseDomain: "bench.example.com" },
        },
      };
      yield {
        apiVersion: "hypershift.openshift.io/v1beta1",
        kind: "HostedCluster",
        metadata: { name: hc, namespace: NS },
        spec: { platform: { type: "KubeVirt" } },
      };
      yield {
        apiVersion: "hypershift.openshift.io/v1beta1",
        kind: "NodePool",
        metadata: { name: `${hc}-workers`, namespace: NS },
        spec: { clusterName: hc, replicas: scale.machines, platform: { type: "KubeVirt" } },
      };
      const ip = (last: number): string => `172.${String(16 + (n >> 8))}.${String(n & 255)}.${String(last)}`;
      const services: [string, number, number][] = [
        ["kube-apiserver", 6443, 1],
        ["oauth-openshift", 6443, 2],
        ["ignition-server-proxy", 443, 3],
        ["konnectivity-server", 8091, 4],
      ];
      for (const [name, port, last] of services) yield serviceObject(scale.realistic, cp, name, ip(last), port, hc);
      for (let m = 0; m < scale.machines; m++)
        yield machineObject(i, a, m, initialAddress(scale, i, a, m), scale.realistic);
    }
  }
}
