// Hand-built DnsModels for the renderer tests. The renderer serves any zone set; these put a
// hosted cluster's names in one zone for its domain, which exercises records below an apex and
// wildcards beside other names. The model itself publishes one zone per name (issue 18): that
// shape is covered by the golden files and by real CoreDNS in test/dns/coredns.
import type { ARecord, DnsModel, Zone } from "../../src/model/types.js";
import { CONTROL_PLANE_HOSTS, KUBERNETES_ALIASES } from "../../src/model/backends.js";

export const VLAN_CIDR = "192.0.2.0/24";
export const DNS_IP = "192.0.2.3";
export const PROXY_IP = "192.0.2.4";
export const APPS_VIP = "192.0.2.200";
/** The proxy Service ClusterIP the default view publishes when internalProxyService is set. */
export const INTERNAL_IP = "172.30.12.34";

export { KUBERNETES_ALIASES };

/** The static names of one hosted cluster's domain, in one zone. */
export function clusterZone(domain: string, address: string, appsAddress?: string): Zone {
  const records: ARecord[] = CONTROL_PLANE_HOSTS.map((l) => ({
    name: `${l}.${domain}`,
    address,
  }));
  if (appsAddress !== undefined) records.push({ name: `*.apps.${domain}`, address: appsAddress });
  records.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { origin: domain, records };
}

/** One zone per kubernetes alias, each with an apex A record. */
export function aliasZones(address: string): Zone[] {
  return KUBERNETES_ALIASES.map((origin) => ({ origin, records: [{ name: origin, address }] }));
}

function byOrigin(zones: Zone[]): Zone[] {
  return [...zones].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
}

export interface ModelOptions {
  readonly domains: readonly string[];
  /** Publish the kubernetes aliases (worker addresses known). */
  readonly aliases?: boolean;
  /** Add `*.apps` records (apps ingress Ready with an external IP). */
  readonly apps?: boolean;
  /** internalProxyService resolved: the default view answers with this ClusterIP. */
  readonly internal?: string;
  readonly upstreams?: DnsModel["upstreams"];
}

/** A DnsModel for the given hosted-cluster domains on the 192.0.2.0/24 VLAN. */
export function model(o: ModelOptions): DnsModel {
  const vlan = o.domains.map((d) => clusterZone(d, PROXY_IP, o.apps === true ? APPS_VIP : undefined));
  if (o.aliases === true) vlan.push(...aliasZones(PROXY_IP));
  const internal = o.internal;
  const def =
    internal === undefined
      ? []
      : o.domains.map((d) => clusterZone(d, internal, o.apps === true ? internal : undefined));
  if (internal !== undefined && o.aliases === true) def.push(...aliasZones(internal));
  return {
    name: "clusters/infra-dns",
    serverIP: DNS_IP,
    views: [
      { name: "vlan", sourceCidr: VLAN_CIDR, zones: byOrigin(vlan) },
      { name: "default", sourceCidr: undefined, zones: byOrigin(def) },
    ],
    upstreams: o.upstreams ?? ["198.51.100.53", "198.51.100.54"],
    cacheSeconds: 30,
    reloadSeconds: 5,
  };
}
