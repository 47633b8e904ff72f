// Per-resource rules Envoy enforces through its protoc-gen-validate annotations that our proto
// codec cannot see (it checks field names and types, not values): a TcpProxy or HTTP connection
// manager needs a stat_prefix, a cluster a positive connect_timeout, clusters and
// ClusterLoadAssignments a name. Pure; returns findings, never throws.
//   TcpProxy.stat_prefix min_len 1: https://www.envoyproxy.io/docs/envoy/latest/api-v3/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto
//   HttpConnectionManager.stat_prefix min_len 1: https://www.envoyproxy.io/docs/envoy/latest/api-v3/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto
//   Cluster.name min_len 1, connect_timeout gt 0: https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/cluster.proto
//   ClusterLoadAssignment.cluster_name min_len 1: https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/endpoint/v3/endpoint.proto
import { parseDuration } from "../../xds/resource/duration.js";
import type { EnvoyResources, Finding } from "../resources.js";
import { asArray, asString, get } from "../../xds/resource/json.js";
import { HTTP_CONNECTION_MANAGER_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../xds/resource/type-urls.js";

const STAT_PREFIX_FILTERS: ReadonlyMap<unknown, string> = new Map([
  [TCP_PROXY_TYPE_URL, "tcp_proxy"],
  [HTTP_CONNECTION_MANAGER_TYPE_URL, "http_connection_manager"],
]);

/** Violations of the value rules above, naming the resource and field. */
export function checkRequiredFields(res: EnvoyResources): Finding[] {
  const errors: Finding[] = [];
  for (const listener of res.listeners) {
    const name = asString(get(listener, "name")) ?? "";
    for (const chain of [...asArray(get(listener, "filter_chains")), get(listener, "default_filter_chain")])
      errors.push(...chainFieldFindings(name, chain));
  }
  for (const cluster of res.clusters) errors.push(...clusterFieldFindings(cluster));
  for (const assignment of res.endpoints) errors.push(...assignmentFieldFindings(assignment));
  return errors;
}

/**
 * A filter chain's filters without a stat_prefix. (An API listener, for gRPC xDS clients, is not
 * a network listener: gRPC ignores its stat_prefix, so it has no chain here.)
 */
export function chainFieldFindings(listener: string, chain: unknown): Finding[] {
  const errors: Finding[] = [];
  for (const filter of asArray(get(chain, "filters"))) {
    const config = get(filter, "typed_config");
    const kind = STAT_PREFIX_FILTERS.get(get(config, "@type"));
    if (kind !== undefined && (asString(get(config, "stat_prefix")) ?? "") === "") {
      const chainName = asString(get(chain, "name")) ?? "";
      errors.push({
        at: { listener, chain: chainName },
        message: `listener "${listener}" filter chain "${chainName}": ${kind} has no stat_prefix`,
      });
    }
  }
  return errors;
}

/** A cluster's empty name or a connect_timeout that is not above zero. */
export function clusterFieldFindings(cluster: unknown): Finding[] {
  const errors: Finding[] = [];
  const name = asString(get(cluster, "name")) ?? "";
  if (name === "") errors.push({ at: { cluster: name }, message: "a cluster has an empty name" });
  const timeout = get(cluster, "connect_timeout");
  if (timeout === undefined) return errors;
  const d = typeof timeout === "string" ? parseDuration(timeout) : undefined;
  if (d === undefined || d.seconds < 0 || d.nanos < 0 || (d.seconds === 0 && d.nanos === 0)) {
    errors.push({
      at: { cluster: name },
      message: `cluster "${name}": connect_timeout ${JSON.stringify(timeout)} is not greater than 0s`,
    });
  }
  return errors;
}

/** A ClusterLoadAssignment's empty cluster_name. */
export function assignmentFieldFindings(assignment: unknown): Finding[] {
  return (asString(get(assignment, "cluster_name")) ?? "") === ""
    ? [{ at: { cluster: "" }, message: "a ClusterLoadAssignment has an empty cluster_name" }]
    : [];
}
