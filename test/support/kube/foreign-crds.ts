// The third-party kinds oooi watches (HyperShift, CAPI, KubeVirt, Multus) as minimal CRDs of our
// own: the right group, version, names and scope, and a schema that keeps whatever is sent. They
// are not the upstream definitions: they let a real API server serve, list and watch these kinds
// (with their real discovery, RBAC and watch semantics), not validate them.

interface ForeignKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  /** Default Namespaced. */
  readonly scope?: "Namespaced" | "Cluster";
}

const FOREIGN: readonly ForeignKind[] = [
  { group: "hypershift.openshift.io", version: "v1beta1", kind: "HostedCluster", plural: "hostedclusters" },
  { group: "hypershift.openshift.io", version: "v1beta1", kind: "NodePool", plural: "nodepools" },
  { group: "cluster.x-k8s.io", version: "v1beta1", kind: "Machine", plural: "machines" },
  { group: "kubevirt.io", version: "v1", kind: "VirtualMachineInstance", plural: "virtualmachineinstances" },
  {
    group: "k8s.cni.cncf.io",
    version: "v1",
    kind: "NetworkAttachmentDefinition",
    plural: "network-attachment-definitions",
  },
];

/**
 * OpenShift's SecurityContextConstraints, kept apart: with it served, the operator discovers
 * security.openshift.io and stops pinning uids, which only the OpenShift suites want.
 */
const OPENSHIFT: readonly ForeignKind[] = [
  {
    group: "security.openshift.io",
    version: "v1",
    kind: "SecurityContextConstraints",
    plural: "securitycontextconstraints",
    scope: "Cluster",
  },
];

/** The Prometheus Operator's kinds deploy/monitoring holds (stand-ins: their schemas keep whatever is sent). */
const PROMETHEUS_OPERATOR: readonly ForeignKind[] = [
  { group: "monitoring.coreos.com", version: "v1", kind: "ServiceMonitor", plural: "servicemonitors" },
  { group: "monitoring.coreos.com", version: "v1", kind: "PodMonitor", plural: "podmonitors" },
  { group: "monitoring.coreos.com", version: "v1", kind: "PrometheusRule", plural: "prometheusrules" },
];

/** apiextensions.k8s.io/v1 CRDs for the foreign kinds (no status subresource: tests write status with the object). */
export function foreignCrds(): Record<string, unknown>[] {
  return FOREIGN.map(crd);
}

/** The CRD of OpenShift's SecurityContextConstraints, the kind of the SCC deploy/openshift ships. */
export function openshiftCrds(): Record<string, unknown>[] {
  return OPENSHIFT.map(crd);
}

/** CRDs of the Prometheus Operator's ServiceMonitor, PodMonitor and PrometheusRule. */
export function prometheusOperatorCrds(): Record<string, unknown>[] {
  return PROMETHEUS_OPERATOR.map(crd);
}

function crd(k: ForeignKind): Record<string, unknown> {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${k.plural}.${k.group}` },
    spec: {
      group: k.group,
      scope: k.scope ?? "Namespaced",
      names: { kind: k.kind, plural: k.plural, singular: k.kind.toLowerCase(), listKind: `${k.kind}List` },
      versions: [
        {
          name: k.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}
