// One view's zones grouped by zone file: by normalized origin, each origin's records as its zone file
// writes them. Kept from one rendering to the next: the model keeps an unchanged attachment's Zone
// objects (src/model/dns.ts), so the next rendering regroups only the origins whose zones came or
// went, not the 25,000 origins of a 5,000-attachment Infra. Pure.
import type { Zone } from "../../model/types.js";
import { formatIPv4, parseIPv4 } from "../../model/ipv4.js";
import { patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import { normalizeDomain, relativeOwner } from "./names.js";
import type { OwnedRecord } from "./zonefile.js";

/** A view's zones by normalized origin (a zone whose origin is unusable is left out). */
export interface ViewZones {
  /** The model's zones these were grouped from. */
  readonly source: readonly Zone[];
  /** Origin → its zones. */
  readonly zones: ReadonlyMap<string, readonly Zone[]>;
  /** Origin → its usable records: owner relative to the origin, canonical address, sorted, no repeats. */
  readonly records: ReadonlyMap<string, readonly OwnedRecord[]>;
}

/** A view grouped from no zones: what the first rendering continues from. */
export const NO_ZONES: ViewZones = { source: [], zones: new Map(), records: new Map() };

/**
 * `zones` grouped, continuing from `before`: the origins of the zones that came or went (compared by
 * identity) are grouped again, and added to `changed`; every other origin keeps its entries. From
 * NO_ZONES, every origin is grouped and changed.
 */
export function groupZones(before: ViewZones, zones: readonly Zone[], changed: Set<string>): ViewZones {
  if (before.source === zones) return before;
  const was = new Set(before.source);
  const now = new Set(zones);
  const touched = new Set<string>();
  const added = new Map<string, Zone[]>();
  for (const z of before.source) {
    const origin = now.has(z) ? undefined : originOf(z);
    if (origin !== undefined) touched.add(origin);
  }
  for (const z of zones) {
    const origin = was.has(z) ? undefined : originOf(z);
    if (origin === undefined) continue;
    touched.add(origin);
    const list = added.get(origin);
    if (list === undefined) added.set(origin, [z]);
    else list.push(z);
  }
  const zoneChanges = new Map<string, readonly Zone[] | Removed>();
  const recordChanges = new Map<string, readonly OwnedRecord[] | Removed>();
  for (const origin of touched) {
    changed.add(origin);
    const list = [...(before.zones.get(origin) ?? []).filter((z) => now.has(z)), ...(added.get(origin) ?? [])];
    zoneChanges.set(origin, list.length === 0 ? REMOVED : list);
    recordChanges.set(origin, list.length === 0 ? REMOVED : recordsOf(origin, list));
  }
  return {
    source: zones,
    zones: patchMap(before.zones, zoneChanges),
    records: patchMap(before.records, recordChanges),
  };
}

/** Each zone's normalized origin (null: unusable), found once per Zone object. */
const origins = new WeakMap<Zone, string | null>();

function originOf(z: Zone): string | undefined {
  let origin = origins.get(z);
  if (origin === undefined) {
    origin = normalizeDomain(z.origin) ?? null;
    origins.set(z, origin);
  }
  return origin ?? undefined;
}

/** The records of an origin's zones as its zone file writes them; the zones' order does not matter. */
function recordsOf(origin: string, zones: readonly Zone[]): OwnedRecord[] {
  const records = new Map<string, OwnedRecord>();
  for (const zone of zones) {
    for (const record of zone.records) {
      const owner = relativeOwner(record.name, origin);
      const address = parseIPv4(record.address.trim());
      if (owner === undefined || address === undefined) continue;
      const r = { owner, address: formatIPv4(address) };
      records.set(`${r.owner} ${r.address}`, r);
    }
  }
  return [...records.values()].sort(compareRecords);
}

/** The apex first, then by owner, then by address. */
function compareRecords(a: OwnedRecord, b: OwnedRecord): number {
  if (a.owner !== b.owner) {
    if (a.owner === "@") return -1;
    if (b.owner === "@") return 1;
    return a.owner < b.owner ? -1 : 1;
  }
  return (parseIPv4(a.address) ?? 0) - (parseIPv4(b.address) ?? 0);
}
