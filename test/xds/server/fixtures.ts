// Shared setup of the xDS server suites: a cache and server on 127.0.0.1:0, and rendered Envoy
// configurations built from the proxy fixture.
import { SnapshotCache } from "../../../src/xds/cache/index.js";
import { ENDPOINT_TYPE_URL, ROUTE_TYPE_URL } from "../../../src/xds/resource/protos.js";
import { renderEnvoy } from "../../../src/envoy/render/index.js";
import type { EnvoyResources } from "../../../src/envoy/resources.js";
import { startXdsServer, type XdsServer, type XdsServerOptions } from "../../../src/xds/server/index.js";
import type { AddressUpstream } from "../../../src/model/types.js";
import { ALPHA, BETA, GAMMA, proxyModel, sampleEndpoints, type AttachmentSpec } from "../../envoy/proxy-fixture.js";
import { checkEnvoySnapshot, envoyInput } from "../../../src/envoy/snapshot.js";

/** The node group every suite uses unless it needs several. */
export const GROUP = "oooi-system/infra-proxy";

/** A rendered configuration; throws when the renderer refuses it. */
export function rendered(
  attachments: readonly AttachmentSpec[] = [ALPHA, BETA, GAMMA],
  endpointsFor: (name: string) => AddressUpstream["endpoints"] = sampleEndpoints,
): EnvoyResources {
  const r = renderEnvoy(proxyModel(attachments, endpointsFor));
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return r.resources;
}

/** A running server with its cache. */
export interface Rig {
  readonly cache: SnapshotCache;
  readonly server: XdsServer;
  readonly address: string;
  close(): Promise<void>;
}

/** Starts a cache + server on 127.0.0.1:0. */
export async function startRig(options: Partial<XdsServerOptions> = {}): Promise<Rig> {
  const cache = options.cache ?? new SnapshotCache({ check: checkEnvoySnapshot });
  const server = await startXdsServer({ maxStreamAgeMs: 0, ...options, cache, listen: "127.0.0.1:0" });
  return { cache, server, address: `127.0.0.1:${server.port}`, close: () => server.close() };
}

/** Sets a snapshot and fails loudly when the cache refuses it. */
export function publish(cache: SnapshotCache, group: string, resources: EnvoyResources): void {
  const r = cache.setSnapshot(group, envoyInput(resources));
  if (!r.ok) throw new Error(r.errors.join("\n"));
}

/**
 * The current version of every type of a group's snapshot that an Envoy would hold: an empty
 * EDS or RDS type is never subscribed to, so it has no version on the client.
 */
export function versionsOf(cache: SnapshotCache, group: string): Map<string, string> {
  const snap = cache.getSnapshot(group);
  if (!snap) throw new Error(`no snapshot for ${group}`);
  const named = new Set([ENDPOINT_TYPE_URL, ROUTE_TYPE_URL]);
  return new Map(
    [...snap.types].filter(([t, s]) => !(named.has(t) && s.resources.size === 0)).map(([t, s]) => [t, s.version]),
  );
}

export { ALPHA, BETA, GAMMA };
