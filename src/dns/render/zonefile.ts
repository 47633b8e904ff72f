// One RFC 1035 master file for CoreDNS's file plugin: SOA, one in-zone NS with its glue, and the
// model's A records, nothing else. Pure.
import { createHash } from "node:crypto";
import { DIGEST_PREFIX, serialFor } from "./serial.js";

/** An A record with its owner already written relative to the zone origin ("@", "api", "*.apps"). */
export interface OwnedRecord {
  readonly owner: string;
  readonly address: string;
}

/** Everything that determines one zone file's content. */
export interface ZoneFileInput {
  /** Normalized origin (lower case, no trailing dot). */
  readonly origin: string;
  /** Sorted by owner then address, no duplicates. */
  readonly records: readonly OwnedRecord[];
  /** Address published for the zone's own NS name. */
  readonly nsAddress: string;
  /** Default TTL of every record, also the negative-caching TTL (SOA minimum). */
  readonly ttl: number;
}

/** A rendered zone file and the SOA serial it carries. */
export interface ZoneFile {
  readonly text: string;
  readonly serial: number;
  readonly digest: string;
}

// Secondary-transfer timers are meaningless here (no secondaries) but must be well-formed.
const REFRESH = 7200;
const RETRY = 3600;
const EXPIRE = 1209600;

/** Renders a zone file; the serial follows its content relative to `previous` (see serial.ts). */
export function renderZoneFile(input: ZoneFileInput, previous: string | undefined): ZoneFile {
  const body = (serial: string): string => zoneBody(input, serial);
  // The digest covers everything but the serial, so it identifies content, not its version.
  const digest = createHash("sha256").update(body("SERIAL")).digest("hex");
  const serial = serialFor(digest, previous);
  return { text: `${DIGEST_PREFIX}${digest}\n${body(String(serial))}`, serial, digest };
}

function zoneBody(input: ZoneFileInput, serial: string): string {
  const fqdn = `${input.origin}.`;
  const ns = nsLabel(input.records);
  const lines = [
    `$ORIGIN ${fqdn}`,
    `$TTL ${input.ttl}`,
    // Single-line SOA so the serial is easy to read back from a previous rendering.
    `@ IN SOA ${ns}.${fqdn} hostmaster.${fqdn} ${serial} ${REFRESH} ${RETRY} ${EXPIRE} ${input.ttl}`,
    `@ IN NS ${ns}.${fqdn}`,
    // In-zone NS needs glue: named-checkzone (and RFC 1035 consistency) require its address.
    `${ns} IN A ${input.nsAddress}`,
    ...input.records.map((r) => `${r.owner} IN A ${r.address}`),
  ];
  return `${lines.join("\n")}\n`;
}

/** "ns", or the first "nsN" no record owns, so the glue never adds an address to a model name. */
function nsLabel(records: readonly OwnedRecord[]): string {
  const owners = new Set(records.map((r) => r.owner));
  if (!owners.has("ns")) return "ns";
  let i = 1;
  while (owners.has(`ns${i}`)) i++;
  return `ns${i}`;
}
