// How Envoy finds its ADS server in a bootstrap (envoy.config.bootstrap.v3.Bootstrap): the
// ads_config's envoy_grpc cluster_name names a static cluster whose load_assignment holds the
// address; node.cluster is the service cluster the server sees.
// https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/bootstrap/v3/bootstrap.proto
import { at, list, num, text } from "./json.js";

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

/** What Envoy's ADS TLS transport socket reads, following the SDS files the bootstrap names. */
export interface AdsTlsFiles {
  readonly certificateChain: string;
  readonly privateKey: string;
  readonly trustedCa: string;
  /** The directories whose moves make Envoy re-read each SDS file. */
  readonly watchedDirectories: readonly string[];
  /** DNS SANs the server's certificate must carry (exact matchers). */
  readonly serverSans: readonly string[];
  readonly sni: string | undefined;
}

/**
 * The files behind the ADS cluster's envoy.transport_sockets.tls, as Envoy resolves them: each
 * sds_config's path_config_source file (read with `readSds`, a DiscoveryResponse) holds the named
 * Secret resource, whose tls_certificate / validation_context name the PEM files.
 * https://www.envoyproxy.io/docs/envoy/latest/configuration/security/secret
 */
export function adsTlsFiles(bootstrap: unknown, readSds: (path: string) => unknown): AdsTlsFiles {
  const { cluster } = adsTarget(bootstrap);
  const socket = at(cluster, "transport_socket");
  if (text(socket, "name") !== "envoy.transport_sockets.tls") throw new Error("bootstrap: ADS cluster is not TLS");
  const context = at(socket, "typed_config", "common_tls_context");
  const watched: string[] = [];
  const secret = (config: unknown): unknown => {
    const name = text(config, "name");
    const path = text(config, "sds_config", "path_config_source", "path");
    if (name === undefined || path === undefined) throw new Error("bootstrap: an SDS config without name or path");
    const dir = text(config, "sds_config", "path_config_source", "watched_directory", "path");
    if (dir !== undefined) watched.push(dir);
    const found = list(readSds(path), "resources").find((r) => text(r, "name") === name);
    if (found === undefined) throw new Error(`${path}: no Secret ${name}`);
    return found;
  };
  const cert = secret(list(context, "tls_certificate_sds_secret_configs")[0]);
  const combined = at(context, "combined_validation_context");
  const ca = secret(at(combined, "validation_context_sds_secret_config"));
  const need = (v: string | undefined, what: string): string => {
    if (v === undefined) throw new Error(`bootstrap: no ${what}`);
    return v;
  };
  return {
    certificateChain: need(text(cert, "tls_certificate", "certificate_chain", "filename"), "certificate_chain"),
    privateKey: need(text(cert, "tls_certificate", "private_key", "filename"), "private_key"),
    trustedCa: need(text(ca, "validation_context", "trusted_ca", "filename"), "trusted_ca"),
    watchedDirectories: watched,
    serverSans: list(combined, "default_validation_context", "match_typed_subject_alt_names")
      .filter((m) => text(m, "san_type") === "DNS")
      .map((m) => text(m, "matcher", "exact") ?? ""),
    sni: text(socket, "typed_config", "sni"),
  };
}
