// Every API permission the operator uses — the one list deploy/rbac is generated from
// (test/operator/desired/deploy.test.ts keeps the committed YAML equal to it). Whoever adds an API
// call adds its row here; nothing else grants anything. Pure.
import { stringify } from "yaml";
import { GROUP } from "../../api/schema.js";
import { cmp } from "./objects.js";
import { DEFAULT_OPERATOR_NAMESPACE } from "./settings.js";

/** One RBAC rule: these verbs on these resources of one API group ("" = core). */
export interface Permission {
  readonly apiGroup: string;
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Why the operator needs it. */
  readonly why: string;
}

// Server-side apply is a PATCH, and a PATCH that creates the object also needs `create`.
const READ = ["get", "list", "watch"] as const;
const APPLY_AND_PRUNE = ["create", "delete", "get", "list", "patch", "watch"] as const;

/** Cluster-wide permissions of the operator's ServiceAccount (ClusterRole `oooi-operator`). */
export const OPERATOR_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: GROUP,
    resources: ["infras", "infraclusterattachments"],
    verbs: [...READ, "patch"],
    why: "watch the API objects; patch adds/removes the attachment finalizer",
  },
  {
    apiGroup: GROUP,
    resources: ["infras/status", "infraclusterattachments/status"],
    verbs: ["patch"],
    why: "write conditions, counts and componentStatus; appsIngressStatus",
  },
  {
    apiGroup: GROUP,
    resources: ["infras/finalizers"],
    verbs: ["update"],
    why: "children's ownerReferences set blockOwnerDeletion (OwnerReferencesPermissionEnforcement)",
  },
  {
    apiGroup: GROUP,
    resources: ["dhcpservers", "dnsservers", "proxyservers"],
    verbs: APPLY_AND_PRUNE,
    why: "apply and prune the child CRs",
  },
  {
    apiGroup: GROUP,
    resources: ["dhcpservers/status", "dnsservers/status", "proxyservers/status"],
    verbs: ["patch"],
    why: "ACK/NACK, lease counts on the children",
  },
  {
    apiGroup: "",
    resources: ["configmaps", "persistentvolumeclaims", "serviceaccounts", "services"],
    verbs: APPLY_AND_PRUNE,
    why: "workload ConfigMaps, lease PVC, Kea ServiceAccount, Services; Services are also read cluster-wide (control-plane targets, internalProxyService)",
  },
  {
    apiGroup: "",
    resources: ["events"],
    verbs: ["create", "get", "patch"],
    why: "Events on condition transitions and NACKs; get+patch increments a repeated one's count",
  },
  {
    apiGroup: "",
    resources: ["namespaces"],
    verbs: READ,
    why: "an attachment waits until its control-plane namespace exists",
  },
  {
    apiGroup: "apps",
    resources: ["deployments"],
    verbs: APPLY_AND_PRUNE,
    why: "Envoy, CoreDNS and Kea workloads; availability for componentStatus",
  },
  {
    apiGroup: "k8s.cni.cncf.io",
    resources: ["network-attachment-definitions"],
    verbs: APPLY_AND_PRUNE,
    why: "per-component static-IPAM NADs; reading the Infra's NAD they copy",
  },
  {
    apiGroup: "networking.k8s.io",
    resources: ["networkpolicies"],
    verbs: APPLY_AND_PRUNE,
    why: "allow-infrastructure in each control-plane namespace",
  },
  {
    apiGroup: "hypershift.openshift.io",
    resources: ["hostedclusters", "nodepools"],
    verbs: READ,
    why: "hosted clusters and their KubeVirt NodePools",
  },
  {
    apiGroup: "",
    resources: ["secrets"],
    verbs: ["get"],
    why: "apps ingress: the HostedCluster's status.kubeconfig Secret (read by name, never listed or watched)",
  },
  {
    apiGroup: "",
    resources: ["secrets"],
    verbs: ["create", "get", "update"],
    why: "mTLS on xDS (src/pki/store.ts): the CA Secret in the operator's namespace, each ProxyServer's and DHCPServer's client certificate Secret beside it, replaced in place on rotation (read by name, never listed or watched)",
  },
  { apiGroup: "cluster.x-k8s.io", resources: ["machines"], verbs: READ, why: "worker addresses (CAPI Machine status)" },
  {
    apiGroup: "kubevirt.io",
    resources: ["virtualmachineinstances"],
    verbs: READ,
    why: "worker MACs and addresses (DHCP reservations, fallback addresses)",
  },
];

