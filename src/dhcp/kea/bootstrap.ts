// The configuration kea-dhcp4 is started with before the first apply: it opens the control
// socket, loads lease_cmds and the lease file, and serves no subnet yet. Pure.
import {
  DEFAULT_CONTROL_SOCKET,
  DEFAULT_HOOKS_DIRECTORY,
  DEFAULT_LEASE_FILE,
  LEASE_CMDS_LIBRARY,
} from "../render/index.js";

/** Where the starting Kea listens and keeps leases. */
export interface KeaBootstrapOptions {
  readonly controlSocket?: string;
  /** Interfaces Kea serves on; the applier keeps them on every config. Empty = let the applied config choose. */
  readonly interfaces?: readonly string[];
  readonly leaseFile?: string;
  readonly hooksDirectory?: string;
}

/** A minimal kea-dhcp4.json to start Kea with (it must sit on a writable path: config-write rewrites it). */
export function bootstrapKeaConfig(options: KeaBootstrapOptions = {}): { Dhcp4: object } {
  const hooks = (options.hooksDirectory ?? DEFAULT_HOOKS_DIRECTORY).replace(/\/+$/, "");
  return {
    Dhcp4: {
      "control-socket": { "socket-name": options.controlSocket ?? DEFAULT_CONTROL_SOCKET, "socket-type": "unix" },
      "hooks-libraries": [{ library: `${hooks}/${LEASE_CMDS_LIBRARY}` }],
      "interfaces-config": { "dhcp-socket-type": "raw", interfaces: [...(options.interfaces ?? [])] },
      // Leases of subnets not configured yet are kept, not dropped, until the first apply.
      "lease-database": { name: options.leaseFile ?? DEFAULT_LEASE_FILE, persist: true, type: "memfile" },
      "sanity-checks": { "lease-checks": "warn" },
      subnet4: [],
    },
  };
}
