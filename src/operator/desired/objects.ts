// The shape of a desired Kubernetes object, its identity, its content hash, and the labels and
// annotations that let the operator find what it owns. Pure.
import { createHash } from "node:crypto";
import { API_VERSION } from "../../api/schema.js";
import { INFRA_LABEL } from "../../model/children.js";

/** metav1.OwnerReference as applied: the Infra (blocking foreground deletion) or an attachment, controlling. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: true;
  readonly blockOwnerDeletion: boolean;
}

/** The metadata a desired object carries (the only fields the operator applies). */
export interface DesiredMeta {
  readonly name: string;
  /** Absent for cluster-scoped kinds. */
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
}

/** One object to server-side-apply: apiVersion, kind, metadata, and its body (spec, data …). */
export interface DesiredObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: DesiredMeta;
  readonly [field: string]: unknown;
}

/** The component a workload object belongs to: dhcp, dns or proxy. */
export const COMPONENT_LABEL = "app.kubernetes.io/component";
/** Pod label naming the program a pod runs (envoy, coredns, kea). */
export const NAME_LABEL = "app.kubernetes.io/name";
/** Pod label naming the Infra a pod serves. */
export const INSTANCE_LABEL = "app.kubernetes.io/instance";
export { INFRA_LABEL };
/**
 * Label on objects outside the Infra's namespace: no ownerReference can reach them, so the
 * attachment finalizer (ATTACHMENT_FINALIZER) deletes them; list them with this label.
 */
export const CLEANUP_LABEL = "hostedcluster.densityops.com/cleanup";
export const CLEANUP_BY_FINALIZER = "attachment-finalizer";
/** Annotation on finalizer-cleaned objects: the "<namespace>/<name>" attachments needing them, sorted, comma-separated. */
export const ATTACHMENTS_ANNOTATION = "hostedcluster.densityops.com/attachments";
/** Finalizer the operator keeps on attachments until their cross-namespace objects are gone. */
export const ATTACHMENT_FINALIZER = "hostedcluster.densityops.com/apps-ingress-cleanup";
/** Pod-template annotation: hash of the configuration a pod reads only at start; changing it rolls the pods. */
export const CONFIG_HASH_ANNOTATION = "hostedcluster.densityops.com/config-hash";

/** A kind oooi applies, with what the reconciler needs to list and prune it. */
export interface ManagedKind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Every kind desiredState() may emit, in apply order (dependencies first). */
export const MANAGED_KINDS: readonly ManagedKind[] = [
  { apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
  // OpenShift with deploy/openshift only (scc.ts); not watched, so never pruned: the Infra owns it.
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", plural: "rolebindings", namespaced: true },
  {
    apiVersion: "k8s.cni.cncf.io/v1",
    kind: "NetworkAttachmentDefinition",
    plural: "network-attachment-definitions",
    namespaced: true,
  },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true },
  { apiVersion: API_VERSION, kind: "DHCPServer", plural: "dhcpservers", namespaced: true },
  { apiVersion: API_VERSION, kind: "DNSServer", plural: "dnsservers", namespaced: true },
  { apiVersion: API_VERSION, kind: "ProxyServer", plural: "proxyservers", namespaced: true },
  { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", plural: "networkpolicies", namespaced: true },
  { apiVersion: "v1", kind: "Service", plural: "services", namespaced: true },
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", namespaced: true },
];

const APPLY_RANK = new Map(MANAGED_KINDS.map((k, i) => [`${k.apiVersion}/${k.kind}`, i]));

/** API group of an apiVersion ("" for the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** Stable identity of an object across versions: "Kind[.group]/namespace/name". */
export function objectKey(obj: Pick<DesiredObject, "apiVersion" | "kind" | "metadata">): string {
  const group = groupOf(obj.apiVersion);
  return `${obj.kind}${group === "" ? "" : `.${group}`}/${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
}

/** sha256 (hex) of the object's canonical JSON (keys sorted): equal content, equal hash. */
export function contentHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

/** JSON with object keys sorted at every level; undefined members dropped as JSON does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/** Objects in apply order: by kind rank (dependencies first), then namespace, then name. */
export function sortObjects(objects: readonly DesiredObject[]): DesiredObject[] {
  const rank = (o: DesiredObject) => APPLY_RANK.get(`${o.apiVersion}/${o.kind}`) ?? MANAGED_KINDS.length;
  return [...objects].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      cmp(a.metadata.namespace ?? "", b.metadata.namespace ?? "") ||
      cmp(a.metadata.name, b.metadata.name),
  );
}

/** The ownerReference every namespaced child carries: controlled by its Infra. */
export function infraOwner(name: string, uid: string): OwnerReference {
  return { apiVersion: API_VERSION, kind: "Infra", name, uid, controller: true, blockOwnerDeletion: true };
}

/**
 * An attachment controls what exists for it alone (its public Service), so deleting it removes them.
 * Not blocking: under OwnerReferencesPermissionEnforcement (OpenShift) blockOwnerDeletion needs
 * update on infraclusterattachments/finalizers, which deploy/rbac does not grant.
 */
export function attachmentOwner(name: string, uid: string): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: "InfraClusterAttachment",
    name,
    uid,
    controller: true,
    blockOwnerDeletion: false,
  };
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------- Kubernetes name rules

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/;

/** RFC 1123 label (namespaces, most names that become hostnames): at most 63 characters. */
export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

/** RFC 1035 label (Service names): starts with a letter, at most 63 characters. */
export function isDns1035Label(s: string): boolean {
  return s.length <= 63 && DNS1035_LABEL.test(s);
}

/** RFC 1123 subdomain (ConfigMap, Deployment … names): at most 253 characters. */
export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/** A label value: empty, or at most 63 characters of [A-Za-z0-9_.-] starting and ending alphanumeric. */
export function isLabelValue(s: string): boolean {
  return s === "" || (s.length <= 63 && LABEL_NAME.test(s));
}

/** A label key: optional DNS-subdomain prefix and "/", then a name of at most 63 characters. */
export function isLabelKey(s: string): boolean {
  const slash = s.lastIndexOf("/");
  const name = slash < 0 ? s : s.slice(slash + 1);
  const prefix = slash < 0 ? undefined : s.slice(0, slash);
  return name.length <= 63 && LABEL_NAME.test(name) && (prefix === undefined || isDns1123Subdomain(prefix));
}

/** A ConfigMap data key. */
export function isConfigMapKey(s: string): boolean {
  return s.length <= 253 && CONFIG_MAP_KEY.test(s) && s !== "." && s !== "..";
}
