// Envoy's side of the cache boundary: a rendered configuration as the cache's input, named the way
// Envoy subscribes to it, and the check the cache is given so that it never serves a set Envoy
// would refuse (docs/architecture.md, "The cache boundary").
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../xds/resource/type-urls.js";
import { ENVOY_NAME_FIELD, type ResourceInput, type SnapshotCheck, type SnapshotInput } from "../xds/resource/specs.js";
import { asString, get } from "../xds/resource/json.js";
import type { EnvoyResources } from "./resources.js";
import { checkConsistency } from "./validate/consistency.js";

const ENVOY_TYPES = [LISTENER_TYPE_URL, CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, ROUTE_TYPE_URL] as const;

/** Inputs made by envoyInput, with the resource set they came from: renderEnvoy already checked it. */
const madeFrom = new WeakMap<SnapshotInput, EnvoyResources>();

/** A rendered Envoy configuration as cache input, each resource named by its own name field. */
export function envoyInput(resources: EnvoyResources): SnapshotInput {
  const named = (items: readonly object[], typeUrl: string): ResourceInput[] => {
    const field = ENVOY_NAME_FIELD.get(typeUrl) ?? "name";
    return items.map((resource) => ({ name: asString(get(resource, field)) ?? "", resource }));
  };
  const input: SnapshotInput = new Map([
    [LISTENER_TYPE_URL, named(resources.listeners, LISTENER_TYPE_URL)],
    [CLUSTER_TYPE_URL, named(resources.clusters, CLUSTER_TYPE_URL)],
    [ENDPOINT_TYPE_URL, named(resources.endpoints, ENDPOINT_TYPE_URL)],
    [ROUTE_TYPE_URL, named(resources.routes, ROUTE_TYPE_URL)],
  ]);
  madeFrom.set(input, resources);
  return input;
}

/**
 * The cache's check for snapshots holding Envoy types: the consistency Envoy demands across
 * listeners, clusters, endpoints and routes. Other types (KeaConfig) pass untouched.
 */
export const checkEnvoySnapshot: SnapshotCheck = (input) => {
  if (!ENVOY_TYPES.some((t) => input.has(t))) return [];
  // The set renderEnvoy checked is the same object: checkConsistency remembers its result.
  return checkConsistency(madeFrom.get(input) ?? envoyResources(input));
};

function envoyResources(input: SnapshotInput): EnvoyResources {
  const list = (t: string): object[] => (input.get(t) ?? []).map((r) => r.resource);
  return {
    listeners: list(LISTENER_TYPE_URL),
    clusters: list(CLUSTER_TYPE_URL),
    endpoints: list(ENDPOINT_TYPE_URL),
    routes: list(ROUTE_TYPE_URL),
  };
}
