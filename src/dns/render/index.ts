// DnsModel → the CoreDNS ConfigMap: a Corefile with split-horizon server blocks plus one zone file
// per (view, zone) for the file plugin. Pure and deterministic; never throws on model content —
// unusable names, addresses or CIDRs are left out rather than written into CoreDNS syntax.
import type { DnsModel, DnsView } from "../../model/types.js";
import { cidrContains, formatCidr, formatIPv4, parseCidr, parseIPv4 } from "../../model/ipv4.js";
import { RESOLV_CONF, renderCorefile, type ServerBlock, type ViewFilter } from "./corefile.js";
import { normalizeDomain, relativeOwner, zoneFileKey } from "./names.js";
import { renderZoneFile, type OwnedRecord, type ZoneFileInput } from "./zonefile.js";

export { DIGEST_PREFIX, nextSerial, readPrevious } from "./serial.js";
export { zoneFileKey } from "./names.js";

/** The CoreDNS ConfigMap's data: "Corefile" plus one key per zone file. */
export interface CoreDnsFiles {
  readonly files: Readonly<Record<string, string>>;
}

/** Inputs beyond the model that shape the rendering. */
export interface RenderCoreDnsOptions {
  /** The ConfigMap data currently deployed; keeps SOA serials stable or bumps them. */
  readonly previous?: Readonly<Record<string, string>>;
  /** Where the whole ConfigMap is mounted in the CoreDNS container (no subPath). */
  readonly mountDir?: string;
}

/** ConfigMap key of the Corefile. */
export const COREFILE_KEY = "Corefile";
/** Default mount directory of the ConfigMap in the CoreDNS container. */
export const DEFAULT_MOUNT_DIR = "/etc/coredns";
/**
 * Glue address of the NS name in zones served to unfiltered (pod-network) clients. Those clients
 * reach CoreDNS through its Service ClusterIP, which the model does not know, and nothing delegates
 * to these zones, so the NS exists only because a zone needs one. Loopback names no other host;
 * when a VLAN is itself on loopback (a test rig), the IPv4 dummy address (RFC 7600) stands in, so
 * the glue is never a VLAN address.
 */
export const DEFAULT_VIEW_NS_ADDRESS = "127.0.0.1";
const NS_ADDRESS_CANDIDATES = [DEFAULT_VIEW_NS_ADDRESS, "192.0.0.8", "198.18.0.8"] as const;

/** The default view's glue: the first candidate no filtered view's CIDR contains. */
export function defaultViewNsAddress(vlanCidrs: readonly string[]): string {
  const inside = (ip: string) =>
    vlanCidrs.some((c) => {
      const cidr = parseCidr(c);
      const addr = parseIPv4(ip);
      return cidr !== undefined && addr !== undefined && cidrContains(cidr, addr);
    });
  return NS_ADDRESS_CANDIDATES.find((ip) => !inside(ip)) ?? DEFAULT_VIEW_NS_ADDRESS;
}

// CoreDNS's forward plugin accepts at most 15 upstreams.
const MAX_UPSTREAMS = 15;
const DEFAULT_TTL = 30;
const DEFAULT_RELOAD = 5;
const MAX_TTL = 2147483647;
const VIEW_NAME = /^[a-z0-9][a-z0-9-]{0,30}$/;

/** Renders the CoreDNS ConfigMap data for one DNSServer. */
export function renderCoreDns(dns: DnsModel, options: RenderCoreDnsOptions = {}): CoreDnsFiles {
  const mountDir = normalizeMountDir(options.mountDir ?? DEFAULT_MOUNT_DIR);
  const ttl = wholeSeconds(dns.cacheSeconds, 0, MAX_TTL) ?? DEFAULT_TTL;
  const cacheSeconds = wholeSeconds(dns.cacheSeconds, 1, MAX_TTL);
  const reloadSeconds = wholeSeconds(dns.reloadSeconds, 1, MAX_TTL) ?? DEFAULT_RELOAD;
  const { filtered, unfiltered } = planViews(dns);

  const zoneFiles = new Map<string, string>();
  const inputs = new Map<string, ZoneFileInput>();
  const before = options.previous === undefined ? undefined : zoneInputs.get(options.previous);
  const zonePath = (view: ViewPlan, origin: string, records: readonly OwnedRecord[]): string => {
    const key = zoneFileKey(view.name, origin);
    const input: ZoneFileInput = { origin, records, nsAddress: view.nsAddress, ttl };
    const previous = options.previous?.[key];
    const was = before?.get(key);
    // A zone rendered last time from the same input renders to the same text (same digest, so the
    // same serial): kept as it is, so one worker's change does not re-hash every zone of the VLAN.
    zoneFiles.set(
      key,
      previous !== undefined && was !== undefined && sameZoneInput(was, input)
        ? previous
        : renderZoneFile(input, previous).text,
    );
    inputs.set(key, input);
    return mountDir === "/" ? `/${key}` : `${mountDir}/${key}`;
  };

  const origins = [
    ...new Set([...filtered, ...(unfiltered ? [unfiltered] : [])].flatMap((v) => [...v.zones.keys()])),
  ].sort(compare);
  const blocks: ServerBlock[] = [];
  for (const origin of origins) {
    const fallback = unfiltered?.zones.get(origin);
    // Filtered blocks first: CoreDNS takes the first block of a zone whose view matches.
    for (const view of filtered) {
      const records = view.zones.get(origin);
      if (records !== undefined) {
        blocks.push({
          zone: origin,
          view: view.filter,
          answer: { kind: "file", path: zonePath(view, origin, records) },
        });
      } else if (fallback !== undefined) {
        // Keep the other view's static answers away from this view's clients.
        blocks.push({ zone: origin, view: view.filter, answer: { kind: "forward" } });
      }
    }
    if (unfiltered !== undefined && fallback !== undefined) {
      blocks.push({
        zone: origin,
        view: undefined,
        answer: { kind: "file", path: zonePath(unfiltered, origin, fallback) },
      });
    } else {
      blocks.push({ zone: origin, view: undefined, answer: { kind: "forward" } });
    }
  }

  const corefile = renderCorefile(blocks, { forwardTo: forwardTargets(dns.upstreams), cacheSeconds, reloadSeconds });
  const files: Record<string, string> = { [COREFILE_KEY]: corefile };
  for (const key of [...zoneFiles.keys()].sort(compare)) files[key] = zoneFiles.get(key) ?? "";
  Object.freeze(files);
  zoneInputs.set(files, inputs);
  return { files };
}

