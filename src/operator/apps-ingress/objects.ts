// Checked apps-ingress settings → the objects oooi applies in the hosted cluster (server-side apply,
// so the user's own labels, annotations and fields on them are left alone), in apply order, and
// the order cleanup deletes them in. Pure.
import { METALLB_POOL_ANNOTATION } from "../desired/external.js";
import { isLabelKey, isLabelValue } from "../desired/objects.js";
import { MANAGED_BY, MANAGED_BY_LABEL } from "../../api/labels.js";
import { METALLB_DEFAULTS, type AppsIngressConfig } from "../../model/apps-ingress.js";

/** A hosted object: where it lives and what is applied. */
export interface HostedObject {
  readonly apiVersion: string;
  readonly kind: string;
  /** REST plural, for its path. */
  readonly plural: string;
  readonly body: Record<string, unknown> & {
    metadata: {
      name: string;
      namespace: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
  };
}

export const OLM_API = "operators.coreos.com/v1alpha1";
export const METALLB_API = "metallb.io/v1beta1";
/** The default IngressController's router pods (OpenShift's ingress operator labels them so). */
export const ROUTER_SELECTOR = { "ingresscontroller.operator.openshift.io/deployment-ingresscontroller": "default" };
/** The MetalLB kinds that must be served before the MetalLB objects are applied. */
export const METALLB_RESOURCES = ["metallbs", "ipaddresspools", "l2advertisements"] as const;

const managed = { [MANAGED_BY_LABEL]: MANAGED_BY };

function object(
  apiVersion: string,
  kind: string,
  plural: string,
  name: string,
  namespace: string,
  rest: Record<string, unknown>,
): HostedObject {
  return {
    apiVersion,
    kind,
    plural,
    body: { apiVersion, kind, metadata: { name, namespace, labels: managed }, ...rest },
  };
}

/** OLM Subscription to the MetalLB operator. */
export function metallbSubscription(c: AppsIngressConfig): HostedObject {
  return object(OLM_API, "Subscription", "subscriptions", METALLB_DEFAULTS.subscription, METALLB_DEFAULTS.namespace, {
    spec: {
      channel: c.channel,
      name: METALLB_DEFAULTS.subscription,
      source: c.source,
      sourceNamespace: METALLB_DEFAULTS.sourceNamespace,
      installPlanApproval: "Automatic",
    },
  });
}

/** MetalLB, IPAddressPool and L2Advertisement: applied once the MetalLB CRDs are served. */
export function metallbObjects(c: AppsIngressConfig): HostedObject[] {
  if (c.pool === undefined || c.range === undefined || c.l2Advertisement === undefined) return [];
  const ns = METALLB_DEFAULTS.namespace;
  return [
    object(METALLB_API, "MetalLB", "metallbs", "metallb", ns, { spec: {} }),
    object(METALLB_API, "IPAddressPool", "ipaddresspools", c.pool, ns, {
      spec: { addresses: [c.range], autoAssign: true },
    }),
    object(METALLB_API, "L2Advertisement", "l2advertisements", c.l2Advertisement, ns, {
      spec: { ipAddressPools: [c.pool] },
    }),
  ];
}

/**
 * The LoadBalancer Service in front of the default router. User labels and annotations (ExternalDNS
 * hostnames, say) are applied with it; oooi's own keys win. Invalid user keys are dropped rather
 * than fail the whole apply.
 */
export function ingressService(c: AppsIngressConfig): HostedObject {
  const annotations = Object.fromEntries(Object.entries(c.service.annotations).filter(([k]) => isLabelKey(k)));
  if (c.pool !== undefined) annotations[METALLB_POOL_ANNOTATION] = c.pool;
  const labels = Object.fromEntries(
    Object.entries(c.service.labels).filter(([k, v]) => isLabelKey(k) && isLabelValue(v)),
  );
  const o = object("v1", "Service", "services", c.service.name, c.service.namespace, {
    spec: {
      type: "LoadBalancer",
      selector: { ...ROUTER_SELECTOR },
      ports: [
        { name: "http", port: c.ports.http, targetPort: 80, protocol: "TCP" },
        { name: "https", port: c.ports.https, targetPort: 443, protocol: "TCP" },
      ],
    },
  });
  return {
    ...o,
    body: {
      ...o.body,
      metadata: {
        ...o.body.metadata,
        labels: { ...labels, ...managed },
        ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
      },
    },
  };
}

/** Cleanup order (docs/reference.md#apps-ingress): the Service first, the Subscription last. */
export function cleanupOrder(c: AppsIngressConfig): HostedObject[] {
  return [
    ingressService(c),
    ...[...metallbObjects(c)].reverse(),
    ...(c.installMetalLB ? [metallbSubscription(c)] : []),
  ];
}

/**
 * What a pass applied in the hosted cluster, as appsIngressStatus.applied* records it (the newest
 * original's fields): a later disable or rename removes these, not what the spec names by then.
 */
export interface AppliedNames {
  readonly appliedServiceName: string;
  readonly appliedServiceNamespace: string;
  readonly appliedAddressPoolName?: string;
  readonly appliedL2AdvertisementName?: string;
}

/** The names `config` applies: the Service, and the pool and L2Advertisement when oooi installs them. */
export function appliedNames(c: AppsIngressConfig): AppliedNames {
  const metallb = c.installMetalLB && metallbObjects(c).length > 0;
  return {
    appliedServiceName: c.service.name,
    appliedServiceNamespace: c.service.namespace,
    ...(metallb && c.pool !== undefined ? { appliedAddressPoolName: c.pool } : {}),
    ...(metallb && c.l2Advertisement !== undefined ? { appliedL2AdvertisementName: c.l2Advertisement } : {}),
  };
}

/** The objects a status records as applied that `now` no longer names: what a changed spec leaves behind. */
export function staleObjects(was: Partial<AppliedNames> | undefined, now: AppliedNames): HostedObject[] {
  const ns = METALLB_DEFAULTS.namespace;
  const out: HostedObject[] = [];
  const svc = was?.appliedServiceName;
  const svcNs = was?.appliedServiceNamespace;
  if (
    svc !== undefined &&
    svcNs !== undefined &&
    (svc !== now.appliedServiceName || svcNs !== now.appliedServiceNamespace)
  )
    out.push(object("v1", "Service", "services", svc, svcNs, {}));
  const l2 = was?.appliedL2AdvertisementName;
  if (l2 !== undefined && l2 !== now.appliedL2AdvertisementName)
    out.push(object(METALLB_API, "L2Advertisement", "l2advertisements", l2, ns, {}));
  const pool = was?.appliedAddressPoolName;
  if (pool !== undefined && pool !== now.appliedAddressPoolName)
    out.push(object(METALLB_API, "IPAddressPool", "ipaddresspools", pool, ns, {}));
  return out;
}

const CLEANUP_RANK = ["Service", "L2Advertisement", "IPAddressPool", "MetalLB", "Subscription"];

/**
 * Cleanup of a disabled attachment: what the status records as applied and what the spec names
 * (they differ when a pass applied a renamed object but failed before recording it), in cleanup
 * order, each object once — a Service or pool renamed before the disable is not forgotten.
 */
export function cleanupOrderApplied(c: AppsIngressConfig, was: Partial<AppliedNames> | undefined): HostedObject[] {
  const seen = new Set<string>();
  return [...recordedCleanupOrder(c, was), ...cleanupOrder(c)]
    .map((o, i) => ({ o, i }))
    .sort((a, b) => CLEANUP_RANK.indexOf(a.o.kind) - CLEANUP_RANK.indexOf(b.o.kind) || a.i - b.i)
    .map(({ o }) => o)
    .filter((o) => {
      const key = `${o.kind}/${o.body.metadata.namespace}/${o.body.metadata.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

function recordedCleanupOrder(c: AppsIngressConfig, was: Partial<AppliedNames> | undefined): HostedObject[] {
  const service = {
    ...c.service,
    name: was?.appliedServiceName ?? c.service.name,
    namespace: was?.appliedServiceNamespace ?? c.service.namespace,
  };
  const pool = was?.appliedAddressPoolName ?? c.pool;
  const l2 = was?.appliedL2AdvertisementName ?? c.l2Advertisement;
  // The range plays no part in a delete; metallbObjects needs one to name the objects.
  return cleanupOrder({ ...c, service, pool, l2Advertisement: l2, range: c.range ?? "" });
}
