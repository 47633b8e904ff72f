// docs/reference.md#backends: the backends each served attachment contributes to its Infra's proxy.
import { aggregate, formatCidr, formatIPv4, parseIPv4 } from "./ipv4.js";
import type { ResolvedAttachment } from "./attachments.js";
import type { ResolvedInfra, ServiceIndex } from "./infra.js";
import { cmp, type ObjectProblems, type Problems } from "./problems.js";
import type { Backend, BackendKind, Endpoint, ListenerPort, ProxyModel, Upstream } from "./types.js";

/** The names a worker uses for the in-cluster API service; answered by DNS and matched by SNI. */
export const KUBERNETES_ALIASES = [
  "kubernetes",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
] as const;

export const DEFAULT_TIMEOUT_SECONDS = 30;

/** The per-attachment names published on the proxy address, besides the aliases and *.apps. */
export const CONTROL_PLANE_HOSTS = ["api", "api-int", "oauth", "ignition", "konnectivity"] as const;

interface Row {
  readonly kind: BackendKind;
  readonly port: ListenerPort;
  readonly serverNames: (d: string) => string[];
  readonly bySource: boolean;
  readonly service: (apiServer: string) => string;
  readonly servicePort: number;
}

const ROWS: readonly Row[] = [
  {
    kind: "kube-apiserver",
    port: 6443,
    serverNames: (d) => [`api.${d}`],
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
    serverNames: (d) => [`oauth.${d}`],
    bySource: false,
    service: () => "oauth-openshift",
    servicePort: 6443,
  },
  {
    kind: "ignition-server",
    port: 443,
    serverNames: (d) => [`ignition.${d}`],
    bySource: false,
    service: () => "ignition-server-proxy",
    servicePort: 443,
  },
  {
    kind: "konnectivity-server",
    port: 443,
    serverNames: (d) => [`konnectivity.${d}`],
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

/** The apps VIP of an attachment when its ingress is Ready with an IP; undefined otherwise. */
export function appsVip(a: ResolvedAttachment): string | undefined {
  const s = a.attachment.status?.appsIngressStatus;
  if (a.attachment.spec.appsIngress?.enabled !== true || s?.phase !== "Ready") return undefined;
  const ip = s.externalIP;
  return ip !== undefined && parseIPv4(ip) !== undefined ? ip : undefined;
}

export function buildProxy(
  infra: ResolvedInfra,
  attachments: readonly ResolvedAttachment[],
  services: ServiceIndex,
  problems: Problems,
): ProxyModel | undefined {
  if (infra.proxy === undefined) return undefined;
  const backends: Backend[] = [];
  const upstreams = new Map<string, Upstream>();

  for (const a of attachments) {
    if (!a.served) continue;
    const sources = aggregate(a.workers).map(formatCidr);
    const apiServer = a.attachment.spec.apiServerService ?? "kube-apiserver";
    const prefix = `${a.ref.namespace}/${a.ref.name}`;
    for (const row of ROWS) {
      // Source-matched routes exist only while worker addresses are known (docs/reference.md#worker-addresses).
      if (row.bySource && sources.length === 0) continue;
      const service = row.service(apiServer);
      const upstream = `${a.controlPlaneNamespace}/${service}:${row.servicePort}`;
      if (!upstreams.has(upstream)) {
        upstreams.set(upstream, {
          name: upstream,
          endpoints: serviceEndpoints(a, service, row.servicePort, services, problems.for(a.ref)),
          connectTimeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
          target: { service, namespace: a.controlPlaneNamespace, port: row.servicePort },
        });
      }
      backends.push({
        name: `${prefix}/${row.kind}`,
        kind: row.kind,
        attachment: prefix,
        port: row.port,
        serverNames: row.serverNames(a.domain),
        sourcePrefixRanges: row.bySource ? sources : [],
        upstream,
      });
    }

    const s = a.attachment.status?.appsIngressStatus;
    const metallb = a.attachment.spec.appsIngress?.metallb;
    if (a.attachment.spec.appsIngress?.enabled === true && (metallb?.addressPoolName ?? "") === "") {
      // The original reports this as Degraded/InvalidConfiguration rather than accepting it silently.
      problems
        .for(a.ref)
        .warning(
          "spec.appsIngress.metallb.addressPoolName",
          "InvalidConfiguration",
          `apps ingress is enabled without a MetalLB address pool (metallb.addressPoolName, ipAddressPoolRange); no pool is installed, so *.apps.${a.domain} gets a route only once the ingress reports an IP`,
        );
    }
    const vip = appsVip(a);
    if (a.attachment.spec.appsIngress?.enabled === true && s?.phase === "Ready" && vip === undefined) {
      problems
        .for(a.ref)
        .warning(
          "status.appsIngressStatus",
          "AppsIngressWithoutIP",
          `apps ingress reports ${s.externalHostname !== undefined ? `only the hostname ${s.externalHostname}` : "no address"}; *.apps.${a.domain} gets neither a proxy route nor a DNS record until it reports an IP`,
        );
    }
    if (vip === undefined) continue;
    const ports = a.attachment.spec.appsIngress?.ports ?? {};
    for (const [kind, listener, port] of [
      ["apps-https", 443, ports.https ?? 443],
      ["apps-http", 80, ports.http ?? 80],
    ] as const) {
      const upstream = `vip/${vip}:${port}`;
      upstreams.set(upstream, {
        name: upstream,
        endpoints: [{ address: vip, port }],
        connectTimeoutSeconds: DEFAULT_TIMEOUT_SECONDS,
        target: { service: vip, namespace: undefined, port },
      });
      backends.push({
        name: `${prefix}/${kind}`,
        kind,
        attachment: prefix,
        port: listener,
        serverNames: [`*.apps.${a.domain}`],
        sourcePrefixRanges: [],
        upstream,
      });
    }
  }

  return {
    node: `${infra.ref.namespace}/${infra.ref.name}-proxy`,
    serverIP: infra.proxy.serverIP,
    backends: backends.sort((x, y) => cmp(x.name, y.name)),
    upstreams: [...upstreams.values()].sort((x, y) => cmp(x.name, y.name)),
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
