// The Infra's extra DHCP options (spec.infraComponents.dhcp.options[{code,value}], copied to the
// DHCPServer's spec.options as in the original) → checked Kea option-data. Pure; a bad entry is
// an error on its field path and is left out, the others are served.
import { parseIPv4 } from "./ipv4.js";
import type { Problems } from "./problems.js";
import type { DhcpOption, ObjectRef } from "./types.js";

interface OptionRow {
  readonly code: number;
  /** Kea's option name (Kea 2.2 standard option definitions). */
  readonly name: string;
  /** The Kea data, or a reason the value is wrong. */
  readonly parse: (value: string) => { data: string; csv: boolean } | string;
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$/i;

const ROWS: readonly OptionRow[] = [
  {
    code: 26,
    name: "interface-mtu",
    parse: (v) =>
      /^[0-9]+$/.test(v.trim()) && Number(v) >= 68 && Number(v) <= 65535
        ? { data: String(Number(v)), csv: true }
        : "an MTU from 68 to 65535",
  },
  { code: 42, name: "ntp-servers", parse: (v) => addressList(v) ?? "comma-separated IPv4 addresses" },
  {
    code: 119,
    name: "domain-search",
    parse: (v) => {
      const names = list(v);
      return names.length > 0 && names.every((n) => HOSTNAME.test(n))
        ? { data: names.join(", "), csv: true }
        : "comma-separated domain names";
    },
  },
  { code: 121, name: "classless-static-route", parse: classlessRoutes },
];

/** Options oooi sets itself (subnet mask, routers, resolvers, hostname, lifetimes, DHCP protocol). */
const OWNED: ReadonlyMap<number, string> = new Map([
  [1, "spec.networkConfig.cidr"],
  [3, "spec.networkConfig.gateway"],
  [6, "spec.networkConfig.dnsServers"],
  [12, "the VMI name"],
  [51, "leaseTime"],
  [53, "DHCP itself"],
  [54, "serverIP"],
  [55, "the client"],
  [58, "leaseTime"],
  [59, "leaseTime"],
  [61, "the client"],
]);

/** Checked options, sorted by code; one code once (the last entry wins, with a warning). */
export function resolveDhcpOptions(
  ref: ObjectRef,
  field: string,
  entries: readonly { readonly code: number; readonly value: string }[],
  problems: Problems,
): DhcpOption[] {
  const p = problems.for(ref);
  const out = new Map<number, DhcpOption>();
  for (const [i, e] of entries.entries()) {
    const at = `${field}[${String(i)}]`;
    const owner = OWNED.get(e.code);
    if (owner !== undefined) {
      p.error(
        `${at}.code`,
        "InvalidSpec",
        `option ${String(e.code)} is set by oooi from ${owner}; the entry is ignored`,
      );
      continue;
    }
    const row = ROWS.find((r) => r.code === e.code);
    const parsed = row === undefined ? { data: e.value, csv: true } : row.parse(e.value);
    if (typeof parsed === "string") {
      p.error(
        `${at}.value`,
        "InvalidSpec",
        `${JSON.stringify(e.value)} is not ${parsed} (option ${String(e.code)}); the option is not sent`,
      );
      continue;
    }
    if (out.has(e.code))
      p.warning(`${at}.code`, "DuplicateOption", `option ${String(e.code)} is listed twice; the last one is sent`);
    // Codes without a row are passed by code; Kea checks them against its standard definitions.
    out.set(e.code, {
      code: e.code,
      value: e.value,
      ...(row === undefined ? {} : { name: row.name }),
      data: parsed.data,
      csvFormat: parsed.csv,
    });
  }
  return [...out.values()].sort((a, b) => a.code - b.code);
}

function list(v: string): string[] {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function addressList(v: string): { data: string; csv: boolean } | undefined {
  const items = list(v);
  return items.length > 0 && items.every((a) => parseIPv4(a) !== undefined)
    ? { data: items.join(", "), csv: true }
    : undefined;
}

/**
 * RFC 3442 option 121 from "dest/prefix - router, …". Kea 2.2 has no text format for it (its
 * definition is binary), so the wire bytes are sent as hex with csv-format false: per route the
 * prefix length, the significant octets of the destination, then the router.
 */
function classlessRoutes(v: string): { data: string; csv: boolean } | string {
  const wrong = '"destination/prefix - router" pairs, comma-separated';
  const bytes: number[] = [];
  const routes = list(v);
  if (routes.length === 0) return wrong;
  for (const route of routes) {
    const m = /^([0-9.]+)\/([0-9]{1,2})\s*-\s*([0-9.]+)$/.exec(route);
    const dest = parseIPv4(m?.[1] ?? "");
    const prefix = Number(m?.[2]);
    const router = parseIPv4(m?.[3] ?? "");
    // No match leaves dest undefined; the pattern's one or two digits keep the prefix from being negative.
    if (dest === undefined || router === undefined || prefix > 32) return wrong;
    bytes.push(prefix);
    for (let i = 0; i < Math.ceil(prefix / 8); i++) bytes.push((dest >>> (24 - 8 * i)) & 255);
    for (let i = 0; i < 4; i++) bytes.push((router >>> (24 - 8 * i)) & 255);
  }
  return {
    data: bytes
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("")
      .toUpperCase(),
    csv: false,
  };
}
