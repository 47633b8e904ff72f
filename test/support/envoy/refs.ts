// What Envoy waits for before a resource takes effect, read from proto3 JSON: an EDS cluster its
// ClusterLoadAssignment (named by eds_cluster_config.service_name, else the cluster's name); a
// listener the route configurations its HTTP connection managers load over RDS and the clusters its
// TCP proxies and inline routes name; a route configuration the clusters of its routes.
// https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#resource-warming
// https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/cluster.proto (EdsClusterConfig.service_name)
import { at, list, text } from "./json.js";
import { TYPE_URLS } from "./protos.js";

/** The ClusterLoadAssignment an EDS cluster needs; undefined for other discovery types. */
export function edsServiceName(cluster: unknown): string | undefined {
  if (at(cluster, "type") !== "EDS") return undefined;
  return text(cluster, "eds_cluster_config", "service_name") ?? text(cluster, "name");
}

/** Every typed_config of the listener's network filters (filter chains and the default chain). */
export function networkFilterConfigs(listener: unknown): unknown[] {
  const chains = [...list(listener, "filter_chains"), at(listener, "default_filter_chain")];
  const configs = chains.flatMap((c) => list(c, "filters").map((f) => at(f, "typed_config")));
  // A gRPC-style API listener holds its HTTP connection manager directly.
  const api = at(listener, "api_listener", "api_listener");
  return api === undefined ? configs : [...configs, api];
}

/** Route configuration names the listener loads over RDS. */
export function rdsNames(listener: unknown): string[] {
  return networkFilterConfigs(listener)
    .filter((c) => at(c, "@type") === TYPE_URLS.httpConnectionManager)
    .map((c) => text(c, "rds", "route_config_name"))
    .filter((n) => n !== undefined);
}

/** Cluster names a TCP proxy config forwards to. */
export function tcpProxyClusters(config: unknown): string[] {
  const single = text(config, "cluster");
  if (single !== undefined) return [single];
  return list(config, "weighted_clusters", "clusters").map((w) => text(w, "name") ?? "");
}

/** Cluster names the routes of a route configuration (or inline route_config) use. */
export function routeClusters(routeConfig: unknown): string[] {
  return list(routeConfig, "virtual_hosts")
    .flatMap((vh) => list(vh, "routes"))
    .flatMap((r) => {
      const single = text(r, "route", "cluster");
      if (single !== undefined) return [single];
      return list(r, "route", "weighted_clusters", "clusters").map((w) => text(w, "name") ?? "");
    });
}

/** Cluster names a listener uses directly (TCP proxies, inline route configurations). */
export function listenerClusters(listener: unknown): string[] {
  const out = networkFilterConfigs(listener).flatMap((c) => {
    const type = at(c, "@type");
    if (type === TYPE_URLS.tcpProxy) return tcpProxyClusters(c);
    if (type === TYPE_URLS.httpConnectionManager) return routeClusters(at(c, "route_config"));
    return [];
  });
  return [...new Set(out)].sort();
}
