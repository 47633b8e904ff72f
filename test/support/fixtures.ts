// Builders for the objects a ClusterState holds; specs go through the real schema defaulting.
import type { Infra, InfraClusterAttachment } from "../../src/api/schema.js";
import type { Machine, Namespace, NodePool, Service, VirtualMachineInstance } from "../../src/api/external.js";
import { decodeResource } from "../../src/api/validate.js";
import { EMPTY_STATE, type ClusterState } from "../../src/model/types.js";

export const NS = "clusters";

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

function merge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const b = out[k];
    out[k] =
      v !== null &&
      typeof v === "object" &&
      !Array.isArray(v) &&
      b !== null &&
      typeof b === "object" &&
      !Array.isArray(b)
        ? merge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

function decoded(raw: Record<string, unknown>, kind: string): unknown {
  const r = decodeResource(raw, kind);
  if (!r.ok) throw new Error(`fixture ${kind} invalid: ${JSON.stringify(r.errors)}`);
  return r.value;
}

/** A valid Infra on 192.0.2.0/24: gateway .1, DHCP .2, DNS .3, proxy .4, pool .100-.199. */
export function infra(name = "vlan100", spec: DeepPartial<Infra["spec"]> = {}, namespace = NS): Infra {
  const base = {
    networkConfig: {
      cidr: "192.0.2.0/24",
      gateway: "192.0.2.1",
      networkAttachmentDefinition: "vlan100",
      dnsServers: ["198.51.100.53"],
    },
    infraComponents: {
      dhcp: { serverIP: "192.0.2.2", rangeStart: "192.0.2.100", rangeEnd: "192.0.2.199" },
      dns: { serverIP: "192.0.2.3" },
      proxy: {
        serverIP: "192.0.2.4",
        internalProxyService: "10.96.0.44",
        internalClients: {
          namespaceSelector: { matchLabels: { "hostedcluster.densityops.com/internal-client": "true" } },
        },
      },
    },
  };
  return decoded(
    {
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "Infra",
      metadata: { name, namespace },
      spec: merge(base, spec),
    },
    "Infra",
  ) as Infra;
}

/** An Infra on the ClusterUserDefinedNetwork "vlan-l" (its NAD made in "infra"), Localnet/Secondary with DHCP. */
export function cudnInfra(): Infra {
  return withoutNad(
    infra("vlan100", {
      networkConfig: {
        attachment: { kind: "ClusterUserDefinedNetwork", name: "vlan-l", namespace: "infra" },
        topology: "Localnet",
        role: "Secondary",
        exposure: "Layer2",
        ipam: "DHCP",
      },
    }),
  );
}

/** The fixture Infra on no network at all (an invalid spec). */
export function infraWithoutNetwork(): Infra {
  return withoutNad(infra("vlan100"));
}

function withoutNad(i: Infra): Infra {
  delete (i.spec.networkConfig as { networkAttachmentDefinition?: string }).networkAttachmentDefinition;
  return i;
}

export function attachment(
  name: string,
  opts: {
    infra?: string;
    cluster?: string;
    baseDomain?: string;
    hc?: string;
    namespace?: string;
    /** metadata.creationTimestamp (RFC 3339). */
    created?: string;
    spec?: DeepPartial<InfraClusterAttachment["spec"]>;
    status?: InfraClusterAttachment["status"];
  } = {},
): InfraClusterAttachment {
  const hc = opts.hc ?? name;
  const a = decoded(
    {
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "InfraClusterAttachment",
      metadata: {
        name,
        namespace: opts.namespace ?? NS,
        ...(opts.created === undefined ? {} : { creationTimestamp: opts.created }),
      },
      spec: merge(
        {
          infraRef: { name: opts.infra ?? "vlan100" },
          hostedClusterRef: { name: hc, namespace: NS },
          dns: { clusterName: opts.cluster ?? name, baseDomain: opts.baseDomain ?? "example.com" },
        },
        opts.spec ?? {},
      ),
    },
    "InfraClusterAttachment",
  ) as InfraClusterAttachment;
  return opts.status === undefined ? a : { ...a, status: opts.status };
}

