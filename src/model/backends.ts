// docs/reference.md#backends: the backends each served attachment contributes to its Infra's proxy.
import { aggregate, formatCidr, formatIPv4, parseIPv4 } from "./ipv4.js";
import { resolveAppsIngressConfig } from "./apps-ingress.js";
import { dnsName } from "./names.js";
import type { EndpointName, PublishedEndpoint } from "./endpoints.js";
import type { ResolvedAttachment } from "./attachments.js";
import type { ResolvedInfra, ServiceIndex } from "./infra.js";
import type { Service } from "../api/external.js";
import { cmp, Problems, type ObjectProblems } from "./problems.js";
import { sortedFromLists, type SortedFromLists } from "../util/merge-sorted.js";
import type {
  AppsIngressReason,
  Backend,
  BackendKind,
  Endpoint,
  ListenerPort,
  Problem,
  ProblemReason,
  ProxyModel,
  Upstream,
} from "./types.js";

/** The names a worker uses for the in-cluster API service; answered by DNS and matched by SNI. */
export const KUBERNETES_ALIASES = [
  "kubernetes",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
] as const;

export const DEFAULT_TIMEOUT_SECONDS = 30;

/** The per-attachment names published on the proxy address by convention, besides the aliases and *.apps. */
export const CONTROL_PLANE_HOSTS = ["api", "api-int", "oauth", "ignition", "konnectivity"] as const;

/**
 * The per-attachment names published on the proxy address: api-int by convention, the four
 * endpoints as resolved from the HostedCluster (src/model/endpoints.ts).
 */
export function controlPlaneNames(a: ResolvedAttachment): string[] {
  return [...new Set([`api-int.${a.domain}`, ...a.endpoints.map((e) => e.hostname)])];
}

interface Row {
  readonly kind: BackendKind;
  /** The listener, unless the row serves an endpoint (its resolved port). */
  readonly port: ListenerPort;
  /** SNI names: an endpoint's resolved hostname, or names under the domain. */
  readonly serverNames: EndpointName | ((d: string) => string[]);
  readonly bySource: boolean;
  readonly service: (apiServer: string) => string;
  readonly servicePort: number;
}

const ROWS: readonly Row[] = [
  {
    kind: "kube-apiserver",
    port: 6443,
    serverNames: "api",
    bySource: false,
    service: (s) => s,
    servicePort: 6443,
  },
  {
    kind: "kube-apiserver-internal",
    port: 6443,
    serverNames: (d) => [`api-int.${d}`],
    bySource: false,
    service: (s) => s,
    servicePort: 6443,
  },
  {
    kind: "kubernetes-service",
    port: 6443,
    serverNames: () => [],
    bySource: true,
    service: (s) => s,
    servicePort: 6443,
  },
  {
    kind: "oauth-openshift",
    port: 443,
    serverNames: "oauth",
    bySource: false,
    service: () => "oauth-openshift",
    servicePort: 6443,
  },
  {
    kind: "ignition-server",
    port: 443,
    serverNames: "ignition",
    bySource: false,
    service: () => "ignition-server-proxy",
    servicePort: 443,
  },
  {
    kind: "konnectivity-server",
    port: 443,
    serverNames: "konnectivity",
    bySource: false,
    service: () => "konnectivity-server",
    servicePort: 8091,
  },
  {
    kind: "kubernetes-hostname",
    port: 443,
    serverNames: (d) => [...KUBERNETES_ALIASES, `kubernetes.${d}`],
    bySource: true,
    service: (s) => s,
    servicePort: 6443,
  },
];

/** Where *.apps goes: the VIP, or only the hostname the hosted LoadBalancer reported. */
export type AppsTarget = { readonly ip: string } | { readonly hostname: string };

/**
 * The apps target of an attachment when its ingress is Ready, or Degraded keeping the address of
 * its last Ready (last good: a hosted API away does not take *.apps down); undefined otherwise.
 * An IP wins over a hostname, as the LoadBalancer Service's ingress[0] lists them.
 */
export function appsTarget(a: ResolvedAttachment): AppsTarget | undefined {
  const s = a.attachment.status?.appsIngressStatus;
  if (a.attachment.spec.appsIngress?.enabled !== true || (s?.phase !== "Ready" && s?.phase !== "Degraded"))
    return undefined;
  if (s.externalIP !== undefined) return parseIPv4(s.externalIP) !== undefined ? { ip: s.externalIP } : undefined;
  const hostname = s.externalHostname === undefined ? undefined : dnsName(s.externalHostname);
  return hostname === undefined ? undefined : { hostname };
}

