// DhcpModel → the complete Kea 2.2 `Dhcp4` configuration (kea-dhcp4.json, also the argument of
// config-test/config-set). Pure and deterministic: same model, same bytes.
import type { DhcpModel, Reservation } from "../../model/types.js";
import { parseIPv4 } from "../../model/ipv4.js";
import type { KeaDhcp4Config, KeaOptionData, KeaPool, KeaReservation, KeaSubnet4 } from "./kea-types.js";

/** Where the oooi dhcp-agent sidecar and kea-dhcp4 share the control socket (an emptyDir). */
export const DEFAULT_CONTROL_SOCKET = "/run/kea/kea4-ctrl-socket";

/** The memfile lease file, on the lease PVC so leases survive pod restarts. */
export const DEFAULT_LEASE_FILE = "/var/lib/kea/kea-leases4.csv";

/**
 * Kea's hook directory in the Kea image. The image is Debian's kea-dhcp4-server (Kea 2.2, the
 * version this renderer targets), whose kea-common package installs hooks under the multiarch
 * library directory; this is the amd64 path. Images for other architectures (or ISC's Alpine
 * images, /usr/lib/kea/hooks) must pass `hooksDirectory`. Kea 2.2 loads hooks with dlopen, so
 * the path must be absolute.
 */
export const DEFAULT_HOOKS_DIRECTORY = "/usr/lib/x86_64-linux-gnu/kea/hooks";

/** The hook providing lease4-get-all and friends (Kea 2.2 has no open-source host_cmds). */
export const LEASE_CMDS_LIBRARY = "libdhcp_lease_cmds.so";

/** The only subnet's id: stable so leases in the lease file stay attached across config-set. */
export const SUBNET_ID = 1;

/** How often Kea compacts the lease file (lease file cleanup), in seconds. */
export const LFC_INTERVAL_SECONDS = 3600;

/** Renewal (T1) and rebinding (T2) times as fractions of the lease lifetime (RFC 2131 §4.4.5). */
export const T1_PERCENT = 0.5;
export const T2_PERCENT = 0.875;

/** Paths that differ between the pod and tests; everything else comes from the model. */
export interface KeaRenderOptions {
  /** Unix control socket Kea listens on; default DEFAULT_CONTROL_SOCKET. */
  readonly controlSocket?: string;
  /** memfile lease file; default DEFAULT_LEASE_FILE. */
  readonly leaseFile?: string;
  /** Directory holding libdhcp_lease_cmds.so; default DEFAULT_HOOKS_DIRECTORY. */
  readonly hooksDirectory?: string;
}

const UINT32_MAX = 0xffffffff;
const FALLBACK_LIFETIME_SECONDS = 3600;

/** Renders the full Kea DHCPv4 configuration for one DHCPServer. Never throws. */
export function renderKea(dhcp: DhcpModel, options: KeaRenderOptions = {}): { Dhcp4: KeaDhcp4Config } {
  const hooksDirectory = (options.hooksDirectory ?? DEFAULT_HOOKS_DIRECTORY).replace(/\/+$/, "");
  const dhcp4: KeaDhcp4Config = {
    // The only server on an isolated VLAN: NAK foreign addresses at once instead of ignoring
    // them, so a VM whose reservation moved re-discovers immediately.
    authoritative: true,
    "calculate-tee-times": true,
    "control-socket": {
      "socket-name": options.controlSocket ?? DEFAULT_CONTROL_SOCKET,
      "socket-type": "unix",
    },
    "hooks-libraries": [{ library: `${hooksDirectory}/${LEASE_CMDS_LIBRARY}` }],
    "host-reservation-identifiers": ["hw-address"],
    "interfaces-config": {
      // Raw sockets: clients on the VLAN have no address yet and are not relayed, so replies
      // must be built at layer 2 (the pod needs CAP_NET_RAW).
      "dhcp-socket-type": "raw",
      interfaces: [dhcp.interface],
    },
    "lease-database": {
      "lfc-interval": LFC_INTERVAL_SECONDS,
      name: options.leaseFile ?? DEFAULT_LEASE_FILE,
      persist: true,
      type: "memfile",
    },
    loggers: [{ debuglevel: 0, name: "kea-dhcp4", output_options: [{ output: "stdout" }], severity: "INFO" }],
    // Leases follow the MAC like reservations do; a VM that changes its client-id (reinstall,
    // different DHCP client) keeps its lease.
    "match-client-id": false,
    // After a CIDR change, leases persisted for the old subnet are dropped instead of failing
    // the load.
    "sanity-checks": { "lease-checks": "fix-del" },
    subnet4: [renderSubnet(dhcp)],
    "t1-percent": T1_PERCENT,
    "t2-percent": T2_PERCENT,
    "valid-lifetime": lifetime(dhcp.validLifetimeSeconds),
  };
  return { Dhcp4: canonicalize(dhcp4) as KeaDhcp4Config };
}

