// OpenShift only (deploy/openshift): the SecurityContextConstraints Kea needs and the ClusterRole
// granting `use` of it. Kea answers on raw sockets, so it runs as uid 0 with NET_RAW (src/operator/
// desired/kea.ts says why); this SCC allows exactly that and nothing restricted-v2 forbids besides:
// no privileged containers, no host namespaces, ports or paths, no escalation, every other capability
// dropped. Fields: docs.redhat.com/en/documentation/openshift_container_platform/latest/html/
// security_apis/securitycontextconstraints-security-openshift-io-v1. The operator never creates
// SCCs. The overlay lets it bind exactly `oooi-kea-scc` (Kubernetes lets a RoleBinding to a role be
// written only by who holds `bind` on it or every permission in it): it then writes one RoleBinding
// per Infra with DHCP, `<infra>-dhcp-scc`, owned by the Infra. Without that grant (the base alone)
// the platform engineer runs keaSccBindingCommand, which each such Infra's status repeats. Pure.
import { stringify } from "yaml";
import { RBAC_NAMES, type Permission, policyRules } from "./permissions.js";
import { DEFAULT_OPERATOR_NAMESPACE } from "./settings.js";
import type { DesiredObject, OwnerReference } from "./objects.js";

export const KEA_SCC_NAME = "oooi-kea";
export const KEA_SCC_ROLE = "oooi-kea-scc";
/** The overlay's ClusterRole (and ClusterRoleBinding) that lets the operator bind KEA_SCC_ROLE. */
export const KEA_SCC_BINDER = "oooi-kea-scc-binder";

/**
 * What the binder role grants the operator, cluster-wide, and nothing else: write RoleBindings by
 * server-side apply (create + patch; get to look before it writes) and `bind` on the one role. No
 * list, watch, update or delete: the operator never lists bindings, never deletes one (the garbage
 * collector removes its own with the Infra that owns them), so a user's binding cannot be deleted
 * by it whatever its name. `bind` with resourceNames is what keeps this from being an escalation:
 * the API server refuses any RoleBinding to another role whose permissions the operator lacks.
 */
export const KEA_SCC_BINDER_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: "rbac.authorization.k8s.io",
    resources: ["rolebindings"],
    verbs: ["create", "get", "patch"],
    why: "each Infra's <infra>-dhcp-scc RoleBinding, applied by name; get: a user's binding of that name is left alone",
  },
  {
    apiGroup: "rbac.authorization.k8s.io",
    resources: ["clusterroles"],
    verbs: ["bind"],
    resourceNames: [KEA_SCC_ROLE],
    why: "a RoleBinding to oooi-kea-scc needs bind on it (RBAC's escalation check); no other role",
  },
];

/** The RoleBinding granting `<infra>-dhcp` the SCC: one per Infra, since several Infras may share a namespace. */
export function keaSccBindingName(infraName: string): string {
  return `${infraName}-dhcp-scc`;
}

/** The command a platform engineer runs when the operator may not bind (the base install). */
export function keaSccBindingCommand(namespace: string, infraName: string): string {
  return `kubectl create rolebinding ${keaSccBindingName(infraName)} --clusterrole=${KEA_SCC_ROLE} --serviceaccount=${namespace}:${infraName}-dhcp -n ${namespace}`;
}

/** The RoleBinding the operator applies when the overlay lets it. */
export function keaSccBinding(opts: {
  readonly infraName: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
}): DesiredObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: {
      name: keaSccBindingName(opts.infraName),
      namespace: opts.namespace,
      labels: opts.labels,
      ownerReferences: [opts.owner],
    },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: KEA_SCC_ROLE },
    subjects: [{ kind: "ServiceAccount", name: `${opts.infraName}-dhcp`, namespace: opts.namespace }],
  };
}

/** A live RoleBinding (anyone's) already grants the Infra's Kea ServiceAccount the SCC role. */
export function grantsKeaScc(
  binding: { readonly roleRef?: { kind?: string; name?: string }; readonly subjects?: readonly Subject[] },
  namespace: string,
  infraName: string,
): boolean {
  return (
    binding.roleRef?.kind === "ClusterRole" &&
    binding.roleRef.name === KEA_SCC_ROLE &&
    (binding.subjects ?? []).some(
      (s) => s.kind === "ServiceAccount" && s.name === `${infraName}-dhcp` && (s.namespace ?? namespace) === namespace,
    )
  );
}

interface Subject {
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}
/** The only capabilities Kea's containers may add. */
export const KEA_CAPABILITIES = ["NET_BIND_SERVICE", "NET_RAW"] as const;

/** The SCC: restricted-v2 except uid 0 and the two capabilities. */
export const KEA_SCC = {
  apiVersion: "security.openshift.io/v1",
  kind: "SecurityContextConstraints",
  metadata: { name: KEA_SCC_NAME, labels: { "app.kubernetes.io/name": "oooi" } },
  priority: null,
  allowPrivilegedContainer: false,
  allowPrivilegeEscalation: false,
  defaultAllowPrivilegeEscalation: false,
  allowHostDirVolumePlugin: false,
  allowHostIPC: false,
  allowHostNetwork: false,
  allowHostPID: false,
  allowHostPorts: false,
  readOnlyRootFilesystem: true,
  allowedCapabilities: [...KEA_CAPABILITIES],
  defaultAddCapabilities: null,
  requiredDropCapabilities: ["ALL"],
  runAsUser: { type: "RunAsAny" },
  seLinuxContext: { type: "MustRunAs" },
  fsGroup: { type: "MustRunAs" },
  supplementalGroups: { type: "RunAsAny" },
  seccompProfiles: ["runtime/default"],
  volumes: ["configMap", "emptyDir", "persistentVolumeClaim", "projected", "secret"],
  users: [],
  groups: [],
} as const;

const HEADER = `# Generated from src/operator/desired/scc.ts; do not edit.
# Regenerate: UPDATE_DEPLOY=1 npx vitest run test/operator/desired/deploy.test.ts
# OpenShift only. The operator binds oooi-kea-scc to each Infra's Kea ServiceAccount itself
# (${KEA_SCC_BINDER}: bind on that one role, RoleBindings by name); without that grant, per Infra:
#   ${keaSccBindingCommand("NS", "<infra>")}
`;

/** deploy/openshift/kea_scc.yaml: the SCC, the ClusterRole that may `use` it, and the operator's right to bind that. */
export function keaSccYaml(): string {
  const role = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: KEA_SCC_ROLE, labels: { "app.kubernetes.io/name": "oooi" } },
    rules: [
      {
        apiGroups: ["security.openshift.io"],
        resources: ["securitycontextconstraints"],
        resourceNames: [KEA_SCC_NAME],
        verbs: ["use"],
      },
    ],
  };
  const labels = { "app.kubernetes.io/name": "oooi" };
  const binder = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: KEA_SCC_BINDER, labels },
    rules: policyRules(KEA_SCC_BINDER_PERMISSIONS),
  };
  const binding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: KEA_SCC_BINDER, labels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: KEA_SCC_BINDER },
    subjects: [{ kind: "ServiceAccount", name: RBAC_NAMES.serviceAccount, namespace: DEFAULT_OPERATOR_NAMESPACE }],
  };
  return HEADER + [KEA_SCC, role, binder, binding].map((o) => stringify(o, { lineWidth: 0 })).join("---\n");
}