/** The apps VIP when the target is an IP: only an IP gets the wildcard DNS record. */
export function appsVip(a: ResolvedAttachment): string | undefined {
  const target = appsTarget(a);
  return target !== undefined && "ip" in target ? target.ip : undefined;
}

/** The reasons the apps-ingress controller writes into appsIngressStatus; anything else reads as the generic one. */
const APPS_REASONS: ReadonlySet<string> = new Set<AppsIngressReason>([
  "WaitingForHostedCluster",
  "WaitingForKubeconfig",
  "WaitingForAPIServerService",
  "WaitingForHostedClusterNodes",
  "WaitingForMetalLBCRDs",
  "WaitingForExternalIP",
  "HostedClusterAccessFailed",
  "MetalLBInstallFailed",
  "IngressServiceFailed",
  "ExternalIPDiscoveryFailed",
  "InvalidConfiguration",
  "CleanupFailed",
]);

function appsReason(reason: string | undefined, fallback: ProblemReason): ProblemReason {
  return reason !== undefined && APPS_REASONS.has(reason) ? (reason as AppsIngressReason) : fallback;
}

/**
 * spec.appsIngress checked here too (serve takes the status from manifests; the operator's loop
 * refuses the same spec), and the reported status on the attachment's Ready: Degraded makes it
 * False with the status's reason; Pending, a hostname-only target and a Ready
 * without an address are noted.
 */
function reportAppsIngress(infra: ResolvedInfra, a: ResolvedAttachment, problems: ObjectProblems): void {
  const checked = resolveAppsIngressConfig(a.attachment.spec, infra.infra.spec);
  // The original reports this as Degraded/InvalidConfiguration rather than accepting it silently.
  if (!checked.ok) problems.warning(checked.field, "InvalidConfiguration", checked.message);
  const s = a.attachment.status?.appsIngressStatus;
  const message = s?.message ?? "";
  if (s?.phase === "Degraded") {
    problems.pending("status.appsIngressStatus", appsReason(s.reason, "AppsIngressDegraded"), message);
  } else if (s?.phase === "Pending") {
    problems.warning("status.appsIngressStatus", appsReason(s.reason, "AppsIngressPending"), message);
  } else if (s?.phase === "Ready") {
    reportReadyTarget(a, s, problems);
  }
}

/** A Ready status routes by IP silently; by hostname, or not at all, it says so on the field it read. */
function reportReadyTarget(
  a: ResolvedAttachment,
  s: { readonly externalIP?: string; readonly externalHostname?: string },
  problems: ObjectProblems,
): void {
  const apps = `*.apps.${a.domain}`;
  const target = appsTarget(a);
  if (target !== undefined && "hostname" in target) {
    problems.warning(
      "status.appsIngressStatus.externalHostname",
      "AppsIngressByHostname",
      `apps ingress reports only the hostname ${target.hostname}; ${apps} is proxied to it with Envoy resolving the name (LOGICAL_DNS) and gets no DNS record (a record needs an IP)`,
    );
  } else if (target === undefined) {
    const [field, found] =
      s.externalIP !== undefined
        ? ["externalIP", `externalIP ${JSON.stringify(s.externalIP)} is not an IPv4 address`]
        : s.externalHostname !== undefined
          ? ["externalHostname", `externalHostname ${JSON.stringify(s.externalHostname)} is not a DNS name`]
          : ["", "apps ingress reports no address"];
    problems.warning(
      field === "" ? "status.appsIngressStatus" : `status.appsIngressStatus.${field}`,
      "AppsIngressWithoutIP",
      `${found}; ${apps} gets neither a proxy route nor a DNS record until it reports an IP or a hostname`,
    );
  }
}

/** serve reads the status from manifests: a Ready status without the feature enabled is a slip, said aloud. */
function reportIgnoredAppsStatus(a: ResolvedAttachment, problems: ObjectProblems): void {
  const s = a.attachment.status?.appsIngressStatus;
  if (s?.phase !== "Ready" || a.attachment.spec.appsIngress?.enabled === true) return;
  const address = s.externalIP ?? s.externalHostname;
  problems.warning(
    "spec.appsIngress.enabled",
    "AppsIngressStatusIgnored",
    `status.appsIngressStatus.phase is Ready${address === undefined ? "" : ` (${address})`} but spec.appsIngress.enabled is not true; *.apps.${a.domain} gets no proxy route and no DNS record until it is`,
  );
}