function renderSubnet(dhcp: DhcpModel): KeaSubnet4 {
  const reservations = [...dhcp.reservations].sort(byMacThenIp);
  const pools: KeaPool[] =
    dhcp.pool === undefined
      ? []
      : [
          {
            pool: `${dhcp.pool.start} - ${dhcp.pool.end}`,
            // KNOWN is assigned after the in-subnet reservation lookup and before pool selection, so an
            // unknown MAC finds no usable pool and gets no lease.
            ...(dhcp.unknownClients === "deny" ? { "client-class": "KNOWN" as const } : {}),
          },
        ];
  return {
    id: SUBNET_ID,
    "option-data": optionData(dhcp),
    pools,
    reservations: reservations.map(renderReservation),
    "reservations-global": false,
    "reservations-in-subnet": true,
    // Only a promise Kea may rely on when it holds: a VMI keeping an address it got from the
    // pool has a reservation inside it, and then Kea must check reservations while allocating.
    "reservations-out-of-pool": !reservations.some((r) => inPool(dhcp.pool, r.ipAddress)),
    subnet: dhcp.subnet,
    "user-context": { "dhcp-server": dhcp.name },
  };
}

function optionData(dhcp: DhcpModel): KeaOptionData[] {
  const out: KeaOptionData[] = [];
  if (dhcp.dnsServers.length > 0) out.push({ data: dhcp.dnsServers.join(", "), name: "domain-name-servers" });
  if (dhcp.routers !== "") out.push({ data: dhcp.routers, name: "routers" });
  out.push({ data: dhcp.netmask, name: "subnet-mask" });
  out.sort((a, b) => compare(a.name ?? "", b.name ?? ""));
  // The user's options after oooi's own, by code (the model refuses codes oooi sets itself).
  for (const o of dhcp.options) {
    out.push({
      code: o.code,
      ...(o.name === undefined ? {} : { name: o.name }),
      data: o.data,
      ...(o.csvFormat ? {} : { "csv-format": false }),
    });
  }
  return out;
}

function renderReservation(r: Reservation): KeaReservation {
  return {
    "hw-address": r.hwAddress,
    ...(r.hostname === "" ? {} : { hostname: r.hostname }),
    "ip-address": r.ipAddress,
    "user-context": { vmi: r.vmi },
  };
}

function inPool(pool: DhcpModel["pool"], address: string): boolean {
  if (pool === undefined) return false;
  const a = parseIPv4(address);
  const start = parseIPv4(pool.start);
  const end = parseIPv4(pool.end);
  if (a === undefined || start === undefined || end === undefined) return false;
  return a >= start && a <= end;
}

/** Kea stores lifetimes as uint32 seconds; a nonsensical value falls back to one hour. */
function lifetime(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < 1) return FALLBACK_LIFETIME_SECONDS;
  return Math.min(Math.floor(seconds), UINT32_MAX);
}

function byMacThenIp(a: Reservation, b: Reservation): number {
  return compare(a.hwAddress, b.hwAddress) || compare(a.ipAddress, b.ipAddress) || compare(a.vmi, b.vmi);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Recursively orders object keys so equal configs serialize to equal bytes (and hashes). */
function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(src).sort(compare)) out[key] = canonicalize(src[key]);
    return out;
  }
  return value;
}
