// Resource kinds the fake can serve: Kubernetes built-ins, the third-party CRDs oooi watches, and oooi's own.
import { loadCrdKinds, OOOI_CRD_DIR } from "./crds.js";
import type { ListType, ResourceKind } from "./types.js";

const byName: ListType = { type: "map", keys: ["name"] };

// Pod spec lists that kube-apiserver merges by key (x-kubernetes-list-map-keys in its OpenAPI).
function podSpecLists(prefix: string): Record<string, ListType> {
  return {
    [`${prefix}.containers`]: byName,
    [`${prefix}.initContainers`]: byName,
    [`${prefix}.volumes`]: byName,
    [`${prefix}.containers[].env`]: byName,
    [`${prefix}.containers[].ports`]: { type: "map", keys: ["containerPort", "protocol"] },
    [`${prefix}.containers[].volumeMounts`]: { type: "map", keys: ["mountPath"] },
    [`${prefix}.initContainers[].env`]: byName,
    [`${prefix}.initContainers[].volumeMounts`]: { type: "map", keys: ["mountPath"] },
  };
}

const conditionsByType: Record<string, ListType> = { "status.conditions": { type: "map", keys: ["type"] } };

function core(kind: string, plural: string, extra: Partial<ResourceKind> = {}): ResourceKind {
  return {
    group: "",
    version: "v1",
    kind,
    plural,
    singular: kind.toLowerCase(),
    namespaced: true,
    builtin: true,
    ...extra,
  };
}

/** Namespace (cluster-scoped, `ns`). */
export const NAMESPACE: ResourceKind = core("Namespace", "namespaces", {
  namespaced: false,
  shortNames: ["ns"],
  statusSubresource: true,
});

/** The built-in kinds oooi reads or writes, with their kube-apiserver discovery facts. */
export const BUILTIN_KINDS: readonly ResourceKind[] = [
  NAMESPACE,
  core("ConfigMap", "configmaps", { shortNames: ["cm"] }),
  core("Event", "events", { shortNames: ["ev"] }),
  core("Secret", "secrets"),
  core("ServiceAccount", "serviceaccounts", { shortNames: ["sa"] }),
  core("Service", "services", {
    shortNames: ["svc"],
    categories: ["all"],
    statusSubresource: true,
    listTypes: { "spec.ports": { type: "map", keys: ["port", "protocol"] } },
  }),
  core("Pod", "pods", {
    shortNames: ["po"],
    categories: ["all"],
    statusSubresource: true,
    listTypes: { ...podSpecLists("spec"), ...conditionsByType },
  }),
  core("PersistentVolumeClaim", "persistentvolumeclaims", { shortNames: ["pvc"], statusSubresource: true }),
  {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    singular: "deployment",
    namespaced: true,
    shortNames: ["deploy"],
    categories: ["all"],
    statusSubresource: true,
    builtin: true,
    generation: true,
    listTypes: { ...podSpecLists("spec.template.spec"), ...conditionsByType },
  },
  {
    group: "networking.k8s.io",
    version: "v1",
    kind: "NetworkPolicy",
    plural: "networkpolicies",
    singular: "networkpolicy",
    namespaced: true,
    shortNames: ["netpol"],
    builtin: true,
    generation: true,
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    kind: "Lease",
    plural: "leases",
    singular: "lease",
    namespaced: true,
    builtin: true,
  },
  {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    singular: "customresourcedefinition",
    namespaced: false,
    shortNames: ["crd", "crds"],
    categories: ["api-extensions"],
    statusSubresource: true,
    builtin: true,
    generation: true,
  },
  ...(["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"] as const).map((kind): ResourceKind => ({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind,
    plural: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    namespaced: !kind.startsWith("Cluster"),
    builtin: true,
  })),
];

/** HyperShift HostedCluster (hypershift.openshift.io/v1beta1). */
export const HOSTED_CLUSTER: ResourceKind = {
  group: "hypershift.openshift.io",
  version: "v1beta1",
  kind: "HostedCluster",
  plural: "hostedclusters",
  singular: "hostedcluster",
  namespaced: true,
  shortNames: ["hc", "hcs"],
  statusSubresource: true,
  listTypes: conditionsByType,
};
/** HyperShift NodePool (hypershift.openshift.io/v1beta1). */
export const NODE_POOL: ResourceKind = {
  group: "hypershift.openshift.io",
  version: "v1beta1",
  kind: "NodePool",
  plural: "nodepools",
  singular: "nodepool",
  namespaced: true,
  shortNames: ["np", "nps"],
  statusSubresource: true,
  listTypes: conditionsByType,
};
/** Cluster API Machine (cluster.x-k8s.io/v1beta1). */
export const MACHINE: ResourceKind = {
  group: "cluster.x-k8s.io",
  version: "v1beta1",
  kind: "Machine",
  plural: "machines",
  singular: "machine",
  namespaced: true,
  shortNames: ["ma"],
  categories: ["cluster-api"],
  statusSubresource: true,
};
/** KubeVirt VirtualMachineInstance (kubevirt.io/v1). */
export const VIRTUAL_MACHINE_INSTANCE: ResourceKind = {
  group: "kubevirt.io",
  version: "v1",
  kind: "VirtualMachineInstance",
  plural: "virtualmachineinstances",
  singular: "virtualmachineinstance",
  namespaced: true,
  shortNames: ["vmi", "vmis"],
  categories: ["all"],
  statusSubresource: true,
};
/** Multus NetworkAttachmentDefinition (k8s.cni.cncf.io/v1). */
export const NETWORK_ATTACHMENT_DEFINITION: ResourceKind = {
  group: "k8s.cni.cncf.io",
  version: "v1",
  kind: "NetworkAttachmentDefinition",
  plural: "network-attachment-definitions",
  singular: "network-attachment-definition",
  namespaced: true,
  shortNames: ["net-attach-def"],
};

/** The third-party kinds oooi watches or writes (HyperShift, CAPI, KubeVirt, Multus). */
export const EXTERNAL_KINDS: readonly ResourceKind[] = [
  HOSTED_CLUSTER,
  NODE_POOL,
  MACHINE,
  VIRTUAL_MACHINE_INSTANCE,
  NETWORK_ATTACHMENT_DEFINITION,
];

/** oooi's own kinds, as the generated CRDs in deploy/crds define them. */
export const OOOI_KINDS: readonly ResourceKind[] = loadCrdKinds(OOOI_CRD_DIR);
