// Every API permission the operator uses — the one list deploy/rbac is generated from
// (test/operator/desired/deploy.test.ts keeps the committed YAML equal to it; test/kube/rbac.test.ts
// asks the real API server what it grants). Whoever adds an API call adds its row here; nothing else
// grants anything. Cluster-wide the operator only reads workloads: it writes them only in the
// namespaces a platform engineer bound `oooi-workloads` / `oooi-network-policy` in, and it can bind
// nothing itself (no RoleBinding rights; deploy/openshift adds only `bind` on Kea's SCC role, scc.ts),
// so it can never grant itself more. Pure.
import { stringify } from "yaml";
import { GROUP } from "../../api/schema.js";
import { cmp } from "./objects.js";
import { NETWORK_POLICY_NAME } from "./policy.js";
import { DEFAULT_OPERATOR_NAMESPACE } from "./settings.js";

/** One RBAC rule: these verbs on these resources of one API group ("" = core). */
export interface Permission {
  readonly apiGroup: string;
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Only these objects. RBAC cannot restrict a POST create by name; see NETWORK_POLICY_PERMISSIONS. */
  readonly resourceNames?: readonly string[];
  /** Why the operator needs it. */
  readonly why: string;
}

// Server-side apply is a PATCH, and a PATCH that creates the object also needs `create`.
const READ = ["get", "list", "watch"] as const;
const APPLY_AND_PRUNE = ["create", "delete", "get", "list", "patch", "watch"] as const;
const APPLY_BY_NAME = ["create", "delete", "get", "patch"] as const;

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
    verbs: READ,
    why: "observe the workloads (written only where oooi-workloads is bound); Services cluster-wide: control-plane targets, internalProxyService",
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
    verbs: READ,
    why: "availability of the Envoy, CoreDNS and Kea workloads for componentStatus",
  },
  {
    apiGroup: "k8s.cni.cncf.io",
    resources: ["network-attachment-definitions"],
    verbs: READ,
    why: "the Infra's NAD the per-component NADs copy (even in another namespace)",
  },
  {
    apiGroup: "networking.k8s.io",
    resources: ["networkpolicies"],
    verbs: READ,
    why: "observe allow-infrastructure (written only where oooi-network-policy is bound)",
  },
  {
    apiGroup: "hypershift.openshift.io",
    resources: ["hostedclusters", "nodepools"],
    verbs: READ,
    why: "hosted clusters and their KubeVirt NodePools",
  },
  { apiGroup: "cluster.x-k8s.io", resources: ["machines"], verbs: READ, why: "worker addresses (CAPI Machine status)" },
  {
    apiGroup: "kubevirt.io",
    resources: ["virtualmachineinstances"],
    verbs: READ,
    why: "worker MACs and addresses (DHCP reservations, fallback addresses)",
  },
  {
    apiGroup: "authentication.k8s.io",
    resources: ["tokenreviews"],
    verbs: ["create"],
    why: "--http-auth=kubernetes: who the bearer token on the HTTP port belongs to (src/operator/process/access-review.ts)",
  },
  {
    apiGroup: "authorization.k8s.io",
    resources: ["subjectaccessreviews"],
    verbs: ["create"],
    why: "--http-auth=kubernetes: whether that user may get the path (oooi-metrics-reader)",
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

/**
 * ClusterRole `oooi-workloads`, bound by the platform engineer with a RoleBinding in each namespace
 * that holds an Infra (bindingCommand): the workloads oooi runs there. Without it the Infra is
 * Degraded with reason MissingNamespaceBinding, and no other Infra is affected.
 */
export const WORKLOAD_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: "",
    resources: ["configmaps", "persistentvolumeclaims", "serviceaccounts", "services"],
    verbs: APPLY_AND_PRUNE,
    why: "workload ConfigMaps, lease PVC, Kea ServiceAccount, Services",
  },
  {
    apiGroup: "apps",
    resources: ["deployments"],
    verbs: APPLY_AND_PRUNE,
    why: "Envoy, CoreDNS and Kea workloads",
  },
  {
    apiGroup: "k8s.cni.cncf.io",
    resources: ["network-attachment-definitions"],
    verbs: APPLY_AND_PRUNE,
    why: "per-component static-IPAM NADs",
  },
  {
    apiGroup: "networking.k8s.io",
    resources: ["networkpolicies"],
    verbs: APPLY_BY_NAME,
    why: "each proxy's own <infra>-proxy policy (its name follows the Infra's, so RBAC cannot list it)",
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
    why: "mTLS on xDS (src/pki/store.ts): each ProxyServer's and DHCPServer's client certificate Secret, replaced in place on rotation (by name, never listed or watched)",
  },
];

