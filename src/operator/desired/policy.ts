// NetworkPolicy `allow-infrastructure` in each served control-plane namespace: admits the proxy
// pods of the Infras serving it (docs/reference.md#children). Cross-namespace, so no ownerReference: it is
// labelled for the attachment finalizer and annotated with the attachments that need it. Pure.
import { groupBy } from "../../util/group.js";
import type { DesiredObject } from "./objects.js";
import {
  ATTACHMENTS_ANNOTATION,
  CLEANUP_BY_FINALIZER,
  CLEANUP_LABEL,
  cmp,
  MANAGED_BY,
  MANAGED_BY_LABEL,
} from "./objects.js";

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
