// The library entry point `oooi serve --kea-socket PATH [--dhcp-interface IF]` calls: every new
// DhcpModel is rendered for the local Kea and handed to the applier, which coalesces bursts,
// waits for Kea and skips configurations Kea already runs.
import { KeaApplier, type ApplyResult, type KeaApplierOptions } from "../applier.js";
import { renderKea, type KeaDhcp4Config } from "../render/index.js";
import type { DhcpModel, Topology } from "../../model/types.js";
import type { LeaseCounts } from "./leases.js";

/** How the local Kea is reached and what differs from the in-cluster defaults. */
export interface KeaSyncOptions {
  /** Kea's unix control socket (`--kea-socket`); also rendered as the config's control socket. */
  readonly socketPath: string;
  /** Interface to serve on (`--dhcp-interface`), replacing the DHCPServer's; Kea's own list still wins when it was started with one. */
  readonly interface?: string;
  /** memfile lease file; default: keep the lease database the running Kea uses. */
  readonly leaseFile?: string;
  /** Directory of libdhcp_lease_cmds.so on this host; default the renderer's. */
  readonly hooksDirectory?: string;
  readonly applier?: KeaApplierOptions;
}

/** Keeps one Kea in step with the DHCP model of one DHCPServer. */
export class KeaSync {
  /** The applier (exposed for lease counts and for tests). */
  readonly applier: KeaApplier;

  constructor(private readonly options: KeaSyncOptions) {
    // Without an explicit lease file, the lease database Kea was started with is kept (as its
    // control socket and interfaces are): its leases stay where their owner put them.
    this.applier = new KeaApplier(options.socketPath, {
      ...options.applier,
      keepLeaseDatabase: options.leaseFile === undefined,
    });
  }

  /** The configuration a model becomes on this Kea. Pure. */
  render(model: DhcpModel): { Dhcp4: KeaDhcp4Config } {
    const m = this.options.interface === undefined ? model : { ...model, interface: this.options.interface };
    return renderKea(m, {
      controlSocket: this.options.socketPath,
      ...(this.options.leaseFile === undefined ? {} : { leaseFile: this.options.leaseFile }),
      ...(this.options.hooksDirectory === undefined ? {} : { hooksDirectory: this.options.hooksDirectory }),
    });
  }

  /**
   * Renders and applies the model. `undefined` (DHCP disabled, Infra gone or invalid) changes
   * nothing: Kea keeps its last configuration and leases rather than dropping every VM's address.
   */
  update(model: DhcpModel | undefined): Promise<ApplyResult | undefined> {
    if (model === undefined) return Promise.resolve(undefined);
    return this.applier.apply(this.render(model));
  }

  /** activeLeases / totalLeases for the DHCPServer's status. */
  leaseCounts(): Promise<LeaseCounts> {
    return this.applier.leaseCounts();
  }

  /** Stops retrying; applies still waiting resolve "stopped". */
  close(): void {
    this.applier.close();
  }
}

/**
 * The DHCP model a single local Kea serves: the one of DHCPServer `name` ("namespace/name"), or
 * with no name the first Infra (sorted) that has DHCP enabled.
 */
export function selectDhcpModel(topologies: readonly Topology[], name?: string): DhcpModel | undefined {
  for (const t of topologies) {
    if (t.dhcp !== undefined && (name === undefined || t.dhcp.name === name)) return t.dhcp;
  }
  return undefined;
}
