// The answer table: every response section the zones can produce, encoded once per model change
// (with dns2's codec; it is off the hot path), and the per-query lookup (wire-name string keys,
// no decoding). Semantics follow RFC 1034 §4.3.2 and RFC 4592: exact names first, then the
// closest encloser's wildcard, else NXDOMAIN; names that exist without the asked type get NODATA.
import { Packet } from "dns2";
import type { RenderedDns, RenderedView, RenderedZone, ZoneRecord } from "./rendered.js";
import { RCODE, TYPE, wireName, type Sections } from "./dns-message.js";

/** Precomputed answers of one view. */
export interface ViewTable {
  readonly name: string;
  /** Inclusive source range of the view's clients; undefined for the default view. */
  readonly first: number | undefined;
  readonly last: number | undefined;
  /**
   * Every existing name (incl. empty non-terminals) → its answers: one map lookup per query,
   * keyed by the wire name the parser already produced (no key built per query).
   */
  readonly names: ReadonlyMap<string, NameAnswers>;
  /** Wire origin → zone, or null where this view forwards the zone upstream. */
  readonly zones: ReadonlyMap<string, ZoneTable | null>;
}

/** What one existing name answers: the positive answer per type, NODATA for every other type. */
export interface NameAnswers {
  readonly byType: ReadonlyMap<number, Sections>;
  readonly nodata: Sections;
}

/** Negative answers and wildcards of one zone in one view. */
export interface ZoneTable {
  readonly nxdomain: Sections;
  /** Wire name of a wildcard's parent (the closest encloser it serves) → its answers. */
  readonly wildcards: ReadonlyMap<string, WildcardTable>;
}

/** Answers synthesized from `*.<parent>`; the owner is QNAME, so they fit any name below it. */
export interface WildcardTable {
  readonly byType: ReadonlyMap<number, Sections>;
  readonly nodata: Sections;
}

/** All views, in selection order: filtered views first, the default view last. */
export interface AnswerTable {
  readonly views: readonly ViewTable[];
}

/** Builds the answer table of a rendered DNS service. */
export function buildTable(rendered: RenderedDns): AnswerTable {
  return { views: rendered.views.map(buildView) };
}

/** The view serving a client at IPv4 address `ip` (undefined for a non-IPv4 client). */
export function selectView(table: AnswerTable, ip: number | undefined): ViewTable | undefined {
  const views = table.views;
  for (const v of views) {
    if (v.first === undefined || v.last === undefined) return v;
    if (ip !== undefined && ip >= v.first && ip <= v.last) return v;
  }
  return undefined;
}

/** The sections answering (name, type) in `view`, or undefined when the name must be forwarded. */
export function lookup(view: ViewTable, name: string, type: number): Sections | undefined {
  const existing = view.names.get(name);
  if (existing !== undefined) return existing.byType.get(type) ?? existing.nodata;
  // The longest origin that contains the name decides, as CoreDNS picks the most specific zone.
  for (let i = 0; i < name.length - 1; i += name.charCodeAt(i) + 1) {
    const zone = view.zones.get(i === 0 ? name : name.slice(i));
    if (zone === undefined) continue;
    if (zone === null) return undefined;
    // Closest encloser: the longest existing ancestor; the apex always exists.
    for (let j = name.charCodeAt(0) + 1; j <= i; j += name.charCodeAt(j) + 1) {
      const encloser = name.slice(j);
      if (j !== i && !view.names.has(encloser)) continue;
      const wildcard = zone.wildcards.get(encloser);
      if (wildcard === undefined) return zone.nxdomain;
      return wildcard.byType.get(type) ?? wildcard.nodata;
    }
    return zone.nxdomain;
  }
  return undefined;
}

function buildView(view: RenderedView): ViewTable {
  const names = new Map<string, NameAnswers>();
  const zones = new Map<string, ZoneTable | null>();
  const origins = [...view.zones.keys()];
  // A name belongs to the most specific zone of the view; a parent zone's records below a child
  // zone's apex are never served (the child's block answers those names).
  const deepestOrigin = (name: string): string | undefined => {
    let best: string | undefined;
    for (const o of origins) {
      if ((name === o || name.endsWith(`.${o}`)) && (best === undefined || o.length > best.length)) best = o;
    }
    return best;
  };
  for (const [origin, zone] of view.zones) {
    if (zone === "forward") {
      zones.set(wireName(origin), null);
      continue;
    }
    zones.set(
      wireName(origin),
      buildZone(zone, names, (n) => deepestOrigin(n) === origin),
    );
  }
  return { name: view.name, first: view.cidr?.first, last: view.cidr?.last, names, zones };
}

