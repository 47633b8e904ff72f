// Child custom resources: the DHCPServer, DNSServer and ProxyServer specs generated from a resolved
// Infra and its models (what `kubectl get` shows of a topology). Pure.
import { API_VERSION, type DHCPServer, type DNSServer, type ObjectMeta, type ProxyServer } from "../api/schema.js";
import { DEFAULT_TIMEOUT_SECONDS } from "./backends.js";
import type { ResolvedInfra } from "./infra.js";
import type { Backend, DhcpModel, DnsModel, DnsView, ProxyModel, Upstream, Zone } from "./types.js";

/** Label put on every generated child, naming its Infra. */
export const INFRA_LABEL = "hostedcluster.densityops.com/infra";

function childMeta(infra: ResolvedInfra, suffix: string): ObjectMeta {
  const m = infra.infra.metadata;
  return {
    name: `${m.name}-${suffix}`,
    namespace: m.namespace,
    labels: { "app.kubernetes.io/managed-by": "oooi", [INFRA_LABEL]: m.name },
  };
}

export function dhcpServer(infra: ResolvedInfra, dhcp: DhcpModel): DHCPServer {
  const d = infra.dhcp;
  return {
    apiVersion: API_VERSION,
    kind: "DHCPServer",
    metadata: childMeta(infra, "dhcp"),
    spec: {
      networkConfig: {
        cidr: dhcp.subnet,
        gateway: dhcp.routers,
        serverIP: dhcp.serverIP,
        dnsServers: [...dhcp.dnsServers],
        networkAttachmentName: infra.nad.name,
        networkAttachmentNamespace: infra.nad.namespace,
      },
      leaseConfig: {
        ...(dhcp.pool === undefined ? {} : { rangeStart: dhcp.pool.start, rangeEnd: dhcp.pool.end }),
        leaseTime: d?.leaseTime ?? "1h",
      },
      options: dhcp.options.map((o) => ({ code: o.code, value: o.value })),
      ...(d?.image === undefined ? {} : { image: d.image }),
      interface: dhcp.interface,
      unknownClients: dhcp.unknownClients,
    },
  };
}

type StaticEntry = NonNullable<DNSServer["spec"]["staticEntries"]>[number];

/**
 * Each zone's entries in its DNSServer's spec.staticEntries: the model keeps an unchanged
 * attachment's zones, so a change on a 5,000-attachment Infra makes entries for its own zones only.
 */
const zoneEntries = new WeakMap<Zone, { readonly view: string; readonly entries: readonly StaticEntry[] }>();

function staticEntriesOf(z: Zone, view: DnsView["name"]): readonly StaticEntry[] {
  const kept = zoneEntries.get(z);
  if (kept?.view === view) return kept.entries;
  const entries = z.records.map((r) => ({ hostname: r.name, ip: r.address, view }));
  zoneEntries.set(z, { view, entries });
  return entries;
}

/** Every zone's entries, view by view (a loop: flatMap's arrays per zone cost more than the entries). */
function staticEntries(views: readonly DnsView[]): StaticEntry[] {
  const out: StaticEntry[] = [];
  for (const view of views) for (const z of view.zones) for (const e of staticEntriesOf(z, view.name)) out.push(e);
  return out;
}

export function dnsServer(infra: ResolvedInfra, dns: DnsModel): DNSServer {
  const [vlan, pods] = dns.views;
  return {
    apiVersion: API_VERSION,
    kind: "DNSServer",
    metadata: childMeta(infra, "dns"),
    spec: {
      networkConfig: {
        serverIP: dns.serverIP,
        ...(infra.proxy === undefined ? {} : { proxyIP: infra.proxy.serverIP }),
        ...(infra.proxy?.internalIP === undefined ? {} : { internalProxyIP: infra.proxy.internalIP }),
        secondaryNetworkCIDR: infra.cidrText,
        networkAttachmentName: infra.nad.name,
        networkAttachmentNamespace: infra.nad.namespace,
      },
      staticEntries: staticEntries([vlan, pods]),
      upstreamDNS: dns.upstreams === "resolv.conf" ? ["resolv.conf"] : [...dns.upstreams],
      ...(infra.dns?.image === undefined ? {} : { image: infra.dns.image }),
      reloadInterval: `${dns.reloadSeconds}s`,
      cacheTTL: `${dns.cacheSeconds}s`,
    },
  };
}

type ChildBackend = NonNullable<ProxyServer["spec"]["backends"]>[number];

/**
 * Each Backend's entry in its ProxyServer's spec.backends, by Backend and the Upstream it was made
 * with: the model keeps an unchanged hosted cluster's Backend and Upstream objects, so a change on a
 * 3,500-backend VLAN makes entries for its own cluster only.
 */
const childBackends = new WeakMap<Backend, { readonly up: Upstream | undefined; readonly entry: ChildBackend }>();

function childBackend(b: Backend, up: Upstream | undefined): ChildBackend {
  const kept = childBackends.get(b);
  if (kept !== undefined && kept.up === up) return kept.entry;
  const [hostname, ...alternates] = b.serverNames;
  const target = up?.target ?? { service: b.upstream, namespace: undefined, port: 0 };
  const entry: ChildBackend = {
    name: b.name,
    ...(hostname === undefined ? {} : { hostname }),
    ...(alternates.length === 0 ? {} : { alternateHostnames: alternates }),
    ...(b.sourcePrefixRanges.length === 0 ? {} : { sourcePrefixRanges: [...b.sourcePrefixRanges] }),
    port: b.port,
    targetService: target.service,
    ...(target.namespace === undefined ? {} : { targetNamespace: target.namespace }),
    targetPort: target.port,
    timeoutSeconds: up?.connectTimeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
  };
  childBackends.set(b, { up, entry });
  return entry;
}

export function proxyServer(infra: ResolvedInfra, proxy: ProxyModel): ProxyServer {
  const upstreams = new Map(proxy.upstreams.map((u) => [u.name, u]));
  return {
    apiVersion: API_VERSION,
    kind: "ProxyServer",
    metadata: childMeta(infra, "proxy"),
    spec: {
      networkConfig: {
        serverIP: proxy.serverIP,
        networkAttachmentName: infra.nad.name,
        networkAttachmentNamespace: infra.nad.namespace,
      },
      xdsPort: 18000,
      backends: proxy.backends.map((b) => childBackend(b, upstreams.get(b.upstream))),
      ...(infra.proxy?.proxyImage === undefined ? {} : { proxyImage: infra.proxy.proxyImage }),
      ...(infra.proxy?.managerImage === undefined ? {} : { managerImage: infra.proxy.managerImage }),
    },
  };
}