export function buildProxy(
  infra: ResolvedInfra,
  attachments: readonly ResolvedAttachment[],
  services: ServiceIndex,
  problems: Problems,
): ProxyModel | undefined {
  if (infra.proxy === undefined) return undefined;
  const lists: (readonly Backend[])[] = [];
  const upstreams = new Map<string, Upstream>();

  for (const a of attachments) {
    if (!a.served) continue;
    const part = attachmentPart(infra, a, services);
    const p = problems.for(a.ref);
    // Several attachments may name one upstream (a shared control-plane namespace): the first keeps it.
    for (const { upstream, problems: found } of part.serviceUpstreams) {
      if (upstreams.has(upstream.name)) continue;
      upstreams.set(upstream.name, upstream);
      replay(found, p);
    }
    replay(part.problems, p);
    for (const upstream of part.appsUpstreams) upstreams.set(upstream.name, upstream);
    lists.push(part.backends);
  }
  const backends = sortedFromLists(lastBackends.get(infra.infra), lists, byName);
  lastBackends.set(infra.infra, backends);

  return {
    node: `${infra.ref.namespace}/${infra.ref.name}-proxy`,
    serverIP: infra.proxy.serverIP,
    backends: backends.items,
    upstreams: [...upstreams.values()].sort((x, y) => cmp(x.name, y.name)),
  };
}

/** Backend names are unique per proxy. */
const byName = (x: Backend, y: Backend): number => cmp(x.name, y.name);

/**
 * Each Infra's last backends in order: the next build takes out the backends of the attachments
 * whose part changed and merges in their new ones, instead of sorting 35,000 backends again.
 */
const lastBackends = new WeakMap<ResolvedInfra["infra"], SortedFromLists<Backend>>();

/** A problem as recorded, without its object (the attachment it is replayed on). */
type Found = Pick<Problem, "field" | "reason" | "message" | "severity">;

/** What one served attachment contributes to its Infra's proxy: a function of the inputs kept beside it. */
interface AttachmentPart {
  /** The inputs it was derived from: the same attachment object, Infra spec, workers and Services. */
  readonly infraSpec: ResolvedInfra["infra"]["spec"];
  readonly workers: readonly number[];
  readonly endpoints: readonly PublishedEndpoint[];
  readonly services: readonly (Service | undefined)[];
  /** Row order, then apps-https and apps-http. */
  readonly backends: readonly Backend[];
  /** Per Service-backed row, its upstream and what looking its Service up found. */
  readonly serviceUpstreams: readonly { readonly upstream: Upstream; readonly problems: readonly Found[] }[];
  readonly appsUpstreams: readonly Upstream[];
  /** The apps-ingress checks' problems. */
  readonly problems: readonly Found[];
}

/**
 * The last part derived per attachment object. On a big VLAN one Machine change rebuilds the
 * Infra's model; every other hosted cluster's part is taken from here, the same objects, so the
 * renderer and the xDS cache recognize them by identity and a change costs O(that cluster).
 */
const parts = new WeakMap<ResolvedAttachment["attachment"], AttachmentPart>();

function attachmentPart(infra: ResolvedInfra, a: ResolvedAttachment, services: ServiceIndex): AttachmentPart {
  const looked = serviceNames(a).map((name) => services.get(`${a.controlPlaneNamespace}/${name}`));
  const kept = parts.get(a.attachment);
  if (
    kept !== undefined &&
    kept.infraSpec === infra.infra.spec &&
    sameNumbers(kept.workers, a.workers) &&
    sameEndpoints(kept.endpoints, a.endpoints) &&
    kept.services.every((s, i) => s === looked[i])
  )
    return kept;
  const part = deriveAttachmentPart(infra, a, services, looked);
  parts.set(a.attachment, part);
  return part;
}

/** The Services the attachment's rows read, in a fixed order (the memo compares them by identity). */
function serviceNames(a: ResolvedAttachment): string[] {
  const apiServer = a.attachment.spec.apiServerService ?? "kube-apiserver";
  return [...new Set(ROWS.map((row) => row.service(apiServer)))];
}

function endpointOf(a: ResolvedAttachment, name: EndpointName): PublishedEndpoint | undefined {
  return a.endpoints.find((e) => e.name === name);
}

function sameEndpoints(x: readonly PublishedEndpoint[], y: readonly PublishedEndpoint[]): boolean {
  return (
    x.length === y.length &&
    x.every((e, i) => e.name === y[i]?.name && e.hostname === y[i].hostname && e.port === y[i].port)
  );
}

function sameNumbers(x: readonly number[], y: readonly number[]): boolean {
  return x === y || (x.length === y.length && x.every((v, i) => v === y[i]));
}

function replay(found: readonly Found[], p: ObjectProblems): void {
  for (const f of found) p[f.severity](f.field, f.reason, f.message);
}

