// Envoy renderer: ProxyModel → the four xDS resource sets (proto3 JSON, snake_case, sorted by
// name), one translator per xDS type. Pure; every output is checked for the consistency Envoy
// demands before it is returned.
import { Problems } from "../../model/problems.js";
import type { ObjectRef, Problem, ProxyModel } from "../../model/types.js";
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

/**
 * Rendered resources, or why they must not be pushed to Envoy: problems of the proxy's
 * ProxyServer (field "": they name the backend or upstream in their message), in the order found.
 */
export type EnvoyRender = { ok: true; resources: EnvoyResources } | { ok: false; errors: readonly Problem[] };

/** Renders a proxy's Envoy configuration; errors instead of resources Envoy would reject. */
export function renderEnvoy(proxy: ProxyModel): EnvoyRender {
  const problems = new Problems();
  const p = problems.for(proxyServerRef(proxy.node));
  const resources: EnvoyResources = {
    listeners: renderListeners(proxy.backends, p),
    clusters: renderClusters(proxy.upstreams, p),
    endpoints: renderEndpoints(proxy.upstreams, p),
    routes: renderRoutes(proxy.backends),
  };
  for (const message of checkConsistency(resources)) p.error("", "InconsistentConfig", message);
  return p.hasErrors ? { ok: false, errors: problems.recorded() } : { ok: true, resources };
}

/** The ProxyServer a node names ("<namespace>/<ProxyServer name>", ProxyModel.node). */
export function proxyServerRef(node: string): ObjectRef {
  const cut = node.indexOf("/");
  return { kind: "ProxyServer", namespace: cut < 0 ? "" : node.slice(0, cut), name: node.slice(cut + 1) };
}
