// What an Envoy resource depends on, for make-before-break ordering: a listener needs its
// clusters (TCP proxy, inline routes) and route configurations (RDS), a route configuration its
// clusters, an EDS cluster its ClusterLoadAssignment. Reads proto3 JSON; never throws.
import { asArray, asString, get } from "./json.js";
import {
  CLUSTER_TYPE_URL,
  HTTP_CONNECTION_MANAGER_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  TCP_PROXY_TYPE_URL,
} from "./type-urls.js";

/** Names of other resources one resource needs before a client can use it. */
export interface References {
  /** CDS cluster names. */
  readonly clusters: readonly string[];
  /** RDS route configuration names. */
  readonly routes: readonly string[];
  /** EDS ClusterLoadAssignment name (an EDS cluster's service name); undefined for other clusters. */
  readonly endpoints: string | undefined;
}

/** A resource that references nothing. */
export const NO_REFERENCES: References = { clusters: [], routes: [], endpoints: undefined };

/** References of a resource of type `typeUrl` given as proto3 JSON. */
export function referencesOf(typeUrl: string, resource: object): References {
  if (typeUrl === LISTENER_TYPE_URL) return listenerRefs(resource);
  if (typeUrl === ROUTE_TYPE_URL) return freeze(routeClusters(resource), [], undefined);
  if (typeUrl === CLUSTER_TYPE_URL) {
    if (get(resource, "type") !== "EDS") return NO_REFERENCES;
    const name = asString(get(resource, "eds_cluster_config", "service_name")) ?? asString(get(resource, "name"));
    return freeze([], [], name);
  }
  return NO_REFERENCES;
}

function freeze(clusters: Iterable<string>, routes: Iterable<string>, endpoints: string | undefined): References {
  return { clusters: [...new Set(clusters)].sort(), routes: [...new Set(routes)].sort(), endpoints };
}

function listenerRefs(listener: object): References {
  const clusters: string[] = [];
  const routes: string[] = [];
  const chains = [...asArray(get(listener, "filter_chains")), get(listener, "default_filter_chain")];
  const configs = chains.flatMap((c) => asArray(get(c, "filters")).map((f) => get(f, "typed_config")));
  // gRPC-style API listeners carry the HTTP connection manager directly.
  configs.push(get(listener, "api_listener", "api_listener"));
  for (const config of configs) {
    const type = get(config, "@type");
    if (type === TCP_PROXY_TYPE_URL) {
      const single = asString(get(config, "cluster"));
      if (single !== undefined) clusters.push(single);
      for (const w of asArray(get(config, "weighted_clusters", "clusters"))) {
        const name = asString(get(w, "name"));
        if (name !== undefined) clusters.push(name);
      }
    } else if (type === HTTP_CONNECTION_MANAGER_TYPE_URL) {
      const rds = asString(get(config, "rds", "route_config_name"));
      if (rds !== undefined) routes.push(rds);
      const inline = get(config, "route_config");
      if (inline !== undefined) clusters.push(...routeClusters(inline));
    }
  }
  return freeze(clusters, routes, undefined);
}

function routeClusters(routeConfig: unknown): string[] {
  const out: string[] = [];
  for (const vh of asArray(get(routeConfig, "virtual_hosts"))) {
    for (const route of asArray(get(vh, "routes"))) {
      const single = asString(get(route, "route", "cluster"));
      if (single !== undefined) out.push(single);
      for (const w of asArray(get(route, "route", "weighted_clusters", "clusters"))) {
        const name = asString(get(w, "name"));
        if (name !== undefined) out.push(name);
      }
    }
  }
  return out;
}
