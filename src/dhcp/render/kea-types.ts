// The subset of the Kea 2.2 Dhcp4 configuration schema that oooi writes. Field names are Kea's
// own (kebab-case JSON keys), so a rendered object serializes straight into kea-dhcp4.json.

/** One DHCP option value, by Kea's option name (e.g. "routers" = option 3) and/or its code. */
export interface KeaOptionData {
  readonly name?: string;
  readonly code?: number;
  /** Kea's textual form (lists comma-separated), or hex bytes with csv-format false. */
  readonly data: string;
  readonly "csv-format"?: boolean;
}

/** A static binding MAC → IPv4 address (and hostname, option 12) inside a subnet. */
export interface KeaReservation {
  readonly "hw-address": string;
  readonly "ip-address": string;
  readonly hostname?: string;
  /** Opaque to Kea; kept so config-get shows which VMI the binding is for. */
  readonly "user-context": { readonly vmi: string };
}

/** A dynamic address range; "client-class": "KNOWN" limits it to clients with a reservation. */
export interface KeaPool {
  readonly pool: string;
  readonly "client-class"?: "KNOWN";
}

/** One IPv4 subnet served on the interface. */
export interface KeaSubnet4 {
  readonly id: number;
  readonly subnet: string;
  readonly pools: readonly KeaPool[];
  readonly "option-data": readonly KeaOptionData[];
  readonly reservations: readonly KeaReservation[];
  readonly "reservations-global": false;
  readonly "reservations-in-subnet": true;
  /** True lets Kea skip per-address reservation checks during pool allocation. */
  readonly "reservations-out-of-pool": boolean;
  /** Opaque to Kea: "<namespace>/<DHCPServer name>" this subnet was rendered for. */
  readonly "user-context": { readonly "dhcp-server": string };
}

/** A Kea logger definition (severity INFO to stdout, for kubectl logs). */
export interface KeaLogger {
  readonly name: string;
  readonly severity: "INFO";
  readonly debuglevel: 0;
  readonly output_options: readonly { readonly output: "stdout" }[];
}

/** The `Dhcp4` object of a complete kea-dhcp4 configuration. */
export interface KeaDhcp4Config {
  readonly authoritative: true;
  readonly "calculate-tee-times": true;
  readonly "control-socket": { readonly "socket-name": string; readonly "socket-type": "unix" };
  readonly "hooks-libraries": readonly { readonly library: string }[];
  readonly "host-reservation-identifiers": readonly ["hw-address"];
  readonly "interfaces-config": {
    readonly "dhcp-socket-type": "raw";
    readonly interfaces: readonly string[];
  };
  readonly "lease-database": {
    readonly "lfc-interval": number;
    readonly name: string;
    readonly persist: true;
    readonly type: "memfile";
  };
  readonly loggers: readonly KeaLogger[];
  readonly "match-client-id": false;
  readonly "sanity-checks": { readonly "lease-checks": "fix-del" };
  readonly subnet4: readonly KeaSubnet4[];
  readonly "t1-percent": number;
  readonly "t2-percent": number;
  readonly "valid-lifetime": number;
}
