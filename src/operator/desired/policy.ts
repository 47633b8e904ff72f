// NetworkPolicies: `allow-infrastructure` in each served control-plane namespace admits only the
// proxy pods of the Infras serving it (docs/reference.md#children) — cross-namespace, so no
// ownerReference: it is labelled for the attachment finalizer and annotated with the attachments that
// need it; and `<infra>-proxy` beside each proxy admits, on the pod network, only the namespaces
// internalClients.namespaceSelector selects. Pure.
import type { LabelSelector } from "../../api/schema.js";
import { groupBy } from "../../util/group.js";
import type { DesiredObject, OwnerReference } from "./objects.js";
import { ATTACHMENTS_ANNOTATION, CLEANUP_BY_FINALIZER, CLEANUP_LABEL, cmp } from "./objects.js";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../api/labels.js";

/** Name of the policy in every control-plane namespace. */
export const NETWORK_POLICY_NAME = "allow-infrastructure";

/**
 * Pod ports the proxy reaches in a HyperShift control-plane namespace. NetworkPolicy matches the
 * pod port after Service translation: kube-apiserver and oauth-openshift listen on 6443,
 * konnectivity-server on 8091, and ignition-server-proxy's Service 443 lands on 8443.
 */
export const CONTROL_PLANE_PORTS = [443, 6443, 8091, 8443] as const;

/** One proxy that must reach a control-plane namespace, on behalf of one attachment. */
export interface PolicyClaim {
  readonly controlPlaneNamespace: string;
  /** "<namespace>/<name>" of the attachment. */
  readonly attachment: string;
  /** Namespace of the proxy pods (the Infra's). */
  readonly proxyNamespace: string;
  readonly proxyPodLabels: Readonly<Record<string, string>>;
}

/** One policy per control-plane namespace, admitting every claiming proxy (sorted, deduplicated). */
export function networkPolicies(claims: readonly PolicyClaim[]): DesiredObject[] {
  const byNamespace = groupBy(claims, (c) => c.controlPlaneNamespace);
  return [...byNamespace.keys()].sort(cmp).map((ns) => {
    const group = byNamespace.get(ns) ?? [];
    const peers = new Map<string, Record<string, unknown>>();
    for (const c of group) {
      const peer = {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": c.proxyNamespace } },
        podSelector: { matchLabels: { ...c.proxyPodLabels } },
      };
      peers.set(JSON.stringify(peer), peer);
    }
    const attachments = [...new Set(group.map((c) => c.attachment))].sort(cmp);
    return {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: {
        name: NETWORK_POLICY_NAME,
        namespace: ns,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [CLEANUP_LABEL]: CLEANUP_BY_FINALIZER },
        annotations: { [ATTACHMENTS_ANNOTATION]: attachments.join(",") },
      },
      spec: {
        podSelector: {},
        policyTypes: ["Ingress"],
        ingress: [
          {
            from: [...peers.keys()].sort(cmp).map((k) => peers.get(k)),
            ports: CONTROL_PLANE_PORTS.map((port) => ({ protocol: "TCP", port })),
          },
        ],
      },
    };
  });
}

/** What the proxy's own NetworkPolicy is built from. */
export interface ProxyPolicyInput {
  readonly infraName: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly podLabels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
  /** The proxy's pod-network ports (Envoy's listeners). */
  readonly ports: readonly number[];
  /** spec.infraComponents.proxy.internalClients.namespaceSelector; undefined admits no pod. */
  readonly namespaceSelector: LabelSelector | undefined;
  /** Ports a LoadBalancer Service exposes to the world (externalService): open to every source. */
  readonly publicPorts: readonly number[];
}

/**
 * `<infra>-proxy`: selects the Infra's proxy pods and admits pods of the selected namespaces on the
 * proxy's ports — else any management-cluster pod could reach every attached control plane
 * through the internal proxy Service, around HyperShift's own policies. A NetworkPolicy governs the
 * pod's cluster-network interface only, so VLAN clients (the Multus interface) are unaffected
 * (kubernetes.io/docs/concepts/services-networking/network-policies; Multus secondary networks
 * need MultiNetworkPolicy). An empty `ingress` admits nobody.
 */
export function proxyNetworkPolicy(input: ProxyPolicyInput): DesiredObject {
  const tcp = (ports: readonly number[]) => ports.map((port) => ({ protocol: "TCP", port }));
  const ingress: Record<string, unknown>[] = [];
  if (input.namespaceSelector !== undefined)
    ingress.push({ from: [{ namespaceSelector: structuredClone(input.namespaceSelector) }], ports: tcp(input.ports) });
  if (input.publicPorts.length > 0) ingress.push({ ports: tcp(input.publicPorts) });
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: `${input.infraName}-proxy`,
      namespace: input.namespace,
      labels: input.labels,
      ownerReferences: [input.owner],
    },
    spec: { podSelector: { matchLabels: { ...input.podLabels } }, policyTypes: ["Ingress"], ingress },
  };
}
