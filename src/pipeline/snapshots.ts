// Rendered outputs → the xDS cache: the one place producers meet the ADS server (serve and operator).
import type { SnapshotCache } from "../xds/cache/index.js";
import { KEA_CONFIG_TYPE_URL, keaConfigResource } from "../dhcp/kea-config-resource.js";
import type { Outputs } from "./outputs.js";
import { envoyInput } from "../envoy/snapshot.js";
import type { Logger } from "../util/logger.js";

/** One KeaConfig resource per rendered configuration object, so an unchanged one is not re-encoded. */
const keaResources = new WeakMap<object, ReturnType<typeof keaConfigResource>>();

function keaResource(name: string, kea: { readonly Dhcp4: object }): ReturnType<typeof keaConfigResource> {
  const cached = keaResources.get(kea);
  if (cached?.name === name) return cached;
  const made = keaConfigResource(name, kea);
  keaResources.set(kea, made);
  return made;
}

/**
 * Every rendered proxy becomes the snapshot of its node group ("<namespace>/<ProxyServer>"), and
 * every DHCPServer's Kea configuration the snapshot of its own ("<namespace>/<DHCPServer>", one
 * KeaConfig of that name; the dhcp-agent keeps its Kea's own socket and interfaces). Groups whose
 * Infra vanished or stopped rendering are dropped, so their clients get nothing stale. A snapshot
 * the cache refuses leaves the previous one in place. With `previous` (the outputs published
 * last into this cache), an Infra whose rendering is the same object as then is not handed over
 * again: one change costs the groups it changed, not every group.
 */
export function publishSnapshots(
  cache: SnapshotCache,
  out: Pick<Outputs, "infras">,
  log: Pick<Logger, "error">,
  previous?: Pick<Outputs, "infras">,
): void {
  // By identity, not Rendering.rebuilt: an Infra is rendered again without a rebuild (options, DNS history).
  const kept = new Set(previous?.infras);
  const live = new Set<string>();
  for (const r of out.infras) {
    const group = r.topology.proxy?.node;
    if (group === undefined || r.envoy === undefined) continue;
    live.add(group);
    if (kept.has(r)) continue;
    const set = cache.setSnapshot(group, envoyInput(r.envoy));
    if (!set.ok) log.error({ group }, `snapshot refused, Envoys keep the previous one: ${set.errors.join("; ")}`);
  }
  for (const r of out.infras) {
    const name = r.topology.dhcp?.name;
    if (name === undefined || r.kea === undefined) continue;
    live.add(name);
    if (kept.has(r)) continue;
    const set = cache.setSnapshot(name, new Map([[KEA_CONFIG_TYPE_URL, [keaResource(name, r.kea)]]]));
    if (!set.ok)
      log.error({ group: name }, `KeaConfig refused, dhcp-agents keep the previous one: ${set.errors.join("; ")}`);
  }
  for (const group of previous === undefined ? cache.groups() : groupsOf(previous)) {
    if (!live.has(group)) cache.deleteSnapshot(group);
  }
}

/** The node groups an earlier publish served. */
function groupsOf(out: Pick<Outputs, "infras">): string[] {
  const groups: string[] = [];
  for (const r of out.infras) {
    if (r.topology.proxy !== undefined && r.envoy !== undefined) groups.push(r.topology.proxy.node);
    if (r.topology.dhcp !== undefined && r.kea !== undefined) groups.push(r.topology.dhcp.name);
  }
  return groups;
}
