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

/** Initial address of machine m of (i, a): 10.<i>.1.<k+1>, k = a·machines + m (needs ≤ 254 per Infra). */
export function initialAddress(scale: Scale, i: number, a: number, m: number): string {
  const k = a * scale.machines + m;
  return `10.${String(i)}.${String(1 + Math.floor(k / 254))}.${String(1 + (k % 254))}`;
}

/** The `n`-th fresh address of Infra i (never used before in the run): 10.<i>.2.x, then .3.x. */
export function freshAddress(i: number, n: number): string {
  return `10.${String(i)}.${String(2 + Math.floor(n / 254))}.${String(1 + (n % 254))}`;
}

/** A Machine as CAPI leaves it: the NodePool annotation and its VLAN address in status. */
export function machineObject(i: number, a: number, m: number, address: string): JsonObject {
  return {
    apiVersion: "cluster.x-k8s.io/v1beta1",
    kind: "Machine",
    metadata: {
      name: machineName(i, a, m),
      namespace: controlPlane(i, a),
      annotations: { "hypershift.openshift.io/nodePool": `${NS}/${clusterName(i, a)}-workers` },
    },
    spec: { clusterName: clusterName(i, a) },
    status: { addresses: [{ type: "InternalIP", address }] },
  };
}

function infraObject(i: number): JsonObject {
  const net = `10.${String(i)}`;
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "Infra",
    metadata: { name: infraName(i), namespace: NS },
    spec: {
      networkConfig: {
        cidr: `${net}.0.0/22`,
        gateway: `${net}.0.1`,
        networkAttachmentDefinition: `vlan-${pad(i)}`,
        dnsServers: ["198.51.100.53"],
      },
      infraComponents: {
        dhcp: { serverIP: `${net}.0.2`, rangeStart: `${net}.3.100`, rangeEnd: `${net}.3.250` },
        dns: { serverIP: `${net}.0.3` },
        proxy: { serverIP: `${net}.0.4`, internalProxyService: `172.30.0.${String(1 + (i % 250))}` },
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
      yield { apiVersion: "v1", kind: "Namespace", metadata: { name: controlPlane(i, a) } };
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
      for (const [name, port, last] of services) {
        yield {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name, namespace: cp },
          spec: { type: "ClusterIP", clusterIP: ip(last), ports: [{ port }] },
        };
      }
      for (let m = 0; m < scale.machines; m++) yield machineObject(i, a, m, initialAddress(scale, i, a, m));
    }
  }
}
