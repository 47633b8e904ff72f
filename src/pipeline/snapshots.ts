// Rendered outputs → the xDS cache: the one place producers meet the ADS server (serve and operator).
import type { Snapshot, SnapshotCache } from "../xds/cache/index.js";
import { KEA_CONFIG_TYPE_URL, keaConfigResource } from "../dhcp/kea-config-resource.js";
import type { Outputs, RenderedInfra } from "./outputs.js";
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

/** What a publish reads of a rendering: its Infras, and (from renderAll) how they differ from the one it continued. */
export type Publishable = Pick<Outputs, "infras"> & Partial<Pick<Outputs, "byInfra" | "delta">>;

/**
 * Every rendered proxy becomes the snapshot of its node group ("<namespace>/<ProxyServer>"), and
 * every DHCPServer's Kea configuration the snapshot of its own ("<namespace>/<DHCPServer>", one
 * KeaConfig of that name; the dhcp-agent keeps its Kea's own socket and interfaces). Groups whose
 * Infra vanished or stopped rendering are dropped, so their clients get nothing stale. A snapshot
 * the cache refuses leaves the previous one in place.
 *
 * With `previous` (the outputs published last into this cache), only the Infras whose rendering is
 * not the same object as then are handed over: read from `out.delta` when `out` continued from
 * `previous` (a change costs its Infras, not a walk of 3,000), else found by identity.
 *
 * Returns each group it set or deleted, with the group's snapshot before (undefined: none).
 */
export function publishSnapshots(
  cache: SnapshotCache,
  out: Publishable,
  log: Pick<Logger, "error">,
  previous?: Publishable,
): Map<string, Snapshot | undefined> {
  const before = new Map<string, Snapshot | undefined>();
  const touch = (group: string): void => {
    if (!before.has(group)) before.set(group, cache.getSnapshot(group));
  };
  const delta = previous?.byInfra !== undefined && out.delta?.from === previous.byInfra ? out.delta : undefined;
  // By identity, not Rendering.rebuilt: an Infra is rendered again without a rebuild (options, DNS history).
  const kept = delta === undefined ? new Set(previous?.infras) : undefined;
  const handed = delta?.rendered ?? out.infras.filter((r) => kept?.has(r) !== true);
  for (const r of handed) {
    const group = r.topology.proxy?.node;
    if (group === undefined || r.envoy === undefined) continue;
    touch(group);
    const set = cache.setSnapshot(group, envoyInput(r.envoy));
    if (!set.ok) log.error({ group }, `snapshot refused, Envoys keep the previous one: ${set.errors.join("; ")}`);
  }
  for (const r of handed) {
    const name = r.topology.dhcp?.name;
    if (name === undefined || r.kea === undefined) continue;
    touch(name);
    const set = cache.setSnapshot(name, new Map([[KEA_CONFIG_TYPE_URL, [keaResource(name, r.kea)]]]));
    if (!set.ok)
      log.error({ group: name }, `KeaConfig refused, dhcp-agents keep the previous one: ${set.errors.join("; ")}`);
  }
  // A group belongs to one Infra (its name is the Infra's plus "-proxy" or "-dhcp"): with a delta,
  // only the groups of the renderings that went can have lost theirs, to a rendering made anew.
  const live = new Set((delta?.rendered ?? out.infras).flatMap(groupsOf));
  const gone =
    delta?.dropped.flatMap(groupsOf) ?? (previous === undefined ? cache.groups() : previous.infras.flatMap(groupsOf));
  for (const group of gone) {
    if (live.has(group)) continue;
    touch(group);
    cache.deleteSnapshot(group);
  }
  return before;
}

/** The node groups a rendering serves. */
function groupsOf(r: RenderedInfra): string[] {
  const groups: string[] = [];
  if (r.topology.proxy !== undefined && r.envoy !== undefined) groups.push(r.topology.proxy.node);
  if (r.topology.dhcp !== undefined && r.kea !== undefined) groups.push(r.topology.dhcp.name);
  return groups;
}
