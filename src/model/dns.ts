// docs/reference.md#dns: the records of the VLAN view and of the default (pod-network) view.
import { appsVip, controlPlaneNames, KUBERNETES_ALIASES } from "./backends.js";
import type { ResolvedAttachment } from "./attachments.js";
import type { ResolvedInfra } from "./infra.js";
import { cmp } from "./problems.js";
import { sortedFromLists, type SortedFromLists } from "../util/merge-sorted.js";
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
  const targets = { vlan: infra.proxy?.serverIP, default: infra.proxy?.internalIP };
  const parts = served.map((a) => attachmentZones(a, targets));
  // DNS cannot pick a hosted cluster for the aliases; Envoy does, by worker source address.
  const aliases = served.some((a) => a.workers.length > 0) ? aliasZones(targets) : undefined;
  const last = lastZones.get(infra.infra);
  const view = (name: DnsView["name"]): SortedFromLists<Zone> =>
    sortedFromLists(
      last?.[name],
      [...parts.map((p) => p[name]), ...(aliases === undefined ? [] : [aliases[name]])],
      compareZones,
    );
  const zones = { vlan: view("vlan"), default: view("default") };
  lastZones.set(infra.infra, zones);
  return {
    name: `${infra.ref.namespace}/${infra.ref.name}-dns`,
    serverIP: infra.dns.serverIP,
    views: [
      { name: "vlan", sourceCidr: infra.cidrText, zones: zones.vlan.items },
      { name: "default", sourceCidr: undefined, zones: zones.default.items },
    ],
    upstreams: infra.upstreams,
    cacheSeconds: DEFAULT_CACHE_SECONDS,
    reloadSeconds: DEFAULT_RELOAD_SECONDS,
  };
}

/** The address each view's records answer with: the proxy's VLAN address, its pod-network one. */
type Targets = Readonly<Record<DnsView["name"], string | undefined>>;

/** One attachment's zones in each view, and what they were made from. */
interface AttachmentZones extends Record<DnsView["name"], readonly Zone[]> {
  readonly targets: Targets;
  /** Its control-plane names; api-int.<domain> among them, so a new domain is new names. */
  readonly names: readonly string[];
}

/**
 * The last zones made per attachment object. One attachment's change rebuilds its Infra's model;
 * every other attachment's zones are these same objects, so the CoreDNS renderer (src/dns/render)
 * regroups and renders only the zones that came or went.
 */
const madeZones = new WeakMap<ResolvedAttachment["attachment"], AttachmentZones>();

function attachmentZones(a: ResolvedAttachment, targets: Targets): AttachmentZones {
  const names = controlPlaneNames(a);
  const kept = madeZones.get(a.attachment);
  if (
    kept !== undefined &&
    kept.targets.vlan === targets.vlan &&
    kept.targets.default === targets.default &&
    kept.names.length === names.length &&
    kept.names.every((n, i) => n === names[i])
  )
    return kept;
  // The apps VIP is read from the attachment object's own status: the same object, the same VIP.
  const vip = appsVip(a);
  const zones = (view: DnsView["name"]): Zone[] => {
    const proxy = targets[view];
    if (proxy === undefined) return [];
    const out = names.map((name) => single(name, proxy));
    // VLAN clients reach the apps VIP directly; pods go through the proxy, which routes *.apps by SNI/Host.
    if (vip !== undefined)
      out.push({
        origin: `apps.${a.domain}`,
        records: [{ name: `*.apps.${a.domain}`, address: view === "vlan" ? vip : proxy }],
      });
    return out;
  };
  const made = { targets, names, vlan: zones("vlan"), default: zones("default") };
  madeZones.set(a.attachment, made);
  return made;
}

const single = (name: string, address: string): Zone => ({ origin: name, records: [{ name, address }] });

/** The kubernetes aliases' zones per pair of targets, the same objects from one build to the next. */
const aliasesByTargets = new Map<string, Record<DnsView["name"], readonly Zone[]>>();
const MAX_ALIAS_TARGETS = 1024;

function aliasZones(targets: Targets): Record<DnsView["name"], readonly Zone[]> {
  const key = `${targets.vlan ?? ""} ${targets.default ?? ""}`;
  let made = aliasesByTargets.get(key);
  if (made === undefined) {
    const zones = (proxy: string | undefined): Zone[] =>
      proxy === undefined ? [] : KUBERNETES_ALIASES.map((alias) => single(alias, proxy));
    made = { vlan: zones(targets.vlan), default: zones(targets.default) };
    // Bounded: Infras come and go over a process's life, each pair of addresses is a few objects.
    if (aliasesByTargets.size >= MAX_ALIAS_TARGETS) aliasesByTargets.clear();
    aliasesByTargets.set(key, made);
  }
  return made;
}

/** Each Infra's last zones per view: the next build patches them instead of sorting every zone again. */
const lastZones = new WeakMap<ResolvedInfra["infra"], Record<DnsView["name"], SortedFromLists<Zone>>>();

/**
 * By origin, then by records: two zones that compare equal write the same JSON, so the order of the
 * zones is the same whatever the order of the attachments and the builds before.
 */
function compareZones(x: Zone, y: Zone): number {
  return cmp(x.origin, y.origin) || cmp(recordsKey(x), recordsKey(y));
}

function recordsKey(z: Zone): string {
  return z.records.map((r) => `${r.name} ${r.address}`).join(",");
}
