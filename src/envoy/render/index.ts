// Envoy renderer: ProxyModel → the four xDS resource sets (proto3 JSON, snake_case, sorted by
// name), one translator per xDS type. Pure; every output is checked for the consistency Envoy
// demands before it is returned.
import { Problems, type ObjectProblems } from "../../model/problems.js";
import type { ObjectRef, Problem, ProxyModel } from "../../model/types.js";
import type { EnvoyResources } from "../resources.js";
import { consistencyFindings } from "../validate/consistency.js";
import { renderClusters } from "./clusters.js";
import { renderEndpoints } from "./endpoints.js";
import { withChainMatcher } from "./chain-matcher.js";
import type { Listener } from "./envoy-types.js";
import { proxyFields, type ProxyFields } from "./fields.js";
import { HTTP_LISTENER_NAME, renderListeners } from "./listeners.js";
import { renderRoutes } from "./routes.js";

/**
 * Rendered resources, or why they must not be pushed to Envoy: problems of the proxy's
 * ProxyServer, each at the spec.backends field it comes from (fields.ts), in the order found.
 */
export type EnvoyRender = { ok: true; resources: EnvoyResources } | { ok: false; errors: readonly Problem[] };

/** How the Envoy configuration is shaped (the same model, another form). */
export interface EnvoyRenderOptions {
  /**
   * TLS listeners pick their chains by filter_chain_matcher instead of filter_chain_match, so a
   * worker joining changes only the matcher and drains no connection (chain-matcher.ts).
   */
  readonly filterChainMatcher?: boolean;
}

/**
 * Renders a proxy's Envoy configuration; errors instead of resources Envoy would reject.
 * `previous`: the proxy's last rendered resources, whose check this one's continues from.
 */
export function renderEnvoy(
  proxy: ProxyModel,
  options: EnvoyRenderOptions = {},
  previous?: EnvoyResources,
): EnvoyRender {
  const problems = new Problems();
  const p = problems.for(proxyServerRef(proxy.node));
  const fields = proxyFields(proxy);
  const listeners = renderListeners(proxy.backends, p, fields);
  let resources: EnvoyResources = {
    listeners,
    clusters: renderClusters(proxy.upstreams, p, fields),
    endpoints: renderEndpoints(proxy.upstreams, p, fields),
    routes: renderRoutes(proxy.backends),
  };
  // The chains' matches are checked (overlaps, wildcards) in the filter_chain_match form; the
  // matcher form is checked again for what it adds (every chain it names is there).
  for (const f of consistencyFindings(resources, previous)) p.error(fields.at(f.at), "InconsistentConfig", f.message);
  if (!p.hasErrors && options.filterChainMatcher === true) {
    resources = { ...resources, listeners: matcherListeners(listeners, proxy, p, fields) };
    for (const f of consistencyFindings(resources)) p.error(fields.at(f.at), "InconsistentConfig", f.message);
  }
  return p.hasErrors ? { ok: false, errors: problems.recorded() } : { ok: true, resources };
}

/** The TLS listeners in filter_chain_matcher form; a fallthrough is a problem of its backend's sources. */
function matcherListeners(
  listeners: readonly Listener[],
  proxy: ProxyModel,
  p: ObjectProblems,
  fields: ProxyFields,
): Listener[] {
  return listeners.map((listener) => {
    if (listener.name === HTTP_LISTENER_NAME) return listener;
    const r = withChainMatcher(listener);
    if (r.ok) return r.listener;
    for (const f of r.fallthroughs) {
      const b = proxy.backends.find((x) => x.name === f.chain);
      p.error(
        b === undefined ? fields.at({ listener: listener.name }) : fields.backend(b, "sourcePrefixRanges"),
        "InconsistentConfig",
        f.message,
      );
    }
    return listener;
  });
}

/** The ProxyServer a node names ("<namespace>/<ProxyServer name>", ProxyModel.node). */
export function proxyServerRef(node: string): ObjectRef {
  const cut = node.indexOf("/");
  return { kind: "ProxyServer", namespace: cut < 0 ? "" : node.slice(0, cut), name: node.slice(cut + 1) };
}
