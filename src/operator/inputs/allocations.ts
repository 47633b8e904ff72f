// The operator's durable DHCP state: each DHCPServer's status.allocations as observed. A restarted
// operator, or a new leader, starts from what the last leader wrote. Pure.
import type { DHCPAllocation } from "../../api/schema.js";
import type { KubeObject } from "../../kube/rest.js";

/** "<namespace>/<name>" → status.allocations of every observed DHCPServer that has one. */
export function persistedAllocations(
  dhcpServers: ReadonlyMap<string, KubeObject>,
): Map<string, readonly DHCPAllocation[]> {
  const out = new Map<string, readonly DHCPAllocation[]>();
  for (const [key, server] of dhcpServers) {
    const table = (server as { status?: { allocations?: unknown } }).status?.allocations;
    if (Array.isArray(table)) out.set(key, table as DHCPAllocation[]);
  }
  return out;
}