function buildZone(zone: RenderedZone, names: Map<string, NameAnswers>, owns: (name: string) => boolean): ZoneTable {
  const soa = zone.records.find((r) => r.type === "SOA" && r.name === zone.origin);
  const negative = (rcode: number): Sections => {
    if (soa?.type !== "SOA") return { rcode, aa: true, ancount: 0, nscount: 0, arcount: 0, body: Buffer.alloc(0) };
    // RFC 2308 §3: the negative-caching TTL is the lesser of the SOA's TTL and its MINIMUM.
    const body = encode({ ...soa, ttl: Math.min(soa.ttl, soa.minimum) }, false);
    return { rcode, aa: true, ancount: 0, nscount: 1, arcount: 0, body };
  };
  const nodata = negative(RCODE.NOERROR);
  const nxdomain = negative(RCODE.NXDOMAIN);

  const byName = new Map<string, ZoneRecord[]>();
  const existing = new Set<string>([zone.origin]);
  for (const r of zone.records) {
    if (!owns(r.name)) continue;
    byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
    // Every ancestor up to the apex exists too (empty non-terminals answer NODATA, not NXDOMAIN).
    for (let n = r.name; n !== zone.origin && n.includes("."); n = n.slice(n.indexOf(".") + 1)) existing.add(n);
  }
  const owned = [...existing].filter(owns);

  const glueFor = (records: readonly ZoneRecord[]): ZoneRecord[] =>
    records.flatMap((r) => (r.type === "NS" ? (byName.get(r.host) ?? []).filter((g) => g.type === "A") : []));
  const apexNs = (byName.get(zone.origin) ?? []).filter((r) => r.type === "NS");
  // As CoreDNS's file plugin answers: an NS answer carries its glue as additional records; any
  // other answer carries the zone's NS set as authority, without glue.
  const positive = (rrset: readonly ZoneRecord[]): Sections => {
    const authority = rrset.some((r) => r.type === "NS") ? [] : apexNs;
    const glue = authority.length === 0 ? glueFor(rrset) : [];
    const body = Buffer.concat([
      ...rrset.map((r) => encode(r, true)),
      ...authority.map((r) => encode(r, false)),
      ...glue.map((g) => encode(g, false)),
    ]);
    return {
      rcode: RCODE.NOERROR,
      aa: true,
      ancount: rrset.length,
      nscount: authority.length,
      arcount: glue.length,
      body,
    };
  };
  // No ANY entry: CoreDNS's file plugin has no ANY RRset to return and answers NODATA, and so do we.
  const answersOf = (records: readonly ZoneRecord[]): Map<number, Sections> => {
    const out = new Map<number, Sections>();
    for (const type of [TYPE.A, TYPE.NS, TYPE.SOA]) {
      const rrset = records.filter((r) => TYPE[r.type] === type);
      if (rrset.length > 0) out.set(type, positive(rrset));
    }
    return out;
  };

  const wildcards = new Map<string, WildcardTable>();
  const none: ReadonlyMap<number, Sections> = new Map();
  for (const n of owned) names.set(wireName(n), { byType: none, nodata });
  for (const [name, records] of byName) {
    const byType = answersOf(records);
    names.set(wireName(name), { byType, nodata });
    if (name.startsWith("*.")) wildcards.set(wireName(name.slice(2)), { byType, nodata });
  }
  return { nxdomain, wildcards };
}

/** One record's wire bytes; with `ownerIsQuestion` the owner is a pointer to QNAME at offset 12. */
function encode(r: ZoneRecord, ownerIsQuestion: boolean): Buffer {
  const base = { name: ownerIsQuestion ? "" : r.name, class: 1, ttl: r.ttl };
  const resource =
    r.type === "A"
      ? new Packet.Resource({ ...base, type: TYPE.A, address: r.address })
      : r.type === "NS"
        ? new Packet.Resource({ ...base, type: TYPE.NS, ns: r.host })
        : new Packet.Resource({
            ...base,
            type: TYPE.SOA,
            primary: r.mname,
            admin: r.rname,
            serial: r.serial,
            refresh: r.refresh,
            retry: r.retry,
            expiration: r.expire,
            minimum: r.minimum,
          });
  const bytes = Packet.Resource.encode(resource);
  // dns2 wrote the empty owner as the root label (one zero byte); swap it for the pointer.
  return ownerIsQuestion ? Buffer.concat([QNAME_POINTER, bytes.subarray(1)]) : bytes;
}

const QNAME_POINTER = Buffer.from([0xc0, 0x0c]);
