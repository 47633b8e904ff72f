// The operator's durable DHCP state: each DHCPServer's status.allocations as observed. A restarted
// operator, or a new leader, starts from what the last leader wrote. Pure.
import type { DHCPAllocation } from "../../api/schema.js";
import type { KubeObject } from "../../kube/rest.js";
import { changedKeys, patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";

/** "<namespace>/<name>" → status.allocations of every observed DHCPServer that has one. */
export function persistedAllocations(
  dhcpServers: ReadonlyMap<string, KubeObject>,
): Map<string, readonly DHCPAllocation[]> {
  const out = new Map<string, readonly DHCPAllocation[]>();
  for (const [key, server] of dhcpServers) {
    const table = tableOf(server);
    if (table !== undefined) out.set(key, table);
  }
  return out;
}

function tableOf(server: KubeObject | undefined): readonly DHCPAllocation[] | undefined {
  const table = (server as { status?: { allocations?: unknown } } | undefined)?.status?.allocations;
  return Array.isArray(table) ? (table as DHCPAllocation[]) : undefined;
}

/**
 * persistedAllocations from one snapshot to the next: the same map while no DHCPServer changed, else
 * the last one with the changed servers' tables over it — a render reads what changed, not every
 * DHCPServer, and the incremental build compares the few entries that moved.
 */
export class PersistedAllocations {
  #last:
    | {
        readonly servers: ReadonlyMap<string, KubeObject>;
        readonly tables: ReadonlyMap<string, readonly DHCPAllocation[]>;
      }
    | undefined;

  of(servers: ReadonlyMap<string, KubeObject>): ReadonlyMap<string, readonly DHCPAllocation[]> {
    const last = this.#last;
    if (last?.servers === servers) return last.tables;
    let tables: ReadonlyMap<string, readonly DHCPAllocation[]>;
    if (last === undefined) tables = persistedAllocations(servers);
    else {
      const changes = new Map<string, readonly DHCPAllocation[] | Removed>();
      for (const key of changedKeys(last.servers, servers)) {
        const table = tableOf(servers.get(key));
        if (table !== undefined) changes.set(key, table);
        else if (last.tables.has(key)) changes.set(key, REMOVED);
      }
      tables = patchMap(last.tables, changes);
    }
    this.#last = { servers, tables };
    return tables;
  }
}
