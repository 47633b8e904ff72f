// DnsModel → the CoreDNS ConfigMap: a Corefile with split-horizon server blocks plus one zone file
// per (view, zone) for the file plugin. Pure and deterministic; never throws on model content —
// unusable names, addresses or CIDRs are left out rather than written into CoreDNS syntax.
import type { DnsModel, Zone } from "../../model/types.js";
import { cidrContains, formatCidr, formatIPv4, parseCidr, parseIPv4 } from "../../model/ipv4.js";
import { RESOLV_CONF, renderBlock, type CorefileSettings, type ServerBlock, type ViewFilter } from "./corefile.js";
import { zoneFileKey } from "./names.js";
import { groupZones, NO_ZONES, type ViewZones } from "./zones-by-origin.js";
import { patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import { patchSortedList } from "../../util/merge-sorted.js";
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
  const settings: CorefileSettings = {
    forwardTo: forwardTargets(dns.upstreams),
    cacheSeconds: wholeSeconds(dns.cacheSeconds, 1, MAX_TTL),
    reloadSeconds: wholeSeconds(dns.reloadSeconds, 1, MAX_TTL) ?? DEFAULT_RELOAD,
  };
  const views = planViews(dns);
  // Everything a block or a zone file is written with besides its origin's zones.
  const shape = JSON.stringify([mountDir, ttl, settings, views.map((v) => [v.name, v.filter ?? null, v.nsAddress])]);
  const { previous } = options;
  const kept = previous === undefined ? undefined : renderings.get(previous);
  // Continuing from our own rendering of the same shape, only the origins whose zones changed are
  // written again; from anything else (none, a ConfigMap read back), every origin is.
  const base = kept?.shape === shape ? kept : undefined;
  const changed = new Set<string>();
  const grouped = views.map((v, i) => groupZones(base?.views[i] ?? NO_ZONES, v.zones, changed));

  const blockChanges = new Map<string, string | Removed>();
  const zoneChanges = new Map<string, RenderedZone | Removed>();
  const unfiltered = views.findIndex((v) => v.filter === undefined);
  for (const origin of changed) {
    const records = grouped.map((g) => g.records.get(origin));
    const texts: string[] = [];
    const fallback = unfiltered < 0 ? undefined : records[unfiltered];
    const fileBlock = (view: ViewPlan, own: readonly OwnedRecord[]): void => {
      const key = zoneFileKey(view.name, origin);
      const input: ZoneFileInput = { origin, records: own, nsAddress: view.nsAddress, ttl };
      const was = base?.zones.get(key);
      const text = was?.text ?? previous?.[key];
      // A zone written last time from the same input is the same text (same digest, so the same serial).
      const same = was !== undefined && sameZoneInput(was.input, input);
      zoneChanges.set(key, same ? was : { input, text: renderZoneFile(input, text).text });
      const path = mountDir === "/" ? `/${key}` : `${mountDir}/${key}`;
      texts.push(renderBlock({ zone: origin, view: view.filter, answer: { kind: "file", path } }, settings));
    };
    // Filtered blocks first: CoreDNS takes the first block of a zone whose view matches.
    views.forEach((view, i) => {
      const own = records[i];
      if (own === undefined) zoneChanges.set(zoneFileKey(view.name, origin), REMOVED);
      if (view.filter === undefined) return;
      if (own !== undefined) fileBlock(view, own);
      // Keep the other view's static answers away from this view's clients.
      else if (fallback !== undefined)
        texts.push(renderBlock({ zone: origin, view: view.filter, answer: { kind: "forward" } }, settings));
    });
    if (records.every((r) => r === undefined)) {
      blockChanges.set(origin, REMOVED);
      continue;
    }
    const last = views[unfiltered];
    if (last !== undefined && fallback !== undefined) fileBlock(last, fallback);
    else texts.push(renderBlock({ zone: origin, view: undefined, answer: { kind: "forward" } }, settings));
    blockChanges.set(origin, texts.join("\n"));
  }
  const blocks = patchMap(base?.blocks ?? NO_TEXTS, blockChanges);
  const zones = patchMap(base?.zones ?? NO_ZONE_FILES, zoneChanges);
  const origins = patchKeys(base?.origins ?? [], base?.blocks, blockChanges);
  const keys = patchKeys(base?.keys ?? [], base?.zones, zoneChanges);

  const corefile = [renderBlock(ROOT_BLOCK, settings, true), ...origins.map((o) => blocks.get(o) ?? "")].join("\n");
  const files: Record<string, string> = { [COREFILE_KEY]: corefile };
  for (const key of keys) files[key] = zones.get(key)?.text ?? "";
  Object.freeze(files);
  renderings.set(files, { shape, views: grouped, blocks, zones, origins, keys });
  return { files };
}