/**
 * ClusterRole `oooi-network-policy`, bound in each control-plane namespace an attachment serves:
 * only the policy oooi owns. RBAC never sees a name on a POST create, so a `create` rule with
 * resourceNames matches no POST — oooi never POSTs: it creates by server-side apply, a PATCH to the
 * object's own URL, which the API server authorizes as `create` of that name (test/kube/rbac.test.ts).
 */
export const NETWORK_POLICY_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: "networking.k8s.io",
    resources: ["networkpolicies"],
    verbs: APPLY_BY_NAME,
    resourceNames: [NETWORK_POLICY_NAME],
    why: "allow-infrastructure, applied by name and pruned by name",
  },
];

/** A ClusterRole bound per namespace by the platform engineer, never by the operator. */
export interface NamespaceRole {
  readonly clusterRole: string;
  /** Which namespaces need the binding, for messages and docs. */
  readonly where: string;
  readonly permissions: readonly Permission[];
}

export const WORKLOADS_ROLE: NamespaceRole = {
  clusterRole: "oooi-workloads",
  where: "each namespace that holds an Infra",
  permissions: WORKLOAD_PERMISSIONS,
};
export const NETWORK_POLICY_ROLE: NamespaceRole = {
  clusterRole: "oooi-network-policy",
  where: "each control-plane namespace an attachment serves",
  permissions: NETWORK_POLICY_PERMISSIONS,
};
export const NAMESPACE_ROLES: readonly NamespaceRole[] = [WORKLOADS_ROLE, NETWORK_POLICY_ROLE];

/**
 * The namespace role that lets the operator `verb` the object `name` of `resource` in `apiGroup`,
 * if any: one whose rule names it, else one whose rule is for any name.
 */
export function namespaceRoleFor(
  apiGroup: string,
  resource: string,
  verb: string,
  name: string,
): NamespaceRole | undefined {
  const grants = (r: NamespaceRole, named: boolean) =>
    r.permissions.some(
      (p) =>
        p.apiGroup === apiGroup &&
        p.resources.includes(resource) &&
        p.verbs.includes(verb) &&
        (named ? (p.resourceNames ?? []).includes(name) : p.resourceNames === undefined),
    );
  return NAMESPACE_ROLES.find((r) => grants(r, true)) ?? NAMESPACE_ROLES.find((r) => grants(r, false));
}

/** The command that binds `role` to the operator's ServiceAccount in `namespace`. */
export function bindingCommand(role: NamespaceRole, namespace: string, operatorNamespace: string): string {
  return `kubectl create rolebinding ${role.clusterRole} --clusterrole=${role.clusterRole} --serviceaccount=${operatorNamespace}:${RBAC_NAMES.serviceAccount} -n ${namespace}`;
}

/** Every grant in deploy/rbac, wherever it is bound. */
export function allPermissions(): Permission[] {
  return [...OPERATOR_PERMISSIONS, ...LEADER_ELECTION_PERMISSIONS, ...NAMESPACE_ROLES.flatMap((r) => r.permissions)];
}

/** Permissions in the operator's own namespace only (Role `oooi-leader-election`). */
export const LEADER_ELECTION_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: "coordination.k8s.io",
    resources: ["leases"],
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    why: "leader election Lease (only the holder writes); each replica's report heartbeat Lease (src/operator/status/fleet.ts)",
  },
  {
    apiGroup: "",
    resources: ["configmaps"],
    verbs: ["create", "delete", "get", "list", "patch", "watch"],
    why: "each replica's report of its xDS nodes, read by the leader (src/operator/status/fleet.ts)",
  },
  {
    apiGroup: "",
    resources: ["secrets"],
    verbs: ["create", "get", "update"],
    why: "mTLS on xDS (src/pki/store.ts): the operator's CA Secret (by name, never listed or watched)",
  },
  {
    apiGroup: "",
    resources: ["pods"],
    verbs: ["get"],
    why: "its own Pod, once at start: the image the dhcp-agent sidecars run (src/operator/process/own-image.ts)",
  },
];

/** Names of the RBAC objects in deploy/rbac. */
export const RBAC_NAMES = {
  serviceAccount: "oooi-operator",
  clusterRole: "oooi-operator",
  leaderElectionRole: "oooi-leader-election",
  metricsReader: "oooi-metrics-reader",
  debugger: "oooi-debugger",
} as const;

// The operator's Lease (src/operator/process/writers.ts LEASE_NAME), named here without importing the process.
const DEBUG_LEASE = "oooi-operator";

/**
 * What a bearer token's user needs to call the operator's debug services (oooi.debug.v1, CSDS) on
 * the xDS port: the verb `debug` on the operator's resource, asked in the operator's namespace
 * (docs/security.md "Who may debug"), so a RoleBinding there grants it.
 */
export const DEBUG_ACCESS = { group: GROUP, resource: "infras", verb: "debug" } as const;

/**
 * The command that lets a subject (`--user=…`, `--group=…`, `--serviceaccount=ns:name`) run
 * `oooi debug --kubeconfig`: a RoleBinding in the operator's namespace, the only one it needs.
 */
