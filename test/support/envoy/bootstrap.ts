// How Envoy finds its ADS server in a bootstrap (envoy.config.bootstrap.v3.Bootstrap): the
// ads_config's envoy_grpc cluster_name names a static cluster whose load_assignment holds the
// address; node.cluster is the service cluster the server sees.
// https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/bootstrap/v3/bootstrap.proto
import { list, num, text } from "./json.js";

/** Where an Envoy started with this bootstrap connects, and the node.cluster it declares. */
export interface AdsTarget {
  /** "host:port" of the first endpoint of the ADS cluster. */
  readonly address: string;
  readonly nodeCluster: string;
  /** The static cluster carrying ADS, as written in the bootstrap. */
  readonly cluster: Record<string, unknown>;
}

/** The ADS target of a bootstrap; throws naming what is missing, as Envoy refuses to start. */
export function adsTarget(bootstrap: unknown): AdsTarget {
  const services = list(bootstrap, "dynamic_resources", "ads_config", "grpc_services");
  const name = text(services[0], "envoy_grpc", "cluster_name");
  if (name === undefined) throw new Error("bootstrap: dynamic_resources.ads_config has no envoy_grpc cluster_name");
  const cluster = list(bootstrap, "static_resources", "clusters").find((c) => text(c, "name") === name);
  if (cluster === undefined) throw new Error(`bootstrap: ADS cluster ${name} is not a static cluster`);
  const endpoint = list(list(cluster, "load_assignment", "endpoints")[0], "lb_endpoints")[0];
  const host = text(endpoint, "endpoint", "address", "socket_address", "address");
  const port = num(endpoint, "endpoint", "address", "socket_address", "port_value");
  if (host === undefined || port === undefined) throw new Error(`bootstrap: cluster ${name} has no socket address`);
  const nodeCluster = text(bootstrap, "node", "cluster");
  if (nodeCluster === undefined) throw new Error("bootstrap: node.cluster is not set");
  return { address: `${host}:${String(port)}`, nodeCluster, cluster: cluster as Record<string, unknown> };
}
