// The benchmark's DNS model: many hosted clusters on one VLAN (loopback 127.0.8.0/24 here), both
// views populated, and the queries dnsperf replays against every target.
import type { DnsModel, Zone } from "../../src/model/types.js";

/** The VLAN on loopback: dnsperf -a 127.0.8.5 is a VLAN client. */
export const VLAN_CIDR = "127.0.8.0/24";
/** Source address dnsperf queries from (inside the VLAN). */
export const VLAN_SOURCE = "127.0.8.5";
const CLUSTERS = 50;
const PROXY = "192.0.2.4";
const APPS = "192.0.2.200";
const INTERNAL = "172.30.12.34";
const ALIASES = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"];
const HOSTS = ["api", "api-int", "ignition", "konnectivity", "oauth"];

/** Domain of hosted cluster i. */
export function domain(i: number): string {
  return `hcp-${String(i).padStart(3, "0")}.clusters.example.com`;
}

// One zone per published name, as the model publishes them (issue 18: never a zone for the domain).
function zones(address: string, apps: string): Zone[] {
  const out: Zone[] = [];
  const single = (name: string): Zone => ({ origin: name, records: [{ name, address }] });
  for (let i = 0; i < CLUSTERS; i++) {
    const d = domain(i);
    for (const h of HOSTS) out.push(single(`${h}.${d}`));
    out.push({ origin: `apps.${d}`, records: [{ name: `*.apps.${d}`, address: apps }] });
  }
  for (const a of ALIASES) out.push(single(a));
  return out.sort((a, b) => (a.origin < b.origin ? -1 : 1));
}

/** The model every target serves. */
export function benchModel(): DnsModel {
  return {
    name: "bench/infra-dns",
    serverIP: "192.0.2.3",
    views: [
      { name: "vlan", sourceCidr: VLAN_CIDR, zones: zones(PROXY, APPS) },
      { name: "default", sourceCidr: undefined, zones: zones(INTERNAL, INTERNAL) },
    ],
    upstreams: ["192.0.2.53"],
    cacheSeconds: 30,
    reloadSeconds: 5,
  };
}

/**
 * dnsperf's input: per cluster the five control-plane names, a wildcard apps name, a NODATA
 * (AAAA) and an NXDOMAIN query (below api.<d>: other names under <d> are forwarded), plus the kubernetes aliases. All authoritative: BIND serves the
 * zones with recursion off, so forwarding is left out of the comparison.
 */
export function benchQueries(): string {
  const lines: string[] = [];
  for (let i = 0; i < CLUSTERS; i++) {
    const d = domain(i);
    for (const h of HOSTS) lines.push(`${h}.${d} A`);
    lines.push(`console-openshift-console.apps.${d} A`, `api.${d} AAAA`, `missing.api.${d} A`);
  }
  for (const a of ALIASES) lines.push(`${a} A`);
  return `${lines.join("\n")}\n`;
}
