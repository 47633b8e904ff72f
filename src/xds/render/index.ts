// Envoy renderer: ProxyModel → the four xDS resource sets (proto3 JSON, snake_case, sorted by
// name), one translator per xDS type. Pure; every output is checked for the consistency Envoy
// demands before it is returned.
import type { ProxyModel } from "../../model/types.js";
import { checkConsistency } from "../consistency.js";
import { renderClusters } from "./clusters.js";
import { renderEndpoints } from "./endpoints.js";
import { renderListeners } from "./listeners.js";
import { renderRoutes } from "./routes.js";

/** The LDS, CDS, EDS and RDS resources of one proxy, each list sorted by resource name. */
export interface EnvoyResources {
  listeners: object[];
  clusters: object[];
  endpoints: object[];
  routes: object[];
}

/** Rendered resources, or why they must not be pushed to Envoy. */
export type EnvoyRender = { ok: true; resources: EnvoyResources } | { ok: false; errors: string[] };

/** Renders a proxy's Envoy configuration; errors instead of resources Envoy would reject. */
export function renderEnvoy(proxy: ProxyModel): EnvoyRender {
  const errors: string[] = [];
  const resources: EnvoyResources = {
    listeners: renderListeners(proxy.backends, errors),
    clusters: renderClusters(proxy.upstreams, errors),
    endpoints: renderEndpoints(proxy.upstreams, errors),
    routes: renderRoutes(proxy.backends),
  };
  errors.push(...checkConsistency(resources));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, resources };
}