export function debuggerBindingCommand(subject: string, operatorNamespace = DEFAULT_OPERATOR_NAMESPACE): string {
  return `kubectl create rolebinding ${RBAC_NAMES.debugger} -n ${operatorNamespace} --clusterrole=${RBAC_NAMES.debugger} ${subject}`;
}

/**
 * What the ClusterRole `oooi-metrics-reader` lets its subjects get on the operator's HTTP port under
 * --http-auth=kubernetes: the status page, its feed, its JSON and the metrics. Non-resource URLs are
 * cluster-wide: only a ClusterRoleBinding grants them (a RoleBinding of this role grants nothing).
 */
export const METRICS_READER_URLS: readonly string[] = ["/", "/events", "/metrics", "/status.json"];

/** The command that lets a ServiceAccount (Prometheus, a person's) read the operator's HTTP port. */
export function metricsReaderBindingCommand(serviceAccount: string): string {
  return `kubectl create clusterrolebinding ${RBAC_NAMES.metricsReader} --clusterrole=${RBAC_NAMES.metricsReader} --serviceaccount=${serviceAccount}`;
}

/** PolicyRules: one per permission, resources and verbs sorted, rules sorted by group then resources. */
export function policyRules(permissions: readonly Permission[]): PolicyRule[] {
  return permissions
    .map((p) => ({
      apiGroups: [p.apiGroup],
      resources: [...p.resources].sort(),
      ...(p.resourceNames === undefined ? {} : { resourceNames: [...p.resourceNames].sort() }),
      verbs: [...new Set(p.verbs)].sort(),
    }))
    .sort((a, b) => cmp(key(a), key(b)));
}

/** An RBAC PolicyRule as deploy/rbac writes it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

function key(r: { apiGroups: string[]; resources: string[] }): string {
  return `${r.apiGroups[0] ?? ""} ${r.resources.join(",")}`;
}

const HEADER =
  "# Generated from src/operator/desired/permissions.ts; do not edit.\n# Regenerate: UPDATE_DEPLOY=1 npx vitest run test/operator/desired/deploy.test.ts\n";

/** deploy/rbac/cluster_role.yaml by default; a namespace role's ClusterRole (bound by RoleBindings) when given. */
export function clusterRoleYaml(role?: NamespaceRole): string {
  const header =
    role === undefined
      ? HEADER
      : `${HEADER}# Bind it in ${role.where} (the operator cannot bind anything itself):\n#   ${bindingCommand(role, "<namespace>", DEFAULT_OPERATOR_NAMESPACE)}\n`;
  return (
    header +
    stringify(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: role?.clusterRole ?? RBAC_NAMES.clusterRole, labels: { "app.kubernetes.io/name": "oooi" } },
        rules: policyRules(role?.permissions ?? OPERATOR_PERMISSIONS),
      },
      { lineWidth: 0 },
    )
  );
}

/** deploy/rbac/metrics_reader_cluster_role.yaml. */
export function metricsReaderRoleYaml(): string {
  return (
    `${HEADER}# Bind it with a ClusterRoleBinding to who may read the operator's HTTP port (docs/security.md), e.g.:\n` +
    `#   ${metricsReaderBindingCommand("monitoring:prometheus-k8s")}\n` +
    stringify(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: RBAC_NAMES.metricsReader, labels: { "app.kubernetes.io/name": "oooi" } },
        rules: [{ nonResourceURLs: [...METRICS_READER_URLS].sort(), verbs: ["get"] }],
      },
      { lineWidth: 0 },
    )
  );
}

/** deploy/rbac/debugger_cluster_role.yaml: `oooi debug --kubeconfig` (find the leader, port-forward to it, debug). */
export function debuggerRoleYaml(): string {
  return (
    `${HEADER}# Bind it in the operator's namespace to who may run \`oooi debug --kubeconfig\` (docs/security.md), e.g.:\n` +
    `#   ${debuggerBindingCommand("--user=jane@example.com")}\n` +
    stringify(
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: RBAC_NAMES.debugger, labels: { "app.kubernetes.io/name": "oooi" } },
        rules: [
          { apiGroups: [DEBUG_ACCESS.group], resources: [DEBUG_ACCESS.resource], verbs: [DEBUG_ACCESS.verb] },
          // Which replica leads, and the CA that signs its xDS certificate (src/pki/store.ts CA_CONFIGMAP).
          { apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: [DEBUG_LEASE], verbs: ["get"] },
          { apiGroups: [""], resources: ["configmaps"], resourceNames: ["oooi-xds-ca"], verbs: ["get"] },
          // The port-forward to the leader's xDS port (get: the WebSocket upgrade is a GET).
          { apiGroups: [""], resources: ["pods/portforward"], verbs: ["create", "get"] },
        ],
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