export function namespace(name: string): Namespace {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, namespace: "" } };
}

export function service(namespace: string, name: string, clusterIP: string, ports: number[]): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: { type: "ClusterIP", clusterIP, ports: ports.map((port) => ({ port })) },
  };
}

/** The four control-plane Services HyperShift creates, with ClusterIPs 10.96.<n>.1-4. */
export function controlPlaneServices(cp: string, n: number): Service[] {
  return [
    service(cp, "kube-apiserver", `10.96.${n}.1`, [6443]),
    service(cp, "oauth-openshift", `10.96.${n}.2`, [6443]),
    service(cp, "ignition-server-proxy", `10.96.${n}.3`, [443]),
    service(cp, "konnectivity-server", `10.96.${n}.4`, [8091]),
  ];
}

export function nodePool(hc: string, name = `${hc}-workers`, platform = "KubeVirt"): NodePool {
  return {
    apiVersion: "hypershift.openshift.io/v1beta1",
    kind: "NodePool",
    metadata: { name, namespace: NS },
    spec: { clusterName: hc, platform: { type: platform } },
  };
}

export function machine(cp: string, name: string, pool: string, addresses: string[]): Machine {
  return {
    apiVersion: "cluster.x-k8s.io/v1beta1",
    kind: "Machine",
    metadata: { name, namespace: cp, annotations: { "hypershift.openshift.io/nodePool": `${NS}/${pool}` } },
    status: { addresses: addresses.map((address) => ({ type: "InternalIP", address })) },
  };
}

export function vmi(
  namespace: string,
  name: string,
  mac: string,
  ip?: string,
  opts: { nad?: string; created?: string } = {},
): VirtualMachineInstance {
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: { name, namespace, ...(opts.created === undefined ? {} : { creationTimestamp: opts.created }) },
    spec: {
      domain: { devices: { interfaces: [{ name: "default" }, { name: "vlan", macAddress: mac }] } },
      networks: [
        { name: "default", pod: {} },
        { name: "vlan", multus: { networkName: opts.nad ?? `${NS}/vlan100` } },
      ],
    },
    status: { interfaces: [{ name: "vlan", mac, ...(ip === undefined ? {} : { ipAddress: ip }) }] },
  };
}

export function state(parts: Partial<ClusterState>): ClusterState {
  return { ...EMPTY_STATE, ...parts };
}

/** One hosted cluster `name` with its control-plane namespace, Services, NodePool and workers. */
export function hostedCluster(name: string, n: number, workers: string[]): Partial<ClusterState> {
  const cp = `${NS}-${name}`;
  return {
    namespaces: [namespace(cp)],
    services: controlPlaneServices(cp, n),
    nodePools: [nodePool(name)],
    machines: workers.map((ip, i) => machine(cp, `${name}-worker-${i}`, `${name}-workers`, [ip])),
  };
}

/** Concatenates the arrays of several partial states. */
export function combine(...parts: Partial<ClusterState>[]): ClusterState {
  const out: Record<string, unknown[]> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p)) out[k] = [...(out[k] ?? []), ...(v as unknown[])];
  return state(out);
}

/** A second VLAN's spec (NAD vlan200 on 198.51.100.0/24), for an Infra beside infra()'s default one. */
export const VLAN200 = {
  networkConfig: { cidr: "198.51.100.0/24", gateway: "198.51.100.1", networkAttachmentDefinition: "vlan200" },
  infraComponents: {
    dhcp: { serverIP: "198.51.100.2", rangeStart: "198.51.100.100", rangeEnd: "198.51.100.199" },
    dns: { serverIP: "198.51.100.3" },
    proxy: { serverIP: "198.51.100.4" },
  },
};
