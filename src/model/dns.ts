// docs/reference.md#dns: the records of the VLAN view and of the default (pod-network) view.
import { appsVip, controlPlaneNames, KUBERNETES_ALIASES } from "./backends.js";
import type { ResolvedAttachment } from "./attachments.js";
import type { ResolvedInfra } from "./infra.js";
import { cmp } from "./problems.js";
import type { DnsModel, DnsView, Zone } from "./types.js";

export const DEFAULT_CACHE_SECONDS = 30;
export const DEFAULT_RELOAD_SECONDS = 5;

/**
 * One zone per published name in each view: api-int and the api, oauth, ignition and konnectivity
 * names (the HostedCluster's, else under the domain: src/model/endpoints.ts) of every served
 * attachment, `apps.<domain>` holding the *.apps wildcard, and each kubernetes alias. Never a
 * zone for the domain itself: oooi answers only the names it publishes and every other name under
 * the domain is forwarded, so records published elsewhere keep resolving (the original: "All
 * other names are forwarded"). The VLAN view answers with the proxy's VLAN address and the apps
 * VIP; the default view answers only with the proxy's pod-network address and is empty when
 * there is none — pods never learn a VLAN address.
 */
export function buildDns(infra: ResolvedInfra, attachments: readonly ResolvedAttachment[]): DnsModel | undefined {
  if (infra.dns === undefined) return undefined;
  const served = attachments.filter((a) => a.served);
  const vlanTarget = infra.proxy?.serverIP;
  const defaultTarget = infra.proxy?.internalIP;
  return {
    name: `${infra.ref.namespace}/${infra.ref.name}-dns`,
    serverIP: infra.dns.serverIP,
    views: [
      { name: "vlan", sourceCidr: infra.cidrText, zones: zonesFor(served, vlanTarget, "vlan") },
      { name: "default", sourceCidr: undefined, zones: zonesFor(served, defaultTarget, "default") },
    ],
    upstreams: infra.upstreams,
    cacheSeconds: DEFAULT_CACHE_SECONDS,
    reloadSeconds: DEFAULT_RELOAD_SECONDS,
  };
}

function zonesFor(served: readonly ResolvedAttachment[], proxy: string | undefined, view: DnsView["name"]): Zone[] {
  if (proxy === undefined) return [];
  const zones: Zone[] = [];
  const single = (name: string, address: string): Zone => ({ origin: name, records: [{ name, address }] });
  for (const a of served) {
    for (const name of controlPlaneNames(a)) zones.push(single(name, proxy));
    const vip = appsVip(a);
    // VLAN clients reach the apps VIP directly; pods go through the proxy, which routes *.apps by SNI/Host.
    if (vip !== undefined) {
      zones.push({
        origin: `apps.${a.domain}`,
        records: [{ name: `*.apps.${a.domain}`, address: view === "vlan" ? vip : proxy }],
      });
    }
  }
  // DNS cannot pick a hosted cluster for the aliases; Envoy does, by worker source address.
  if (served.some((a) => a.workers.length > 0)) {
    for (const alias of KUBERNETES_ALIASES) zones.push(single(alias, proxy));
  }
  return zones.sort((x, y) => cmp(x.origin, y.origin));
}
