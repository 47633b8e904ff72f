// The proxy's public LoadBalancer Services (docs/reference.md#external-service): `<attachment>-proxy-external`
// per attachment, as the newest original, and the deprecated Infra-level `<infra>-proxy-external`. Pure.
// Only 443: the API's public VIP is HyperShift's own kube-apiserver LoadBalancer, and the admin (9901)
// and xDS (18000) ports never leave the pod network.
import type { DesiredObject, OwnerReference } from "./objects.js";
import { cmp, isLabelKey, isLabelValue } from "./objects.js";

/** MetalLB's address-pool selection annotation. */
export const METALLB_POOL_ANNOTATION = "metallb.universe.tf/address-pool";
/** ExternalDNS's comma-separated host names annotation. */
export const EXTERNAL_DNS_HOSTNAME_ANNOTATION = "external-dns.alpha.kubernetes.io/hostname";

/** What a public Service is made from: the Infra's deprecated externalService or an attachment's. */
export interface ExternalServiceConfig {
  readonly enabled?: boolean;
  readonly addressPoolName?: string | undefined;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** Infra-level only. */
  readonly publishAttachmentOAuths?: boolean;
}

/** What the external Service needs. */
export interface ExternalServiceInput {
  /** `<infra>` or `<attachment>`: the Service is `<name>-proxy-external`. */
  readonly name: string;
  readonly namespace: string;
  readonly config: ExternalServiceConfig;
  /** The OAuth names the proxy routes for the Infra's Ready attachments (publishAttachmentOAuths). */
  readonly readyOAuthNames: readonly string[];
  /** Labels oooi sets; they win over user labels of the same key (pruning and selection rely on them). */
  readonly labels: Readonly<Record<string, string>>;
  readonly podLabels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
}

/** The port the LoadBalancer Service exposes (and the proxy pods' port behind it). */
export const EXTERNAL_PORT = 443;

/** The LoadBalancer Service on 443, or undefined when externalService is not enabled. */
export function externalService(input: ExternalServiceInput): DesiredObject | undefined {
  const c = input.config;
  if (c.enabled !== true) return undefined;
  // An invalid user key would fail the whole apply; drop it rather than lose the Service.
  const annotations: Record<string, string> = Object.fromEntries(
    Object.entries(c.annotations ?? {}).filter(([k]) => isLabelKey(k)),
  );
  if (c.addressPoolName !== undefined && c.addressPoolName !== "")
    annotations[METALLB_POOL_ANNOTATION] = c.addressPoolName;
  if (c.publishAttachmentOAuths === true) {
    const names = mergeHostnames(annotations[EXTERNAL_DNS_HOSTNAME_ANNOTATION], input.readyOAuthNames);
    if (names !== "") annotations[EXTERNAL_DNS_HOSTNAME_ANNOTATION] = names;
  }
  const userLabels = Object.entries(c.labels ?? {}).filter(([k, v]) => isLabelKey(k) && isLabelValue(v));
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: `${input.name}-proxy-external`,
      namespace: input.namespace,
      labels: { ...Object.fromEntries(userLabels), ...input.labels },
      ...(Object.keys(annotations).length === 0 ? {} : { annotations: sortedRecord(annotations) }),
      ownerReferences: [input.owner],
    },
    spec: {
      type: "LoadBalancer",
      selector: { ...input.podLabels },
      ports: [{ name: "https", port: EXTERNAL_PORT, targetPort: EXTERNAL_PORT, protocol: "TCP" }],
    },
  };
}

/**
 * User-set names first (as written, deduplicated), then the added names sorted; unique ignoring
 * case and a trailing dot ("oauth.x." and "oauth.x" are one DNS name).
 */
export function mergeHostnames(userValue: string | undefined, added: readonly string[]): string {
  const seen = new Set<string>();
  const key = (name: string): string => name.toLowerCase().replace(/\.$/, "");
  const out: string[] = [];
  for (const raw of (userValue ?? "").split(",")) {
    const name = raw.trim();
    if (key(name) === "" || seen.has(key(name))) continue;
    seen.add(key(name));
    out.push(name);
  }
  const extra: string[] = [];
  for (const name of [...added].sort(cmp)) {
    if (key(name) === "" || seen.has(key(name))) continue;
    seen.add(key(name));
    extra.push(name);
  }
  return [...out, ...extra].join(",");
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => cmp(a, b)));
}
