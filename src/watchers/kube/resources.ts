// What the operator watches: one list+watch per resource, cluster-wide, narrowed by label where the
// operator only needs its own objects. Optional resources are third-party CRDs watched only while
// discovery says the API serves them.
import { GROUP, VERSION } from "../../api/schema.js";
import { MANAGED_SELECTOR } from "../../api/labels.js";
import { project } from "./projections.js";
import type { KubeObject } from "../../kube/rest.js";

/** One watched REST resource. */
export interface WatchedResource<N extends string = ResourceName> {
  /** Stable name, also the snapshot key. */
  readonly name: N;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly labelSelector?: string;
  /** Watch one namespace only (default: every namespace). */
  readonly namespace?: string;
  /** Watched only while served (third-party CRDs); an unserved one counts as synced and empty. */
  readonly optional: boolean;
  /** Keep only what is read of each object (applied by the reflector before caching it; src/watchers/kube/projections.ts). */
  readonly project: (o: KubeObject) => KubeObject;
}

/** Names of the watched resources. */
export type ResourceName =
  | "infras"
  | "attachments"
  | "dhcpservers"
  | "dnsservers"
  | "proxyservers"
  | "hostedclusters"
  | "nodepools"
  | "machines"
  | "vmis"
  | "networkattachments"
  | "services"
  | "namespaces"
  | "deployments"
  | "configmaps"
  | "serviceaccounts"
  | "pvcs"
  | "networkpolicies";

const ours = (name: ResourceName, plural: string, kind: string, labelSelector?: string): WatchedResource => ({
  name,
  group: GROUP,
  version: VERSION,
  plural,
  kind,
  namespaced: true,
  optional: false,
  project: project.whole,
  ...(labelSelector === undefined ? {} : { labelSelector }),
});
const managed = (
  name: ResourceName,
  group: string,
  version: string,
  plural: string,
  kind: string,
): WatchedResource => ({
  name,
  group,
  version,
  plural,
  kind,
  namespaced: true,
  optional: false,
  labelSelector: MANAGED_SELECTOR,
  project: project.whole,
});
const external = (
  name: ResourceName,
  group: string,
  version: string,
  plural: string,
  kind: string,
  projection: (o: KubeObject) => KubeObject,
): WatchedResource => ({
  name,
  group,
  version,
  plural,
  kind,
  namespaced: true,
  optional: true,
  project: projection,
});

/** Every resource the operator watches. */
export const WATCHED_RESOURCES: readonly WatchedResource[] = [
  ours("infras", "infras", "Infra"),
  ours("attachments", "infraclusterattachments", "InfraClusterAttachment"),
  ours("dhcpservers", "dhcpservers", "DHCPServer", MANAGED_SELECTOR),
  ours("dnsservers", "dnsservers", "DNSServer", MANAGED_SELECTOR),
  ours("proxyservers", "proxyservers", "ProxyServer", MANAGED_SELECTOR),
  external(
    "hostedclusters",
    "hypershift.openshift.io",
    "v1beta1",
    "hostedclusters",
    "HostedCluster",
    project.hostedCluster,
  ),
  external("nodepools", "hypershift.openshift.io", "v1beta1", "nodepools", "NodePool", project.nodePool),
  external("machines", "cluster.x-k8s.io", "v1beta1", "machines", "Machine", project.machine),
  external("vmis", "kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance", project.vmi),
  // All NADs: the Infra's own NAD is copied into the per-component ones (and ours are labelled).
  external(
    "networkattachments",
    "k8s.cni.cncf.io",
    "v1",
    "network-attachment-definitions",
    "NetworkAttachmentDefinition",
    project.whole,
  ),
  // All Services: control-plane targets and internalProxyService resolve through them.
  {
    name: "services",
    group: "",
    version: "v1",
    plural: "services",
    kind: "Service",
    namespaced: true,
    optional: false,
    project: project.service,
  },
  {
    name: "namespaces",
    group: "",
    version: "v1",
    plural: "namespaces",
    kind: "Namespace",
    namespaced: false,
    optional: false,
    project: project.namespace,
  },
  managed("deployments", "apps", "v1", "deployments", "Deployment"),
  managed("configmaps", "", "v1", "configmaps", "ConfigMap"),
  managed("serviceaccounts", "", "v1", "serviceaccounts", "ServiceAccount"),
  managed("pvcs", "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"),
  managed("networkpolicies", "networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy"),
];

/** API path prefix of a group/version: /api/v1 or /apis/<group>/<version>. */
export function apiPrefix(group: string, version: string): string {
  return group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** Collection path of a resource, cluster-wide or in one namespace. */
export function collectionPath(r: Pick<WatchedResource, "group" | "version" | "plural">, namespace?: string): string {
  return `${apiPrefix(r.group, r.version)}${namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`}/${r.plural}`;
}