function deriveAttachmentPart(
  infra: ResolvedInfra,
  a: ResolvedAttachment,
  services: ServiceIndex,
  looked: readonly (Service | undefined)[],
): AttachmentPart {
  const backends: Backend[] = [];
  const serviceUpstreams: { upstream: Upstream; problems: Found[] }[] = [];
  const appsUpstreams: Upstream[] = [];
  const sources = aggregate(a.workers).map(formatCidr);
  const apiServer = a.attachment.spec.apiServerService ?? "kube-apiserver";
  const prefix = `${a.ref.namespace}/${a.ref.name}`;
  for (const row of ROWS) {
    // Source-matched routes exist only while worker addresses are known (docs/reference.md#worker-addresses).
    if (row.bySource && sources.length === 0) continue;
    const service = row.service(apiServer);
    const upstream = `${a.controlPlaneNamespace}/${service}:${row.servicePort}`;
    if (!serviceUpstreams.some((u) => u.upstream.name === upstream)) {
      const found = new Problems();
      serviceUpstreams.push({
        upstream: {
          kind: "address",
          name: upstream,
          endpoints: serviceEndpoints(a, service, row.servicePort, services, found.for(a.ref)),
          connectTimeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
          target: { service, namespace: a.controlPlaneNamespace, port: row.servicePort },
        },
        problems: [...found.recorded()],
      });
    }
    const endpoint = typeof row.serverNames === "string" ? endpointOf(a, row.serverNames) : undefined;
    backends.push({
      name: `${prefix}/${row.kind}`,
      kind: row.kind,
      attachment: prefix,
      port: endpoint?.port ?? row.port,
      serverNames:
        endpoint !== undefined
          ? [endpoint.hostname]
          : typeof row.serverNames === "string"
            ? []
            : row.serverNames(a.domain),
      sourcePrefixRanges: row.bySource ? sources : [],
      upstream,
    });
  }

  const found = new Problems();
  if (a.attachment.spec.appsIngress?.enabled === true) reportAppsIngress(infra, a, found.for(a.ref));
  else reportIgnoredAppsStatus(a, found.for(a.ref));
  const target = appsTarget(a);
  const ports = a.attachment.spec.appsIngress?.ports ?? {};
  if (target !== undefined) {
    for (const [kind, listener, port] of [
      ["apps-https", 443, ports.https ?? 443],
      ["apps-http", 80, ports.http ?? 80],
    ] as const) {
      const upstream = appsUpstream(target, port);
      appsUpstreams.push(upstream);
      backends.push({
        name: `${prefix}/${kind}`,
        kind,
        attachment: prefix,
        port: listener,
        serverNames: [`*.apps.${a.domain}`],
        sourcePrefixRanges: [],
        upstream: upstream.name,
      });
    }
  }
  return {
    infraSpec: infra.infra.spec,
    workers: a.workers,
    endpoints: a.endpoints,
    services: looked,
    backends,
    serviceUpstreams,
    appsUpstreams,
    problems: [...found.recorded()],
  };
}

/** The VIP's cluster (endpoints over EDS), or the hostname's (Envoy resolves it: LOGICAL_DNS). */
function appsUpstream(target: AppsTarget, port: number): Upstream {
  const common = { connectTimeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
  if ("ip" in target) {
    return {
      ...common,
      kind: "address",
      name: `vip/${target.ip}:${port}`,
      endpoints: [{ address: target.ip, port }],
      target: { service: target.ip, namespace: undefined, port },
    };
  }
  return {
    ...common,
    kind: "dns",
    name: `dns/${target.hostname}:${port}`,
    hostname: target.hostname,
    port,
    target: { service: target.hostname, namespace: undefined, port },
  };
}

/** The Service's ClusterIP:port; empty (with a pending problem) while it is missing or headless. */
function serviceEndpoints(
  a: ResolvedAttachment,
  name: string,
  port: number,
  services: ServiceIndex,
  p: ObjectProblems,
): Endpoint[] {
  const svc = services.get(`${a.controlPlaneNamespace}/${name}`);
  const where = `${a.controlPlaneNamespace}/${name}`;
  if (svc === undefined) {
    p.pending("", "WaitingForServices", `Service ${where} not found; its routes refuse connections until it exists`);
    return [];
  }
  const ip = svc.spec?.clusterIP;
  if (ip === undefined || parseIPv4(ip) === undefined) {
    p.pending("", "WaitingForServices", `Service ${where} has no ClusterIP (headless or not allocated)`);
    return [];
  }
  const ports = svc.spec?.ports ?? [];
  if (ports.length > 0 && !ports.some((sp) => sp.port === port)) {
    p.warning(
      "",
      "ServicePortMismatch",
      `Service ${where} does not expose port ${port} (has ${ports.map((sp) => sp.port).join(", ")})`,
    );
  }
  return [{ address: formatIPv4(parseIPv4(ip) ?? 0), port }];
}
