// OpenShift only (deploy/openshift): the SecurityContextConstraints Kea needs and the ClusterRole
// granting `use` of it. Kea answers on raw sockets, so it runs as uid 0 with NET_RAW (src/operator/
// desired/kea.ts says why); this SCC allows exactly that and nothing restricted-v2 forbids besides:
// no privileged containers, no host namespaces, ports or paths, no escalation, every other capability
// dropped. Fields: docs.redhat.com/en/documentation/openshift_container_platform/latest/html/
// security_apis/securitycontextconstraints-security-openshift-io-v1. The operator may not create
// SCCs nor bind roles: the platform engineer binds `oooi-kea-scc` to each Infra's Kea ServiceAccount
// `<infra>-dhcp` (command in the YAML's header). Pure.
import { stringify } from "yaml";

export const KEA_SCC_NAME = "oooi-kea";
export const KEA_SCC_ROLE = "oooi-kea-scc";
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
# OpenShift only. Grant it to each Infra's Kea ServiceAccount (the operator cannot bind anything):
#   kubectl create rolebinding ${KEA_SCC_ROLE} --clusterrole=${KEA_SCC_ROLE} --serviceaccount=NS:<infra>-dhcp -n NS
`;

/** deploy/openshift/kea_scc.yaml: the SCC and the ClusterRole that may `use` it. */
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
  return `${HEADER}${stringify(KEA_SCC, { lineWidth: 0 })}---\n${stringify(role, { lineWidth: 0 })}`;
}
