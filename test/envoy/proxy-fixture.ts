// Hand-built ProxyModels shaped like docs/reference.md#backends: every backend kind of one attachment, for
// several attachments sharing one proxy.
import type { Backend, BackendKind, ListenerPort, ProxyModel, AddressUpstream } from "../../src/model/types.js";

/** One hosted cluster as the model would describe it. */
export interface AttachmentSpec {
  readonly namespace: string;
  readonly name: string;
  readonly domain: string;
  /** Control-plane namespace. */
  readonly cp: string;
  /** Minimal CIDR cover of the worker addresses; empty when none are known yet. */
  readonly workers: readonly string[];
  /** Apps ingress VIP once apps ingress is Ready. */
  readonly appsVip?: string;
}

const KUBERNETES_ALIASES = [
  "kubernetes",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
];

/** The backends of one attachment, in docs/reference.md#backends order. */
export function attachmentBackends(a: AttachmentSpec): Backend[] {
  const api = `${a.cp}/kube-apiserver:6443`;
  const backend = (
    kind: BackendKind,
    port: ListenerPort,
    serverNames: string[],
    upstream: string,
    sources: readonly string[] = [],
  ): Backend => ({
    name: `${a.namespace}/${a.name}/${kind}`,
    kind,
    attachment: `${a.namespace}/${a.name}`,
    port,
    serverNames,
    sourcePrefixRanges: [...sources],
    upstream,
  });
  const out: Backend[] = [
    backend("kube-apiserver", 6443, [`api.${a.domain}`], api),
    backend("kube-apiserver-internal", 6443, [`api-int.${a.domain}`], api),
    backend("oauth-openshift", 443, [`oauth.${a.domain}`], `${a.cp}/oauth-openshift:6443`),
    backend("ignition-server", 443, [`ignition.${a.domain}`], `${a.cp}/ignition-server-proxy:443`),
    backend("konnectivity-server", 443, [`konnectivity.${a.domain}`], `${a.cp}/konnectivity-server:8091`),
  ];
  if (a.workers.length > 0) {
    out.push(backend("kubernetes-service", 6443, [], api, a.workers));
    out.push(backend("kubernetes-hostname", 443, [...KUBERNETES_ALIASES, `kubernetes.${a.domain}`], api, a.workers));
  }
  if (a.appsVip !== undefined) {
    out.push(backend("apps-https", 443, [`*.apps.${a.domain}`], `vip/${a.appsVip}:443`));
    out.push(backend("apps-http", 80, [`*.apps.${a.domain}`], `vip/${a.appsVip}:80`));
  }
  return out;
}

/** Upstreams of one attachment; `endpointsFor` returns the resolved endpoints of a cluster. */
export function attachmentUpstreams(
  a: AttachmentSpec,
  endpointsFor: (name: string) => AddressUpstream["endpoints"],
): AddressUpstream[] {
  const names = new Set(attachmentBackends(a).map((b) => b.upstream));
  return [...names].map((name) => ({
    kind: "address",
    name,
    endpoints: endpointsFor(name),
    connectTimeoutSeconds: 30,
    target: { service: "svc", namespace: "ns", port: 1 },
  }));
}

/** Builds a ProxyModel sorted the way the model sorts it. */
export function proxyModel(
  attachments: readonly AttachmentSpec[],
  endpointsFor: (name: string) => AddressUpstream["endpoints"],
): ProxyModel {
  const byName = <T extends { name: string }>(xs: T[]): T[] =>
    xs.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return {
    node: "oooi-system/infra-proxy",
    serverIP: "192.168.10.5",
    backends: byName(attachments.flatMap(attachmentBackends)),
    upstreams: byName(attachments.flatMap((a) => attachmentUpstreams(a, endpointsFor))),
  };
}

export const ALPHA: AttachmentSpec = {
  namespace: "clusters",
  name: "alpha",
  domain: "alpha.example.com",
  cp: "clusters-alpha",
  workers: ["192.168.10.20/31"],
  appsVip: "192.168.10.200",
};
export const BETA: AttachmentSpec = {
  namespace: "clusters",
  name: "beta",
  domain: "beta.example.com",
  cp: "clusters-beta",
  workers: ["192.168.10.30/32", "192.168.10.40/30"],
};
export const GAMMA: AttachmentSpec = {
  namespace: "tenant-x",
  name: "gamma",
  domain: "gamma.example.org",
  cp: "tenant-x-gamma",
  workers: [],
};

/** Endpoints by cluster: a couple of pod-network addresses, none for gamma's konnectivity. */
export function sampleEndpoints(name: string): AddressUpstream["endpoints"] {
  if (name === "tenant-x-gamma/konnectivity-server:8091") return [];
  if (name.startsWith("vip/")) {
    const [ip = "", port = "0"] = name.slice(4).split(":");
    return [{ address: ip, port: Number(port) }];
  }
  const port = Number(name.slice(name.lastIndexOf(":") + 1));
  const third = name.startsWith("clusters-alpha") ? 1 : name.startsWith("clusters-beta") ? 2 : 3;
  return [
    { address: `10.128.${third}.12`, port },
    { address: `10.128.${third}.7`, port },
  ];
}

/** The rich model: three attachments, SNI + wildcard + source ranges, apps HTTP, an empty EDS. */
export function richModel(): ProxyModel {
  return proxyModel([ALPHA, BETA, GAMMA], sampleEndpoints);
}
