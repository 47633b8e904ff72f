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
    const chains = [...asArray(get(listener, "filter_chains")), get(listener, "default_filter_chain")];
    // An API listener (gRPC xDS clients) is not a network listener: gRPC ignores its stat_prefix.
    for (const chain of chains) {
      for (const filter of asArray(get(chain, "filters"))) {
        const config = get(filter, "typed_config");
        const kind = STAT_PREFIX_FILTERS.get(get(config, "@type"));
        if (kind !== undefined && (asString(get(config, "stat_prefix")) ?? "") === "") {
          const chainName = asString(get(chain, "name")) ?? "";
          errors.push({
            at: { listener: name, chain: chainName },
            message: `listener "${name}" filter chain "${chainName}": ${kind} has no stat_prefix`,
          });
        }
      }
    }
  }
  for (const cluster of res.clusters) {
    const name = asString(get(cluster, "name")) ?? "";
    if (name === "") errors.push({ at: { cluster: name }, message: "a cluster has an empty name" });
    const timeout = get(cluster, "connect_timeout");
    if (timeout === undefined) continue;
    const d = typeof timeout === "string" ? parseDuration(timeout) : undefined;
    if (d === undefined || d.seconds < 0 || d.nanos < 0 || (d.seconds === 0 && d.nanos === 0)) {
      errors.push({
        at: { cluster: name },
        message: `cluster "${name}": connect_timeout ${JSON.stringify(timeout)} is not greater than 0s`,
      });
    }
  }
  for (const assignment of res.endpoints) {
    if ((asString(get(assignment, "cluster_name")) ?? "") === "")
      errors.push({ at: { cluster: "" }, message: "a ClusterLoadAssignment has an empty cluster_name" });
  }
  return errors;
}
