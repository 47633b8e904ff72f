// Reads the CoreDNS renderer's own output (Corefile + zone files) back into views and zones, so the
// embedded responder serves exactly what CoreDNS would: the same blocks, records and SOA serials.
// It understands the renderer's line format only, and skips whatever it does not recognise. Pure.
import { parseCidr, type Cidr } from "../../model/ipv4.js";

/** One resource record of a rendered zone file; names are absolute, lower case, without the final dot. */
export type ZoneRecord =
  | { readonly type: "A"; readonly name: string; readonly ttl: number; readonly address: string }
  | { readonly type: "NS"; readonly name: string; readonly ttl: number; readonly host: string }
  | {
      readonly type: "SOA";
      readonly name: string;
      readonly ttl: number;
      readonly mname: string;
      readonly rname: string;
      readonly serial: number;
      readonly refresh: number;
      readonly retry: number;
      readonly expire: number;
      readonly minimum: number;
    };

/** A zone answered from a file plugin block. */
export interface RenderedZone {
  readonly origin: string;
  readonly records: readonly ZoneRecord[];
}

/** What one client population sees: per zone origin, a file or a forward. */
export interface RenderedView {
  readonly name: string;
  /** Clients inside this range get the view; undefined for the unfiltered (default) view. */
  readonly cidr: Cidr | undefined;
  /** Origin → zone, or "forward" where this view's block for the origin forwards upstream. */
  readonly zones: ReadonlyMap<string, RenderedZone | "forward">;
}

/** The rendered DNS service: filtered views in Corefile order, then the unfiltered one. */
export interface RenderedDns {
  readonly views: readonly RenderedView[];
  /** Forward targets of the root block: IPs or "/etc/resolv.conf". */
  readonly forwardTo: readonly string[];
}

interface Block {
  zone: string;
  view: string | undefined;
  cidr: string | undefined;
  file: string | undefined;
  forward: string[] | undefined;
}

/** Reads the ConfigMap data the renderer produced with mount directory "/" (file paths "/<key>"). */
export function readRendered(files: Readonly<Record<string, string>>, corefileKey: string): RenderedDns {
  const blocks = parseBlocks(files[corefileKey] ?? "");
  const forwardTo = blocks.find((b) => b.zone === "." && b.view === undefined)?.forward ?? [];

  const viewNames: string[] = [];
  const cidrs = new Map<string, Cidr>();
  for (const b of blocks) {
    if (b.view === undefined || cidrs.has(b.view)) continue;
    const cidr = b.cidr === undefined ? undefined : parseCidr(b.cidr);
    if (cidr === undefined) continue;
    viewNames.push(b.view);
    cidrs.set(b.view, cidr);
  }

  const zoneCache = new Map<string, RenderedZone>();
  const answerOf = (b: Block): RenderedZone | "forward" | undefined => {
    if (b.file === undefined) return b.forward === undefined ? undefined : "forward";
    const key = b.file.replace(/^\/+/, "");
    let zone = zoneCache.get(key);
    if (zone === undefined) {
      const text = files[key];
      if (text === undefined) return undefined;
      zone = { origin: b.zone, records: parseZoneFile(text, b.zone) };
      zoneCache.set(key, zone);
    }
    return zone;
  };
  // CoreDNS takes, per zone, the first block whose view matches the client (an unfiltered block
  // matches everyone); the root block is the fallback for every name and is handled by forwarding.
  const viewOf = (name: string | undefined, cidr: Cidr | undefined): RenderedView => {
    const zones = new Map<string, RenderedZone | "forward">();
    for (const b of blocks) {
      if (b.zone === "." || zones.has(b.zone)) continue;
      if (b.view !== undefined && b.view !== name) continue;
      const answer = answerOf(b);
      if (answer !== undefined) zones.set(b.zone, answer);
    }
    return { name: name ?? "default", cidr, zones };
  };
  const views = viewNames.map((n) => viewOf(n, cidrs.get(n)));
  views.push(viewOf(undefined, undefined));
  return { views, forwardTo };
}

function parseBlocks(corefile: string): Block[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  for (const line of corefile.split("\n")) {
    const open = /^(\S+):\d+ \{$/.exec(line);
    if (open !== null) {
      current = {
        zone: (open[1] ?? "").toLowerCase(),
        view: undefined,
        cidr: undefined,
        file: undefined,
        forward: undefined,
      };
      blocks.push(current);
      continue;
    }
    if (current === undefined) continue;
    const t = line.trim();
    let m: RegExpExecArray | null;
    if ((m = /^view (\S+) \{$/.exec(t)) !== null) current.view = m[1];
    else if ((m = /^expr incidr\(client_ip\(\), '([^']+)'\)$/.exec(t)) !== null) current.cidr = m[1];
    else if ((m = /^file (\S+) \S+/.exec(t)) !== null) current.file = m[1];
    else if ((m = /^forward \. (.+)$/.exec(t)) !== null) current.forward = (m[1] ?? "").split(/\s+/);
    else if (line === "}") current = undefined;
  }
  return blocks;
}

/** Parses one rendered master file ($ORIGIN, $TTL, SOA, NS, A lines). */
export function parseZoneFile(text: string, fallbackOrigin: string): ZoneRecord[] {
  let origin = fallbackOrigin;
  let ttl = 0;
  const records: ZoneRecord[] = [];
  const absolute = (n: string): string => {
    const lowered = n.toLowerCase();
    if (lowered === "@") return origin;
    if (lowered.endsWith(".")) return lowered.slice(0, -1);
    return origin === "" ? lowered : `${lowered}.${origin}`;
  };
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith(";")) continue;
    const f = line.trim().split(/\s+/);
    if (f[0] === "$ORIGIN" && f[1] !== undefined) {
      origin = absolute(f[1].endsWith(".") ? f[1] : `${f[1]}.`);
      continue;
    }
    if (f[0] === "$TTL") {
      ttl = toUint(f[1]) ?? ttl;
      continue;
    }
    const [owner, cls, type, ...rdata] = f;
    if (owner === undefined || cls !== "IN") continue;
    const name = absolute(owner);
    if (type === "A" && rdata[0] !== undefined) {
      records.push({ type: "A", name, ttl, address: rdata[0] });
    } else if (type === "NS" && rdata[0] !== undefined) {
      records.push({ type: "NS", name, ttl, host: absolute(rdata[0]) });
    } else if (type === "SOA" && rdata.length >= 7) {
      const [mname = "", rname = "", ...timers] = rdata;
      const [serial, refresh, retry, expire, minimum] = timers.map(toUint);
      if (
        serial === undefined ||
        refresh === undefined ||
        retry === undefined ||
        expire === undefined ||
        minimum === undefined
      )
        continue;
      records.push({
        type: "SOA",
        name,
        ttl,
        mname: absolute(mname),
        rname: absolute(rname),
        serial,
        refresh,
        retry,
        expire,
        minimum,
      });
    }
  }
  return records;
}

function toUint(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,10}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 0xffffffff ? n : undefined;
}