/** A zone file as written, and what it was written from. */
interface RenderedZone {
  readonly input: ZoneFileInput;
  readonly text: string;
}

/** What one rendering was made of, found again when its files come back as `previous`. */
interface Rendering {
  readonly shape: string;
  /** Each planned view's zones (planViews' order). */
  readonly views: readonly ViewZones[];
  /** Origin → the text of its server blocks. */
  readonly blocks: ReadonlyMap<string, string>;
  /** ConfigMap key → its zone file. */
  readonly zones: ReadonlyMap<string, RenderedZone>;
  /** The origins and the zone file keys, sorted. */
  readonly origins: readonly string[];
  readonly keys: readonly string[];
}

/**
 * Each rendering by its (frozen) files object. A previous rendering from anywhere else (a ConfigMap
 * read back, a file) has no entry: every zone is then written again, its serial from that text.
 */
const renderings = new WeakMap<object, Rendering>();
const NO_TEXTS: ReadonlyMap<string, string> = new Map();
const NO_ZONE_FILES: ReadonlyMap<string, RenderedZone> = new Map();
const ROOT_BLOCK: ServerBlock = { zone: ".", view: undefined, answer: { kind: "forward" } };

/** `sorted` (the keys of `had`) without the keys `changes` removes and with those it adds, still sorted. */
function patchKeys(
  sorted: readonly string[],
  had: ReadonlyMap<string, unknown> | undefined,
  changes: ReadonlyMap<string, unknown>,
): readonly string[] {
  const removed = new Set<string>();
  const added: string[] = [];
  for (const [k, v] of changes) {
    const was = had?.has(k) === true;
    if (v === REMOVED && was) removed.add(k);
    else if (v !== REMOVED && !was) added.push(k);
  }
  return patchSortedList(sorted, removed, added.sort(compare), compare);
}

function sameZoneInput(a: ZoneFileInput, b: ZoneFileInput): boolean {
  if (a.origin !== b.origin || a.nsAddress !== b.nsAddress || a.ttl !== b.ttl) return false;
  if (a.records.length !== b.records.length) return false;
  return a.records.every((r, i) => {
    const s = b.records[i];
    return r.owner === s?.owner && r.address === s.address;
  });
}

/** A view reduced to how it is written: its name, its filter, its NS glue, and the model's zones. */
interface ViewPlan {
  readonly name: string;
  readonly filter: ViewFilter | undefined;
  readonly nsAddress: string;
  readonly zones: readonly Zone[];
}

/** The views written, filtered ones first, then the one unfiltered view if any. */
function planViews(dns: DnsModel): ViewPlan[] {
  const filtered: ViewPlan[] = [];
  let unfiltered: ViewPlan | undefined;
  const names = new Set<string>();
  const serverIP = parseIPv4(dns.serverIP.trim());
  for (const view of dns.views) {
    if (!VIEW_NAME.test(view.name) || names.has(view.name)) continue;
    names.add(view.name);
    if (view.sourceCidr !== undefined) {
      // A view whose CIDR cannot be expressed is dropped: serving it unfiltered would leak it.
      const cidr = parseCidr(view.sourceCidr.trim());
      if (cidr === undefined) continue;
      filtered.push({
        name: view.name,
        filter: { name: view.name, cidr: formatCidr(cidr) },
        // VLAN clients reach CoreDNS at its serverIP, so that is the honest NS address there.
        nsAddress: serverIP === undefined ? DEFAULT_VIEW_NS_ADDRESS : formatIPv4(serverIP),
        zones: view.zones,
      });
    } else if (unfiltered === undefined) {
      // Only one unfiltered block per zone:port can exist; a second unfiltered view is ignored.
      const vlans = dns.views.flatMap((v) => (v.sourceCidr === undefined ? [] : [v.sourceCidr.trim()]));
      unfiltered = { name: view.name, filter: undefined, nsAddress: defaultViewNsAddress(vlans), zones: view.zones };
    }
  }
  return unfiltered === undefined ? filtered : [...filtered, unfiltered];
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