/**
 * What apps-ingress automation does in each hosted cluster, with the credentials of the
 * HostedCluster's kubeconfig (HyperShift's admin kubeconfig grants it; documented, not deployed).
 */
export const HOSTED_CLUSTER_PERMISSIONS: readonly Permission[] = [
  { apiGroup: "", resources: ["nodes"], verbs: ["list"], why: "the gate: at least one Ready Node" },
  {
    apiGroup: "",
    resources: ["services"],
    verbs: ["delete", "list", "patch", "watch"],
    why: "the LoadBalancer Service <service.namespace>/<service.name>; its VIP from a watch",
  },
  {
    apiGroup: "operators.coreos.com",
    resources: ["subscriptions", "clusterserviceversions"],
    verbs: ["delete", "get", "patch"],
    why: "the metallb-operator Subscription in openshift-operators; its CSV on cleanup",
  },
  {
    apiGroup: "metallb.io",
    resources: ["metallbs", "ipaddresspools", "l2advertisements"],
    verbs: ["delete", "patch"],
    why: "MetalLB, IPAddressPool and L2Advertisement in openshift-operators",
  },
];

/** Permissions in the operator's own namespace only (Role `oooi-leader-election`). */
export const LEADER_ELECTION_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: "coordination.k8s.io",
    resources: ["leases"],
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    why: "leader election Lease (only the holder writes); each replica's report heartbeat Lease (src/operator/fleet.ts)",
  },
  {
    apiGroup: "",
    resources: ["configmaps"],
    verbs: ["create", "delete", "get", "list", "patch", "watch"],
    why: "each replica's report of its xDS nodes, read by the leader (src/operator/fleet.ts)",
  },
];

/** Names of the RBAC objects in deploy/rbac. */
export const RBAC_NAMES = {
  serviceAccount: "oooi-operator",
  clusterRole: "oooi-operator",
  leaderElectionRole: "oooi-leader-election",
} as const;

/** PolicyRules: one per permission, resources and verbs sorted, rules sorted by group then resources. */
export function policyRules(
  permissions: readonly Permission[],
): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return permissions
    .map((p) => ({ apiGroups: [p.apiGroup], resources: [...p.resources].sort(), verbs: [...new Set(p.verbs)].sort() }))
    .sort((a, b) => cmp(key(a), key(b)));
}

function key(r: { apiGroups: string[]; resources: string[] }): string {
  return `${r.apiGroups[0] ?? ""} ${r.resources.join(",")}`;
}

const HEADER =
  "# Generated from src/operator/desired/permissions.ts; do not edit.\n# Regenerate: UPDATE_DEPLOY=1 npx vitest run test/operator/desired/deploy.test.ts\n";

/** deploy/rbac/cluster_role.yaml. */
export function clusterRoleYaml(): string {
  return (
    HEADER +
    stringify(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: RBAC_NAMES.clusterRole, labels: { "app.kubernetes.io/name": "oooi" } },
        rules: policyRules(OPERATOR_PERMISSIONS),
      },
      { lineWidth: 0 },
    )
  );
}

/** deploy/rbac/leader_election_role.yaml. */
export function leaderElectionRoleYaml(namespace = DEFAULT_OPERATOR_NAMESPACE): string {
  return (
    HEADER +
    stringify(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: RBAC_NAMES.leaderElectionRole, namespace, labels: { "app.kubernetes.io/name": "oooi" } },
        rules: policyRules(LEADER_ELECTION_PERMISSIONS),
      },
      { lineWidth: 0 },
    )
  );
}
