// Envoy renderer: ProxyModel → the four xDS resource sets (proto3 JSON, snake_case, sorted by
// name), one translator per xDS type. Pure; every output is checked for the consistency Envoy
// demands before it is returned.
import { Problems } from "../../model/problems.js";
import type { ObjectRef, Problem, ProxyModel } from "../../model/types.js";
import type { EnvoyResources } from "../resources.js";
import { consistencyFindings } from "../validate/consistency.js";
import { renderClusters } from "./clusters.js";
import { renderEndpoints } from "./endpoints.js";
import { proxyFields } from "./fields.js";
import { renderListeners } from "./listeners.js";
import { renderRoutes } from "./routes.js";

/**
 * Rendered resources, or why they must not be pushed to Envoy: problems of the proxy's
 * ProxyServer, each at the spec.backends field it comes from (fields.ts), in the order found.
 */
export type EnvoyRender = { ok: true; resources: EnvoyResources } | { ok: false; errors: readonly Problem[] };

/** Renders a proxy's Envoy configuration; errors instead of resources Envoy would reject. */
export function renderEnvoy(proxy: ProxyModel): EnvoyRender {
  const problems = new Problems();
  const p = problems.for(proxyServerRef(proxy.node));
  const fields = proxyFields(proxy);
  const resources: EnvoyResources = {
    listeners: renderListeners(proxy.backends, p, fields),
    clusters: renderClusters(proxy.upstreams, p, fields),
    endpoints: renderEndpoints(proxy.upstreams, p, fields),
    routes: renderRoutes(proxy.backends),
  };
  for (const f of consistencyFindings(resources)) p.error(fields.at(f.at), "InconsistentConfig", f.message);
  return p.hasErrors ? { ok: false, errors: problems.recorded() } : { ok: true, resources };
}

/** The ProxyServer a node names ("<namespace>/<ProxyServer name>", ProxyModel.node). */
export function proxyServerRef(node: string): ObjectRef {
  const cut = node.indexOf("/");
  return { kind: "ProxyServer", namespace: cut < 0 ? "" : node.slice(0, cut), name: node.slice(cut + 1) };
}