/**
 * Each rendering's zone inputs by ConfigMap key, found again when that rendering comes back as
 * `previous`. Keyed by the (frozen) files object itself: a previous rendering from anywhere else
 * (a ConfigMap read back, a file) has no entry, and each of its zones is rendered as before.
 */
const zoneInputs = new WeakMap<object, ReadonlyMap<string, ZoneFileInput>>();

function sameZoneInput(a: ZoneFileInput, b: ZoneFileInput): boolean {
  if (a.origin !== b.origin || a.nsAddress !== b.nsAddress || a.ttl !== b.ttl) return false;
  if (a.records.length !== b.records.length) return false;
  return a.records.every((r, i) => {
    const s = b.records[i];
    return r.owner === s?.owner && r.address === s.address;
  });
}

/** A view reduced to what the renderer writes: valid zones, canonical records, its NS glue. */
interface ViewPlan {
  readonly name: string;
  readonly filter: ViewFilter | undefined;
  readonly nsAddress: string;
  /** Origin → records sorted by owner then address. */
  readonly zones: ReadonlyMap<string, readonly OwnedRecord[]>;
}

function planViews(dns: DnsModel): { filtered: ViewPlan[]; unfiltered: ViewPlan | undefined } {
  const filtered: ViewPlan[] = [];
  let unfiltered: ViewPlan | undefined;
  const names = new Set<string>();
  const serverIP = parseIPv4(dns.serverIP.trim());
  for (const view of dns.views) {
    if (!VIEW_NAME.test(view.name) || names.has(view.name)) continue;
    names.add(view.name);
    const zones = planZones(view);
    if (view.sourceCidr !== undefined) {
      // A view whose CIDR cannot be expressed is dropped: serving it unfiltered would leak it.
      const cidr = parseCidr(view.sourceCidr.trim());
      if (cidr === undefined) continue;
      filtered.push({
        name: view.name,
        filter: { name: view.name, cidr: formatCidr(cidr) },
        // VLAN clients reach CoreDNS at its serverIP, so that is the honest NS address there.
        nsAddress: serverIP === undefined ? DEFAULT_VIEW_NS_ADDRESS : formatIPv4(serverIP),
        zones,
      });
    } else if (unfiltered === undefined) {
      // Only one unfiltered block per zone:port can exist; a second unfiltered view is ignored.
      const vlans = dns.views.flatMap((v) => (v.sourceCidr === undefined ? [] : [v.sourceCidr.trim()]));
      unfiltered = { name: view.name, filter: undefined, nsAddress: defaultViewNsAddress(vlans), zones };
    }
  }
  return { filtered, unfiltered };
}

function planZones(view: DnsView): Map<string, OwnedRecord[]> {
  const byOrigin = new Map<string, Map<string, OwnedRecord>>();
  for (const zone of view.zones) {
    const origin = normalizeDomain(zone.origin);
    if (origin === undefined) continue;
    const records = byOrigin.get(origin) ?? new Map<string, OwnedRecord>();
    byOrigin.set(origin, records);
    for (const record of zone.records) {
      const owner = relativeOwner(record.name, origin);
      const address = parseIPv4(record.address.trim());
      if (owner === undefined || address === undefined) continue;
      const r = { owner, address: formatIPv4(address) };
      records.set(`${r.owner} ${r.address}`, r);
    }
  }
  const out = new Map<string, OwnedRecord[]>();
  for (const [origin, records] of byOrigin) out.set(origin, [...records.values()].sort(compareRecords));
  return out;
}

function forwardTargets(upstreams: DnsModel["upstreams"]): string[] {
  if (upstreams === "resolv.conf") return [RESOLV_CONF];
  const targets: string[] = [];
  for (const u of upstreams) {
    const text = u.trim();
    const ip = parseIPv4(text);
    const target = text === "resolv.conf" ? RESOLV_CONF : ip === undefined ? undefined : formatIPv4(ip);
    if (target !== undefined && !targets.includes(target)) targets.push(target);
  }
  // Nothing usable: inherit the node's resolvers, the API's own default, rather than answer nothing.
  return targets.length === 0 ? [RESOLV_CONF] : targets.slice(0, MAX_UPSTREAMS);
}

function compareRecords(a: OwnedRecord, b: OwnedRecord): number {
  if (a.owner !== b.owner) {
    if (a.owner === "@") return -1;
    if (b.owner === "@") return 1;
    return compare(a.owner, b.owner);
  }
  return (parseIPv4(a.address) ?? 0) - (parseIPv4(b.address) ?? 0);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function wholeSeconds(value: number, min: number, max: number): number | undefined {
  if (!Number.isFinite(value) || value < min) return undefined;
  return Math.min(max, Math.floor(value));
}

function normalizeMountDir(dir: string): string {
  const trimmed = dir.trim().replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
}
