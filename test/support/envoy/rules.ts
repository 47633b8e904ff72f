// The rules a real Envoy NACKs a response for, of those oooi could break (proto3 JSON in, the first
// error text out). From Envoy's API reference (protoc-gen-validate annotations) and listener docs:
//   TcpProxy.stat_prefix, HttpConnectionManager.stat_prefix: min_len 1
//     https://www.envoyproxy.io/docs/envoy/latest/api-v3/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto
//     https://www.envoyproxy.io/docs/envoy/latest/api-v3/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto
//   Cluster.name min_len 1, Cluster.connect_timeout gt 0s
//     https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/cluster.proto
//   ClusterLoadAssignment.cluster_name min_len 1
//     https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/endpoint/v3/endpoint.proto
//   a LOGICAL_DNS cluster: "a single locality_lb_endpoint and a single lb_endpoint" (one hostname)
//     https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/service_discovery#logical-dns
//   RouteAction.cluster min_len 1
//     https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/route/v3/route_components.proto
//   two filter chains (or one chain twice) under the same match: "multiple filter chains with the same
//   matching rules are defined" — Envoy indexes a chain under every combination of its list criteria
//     https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/listener/v3/listener_components.proto#config-listener-v3-filterchainmatch
//   with a filter_chain_matcher the matches are ignored and every chain needs a unique name
//     https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener
import { at, list, num, text } from "./json.js";
import { TYPE_URLS } from "./protos.js";
import { networkFilterConfigs } from "./refs.js";

/** Why Envoy would reject this resource, or undefined when it would accept it. */
export function envoyRejects(typeUrl: string, resource: Record<string, unknown>): string | undefined {
  if (typeUrl === TYPE_URLS.listener) return listenerError(resource);
  if (typeUrl === TYPE_URLS.cluster) return clusterError(resource);
  if (typeUrl === TYPE_URLS.endpoint) {
    return (text(resource, "cluster_name") ?? "") === ""
      ? "ClusterLoadAssignment: cluster_name must not be empty"
      : undefined;
  }
  if (typeUrl === TYPE_URLS.route) return routesError(text(resource, "name") ?? "", resource);
  return undefined;
}

function listenerError(listener: Record<string, unknown>): string | undefined {
  const name = text(listener, "name") ?? "";
  for (const config of networkFilterConfigs(listener)) {
    const type = at(config, "@type");
    if (
      (type === TYPE_URLS.tcpProxy || type === TYPE_URLS.httpConnectionManager) &&
      (text(config, "stat_prefix") ?? "") === ""
    ) {
      return `listener "${name}": ${type.slice(type.lastIndexOf(".") + 1)}: stat_prefix must not be empty`;
    }
    if (type === TYPE_URLS.httpConnectionManager && at(config, "route_config") !== undefined) {
      const inline = routesError(text(config, "route_config", "name") ?? "", at(config, "route_config"));
      if (inline !== undefined) return `listener "${name}": ${inline}`;
    }
  }
  if (at(listener, "filter_chain_matcher") !== undefined) return matcherError(name, listener);
  const seen = new Map<string, string>();
  for (const chain of list(listener, "filter_chains")) {
    for (const key of matchKeys(at(chain, "filter_chain_match"))) {
      if (seen.has(key)) {
        return `error adding listener "${name}": filter chain "${text(chain, "name") ?? ""}" has the same matching rules as "${seen.get(key) ?? ""}" (multiple filter chains with the same matching rules are defined)`;
      }
      seen.set(key, text(chain, "name") ?? "");
    }
  }
  return undefined;
}

/**
 * With a filter_chain_matcher every filter_chain_match is ignored, and the chains must be uniquely
 * named (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener).
 */
function matcherError(name: string, listener: Record<string, unknown>): string | undefined {
  const names = new Set<string>();
  for (const chain of list(listener, "filter_chains")) {
    const chainName = text(chain, "name") ?? "";
    if (chainName === "" || names.has(chainName))
      return `listener "${name}": filter chains must be uniquely named to use filter_chain_matcher ("${chainName}")`;
    names.add(chainName);
  }
  return undefined;
}

function clusterError(cluster: Record<string, unknown>): string | undefined {
  const name = text(cluster, "name") ?? "";
  if (name === "") return "Cluster: name must not be empty";
  const timeout = at(cluster, "connect_timeout");
  // Unset means Envoy's default (5s); set, it must be a positive Duration.
  const positive = typeof timeout === "string" && /^[0-9]+(\.[0-9]+)?s$/.test(timeout) && /[1-9]/.test(timeout);
  if (timeout !== undefined && !positive) {
    return `cluster "${name}": connect_timeout ${JSON.stringify(timeout)} must be greater than 0s`;
  }
  if (at(cluster, "type") === "LOGICAL_DNS") {
    const localities = list(cluster, "load_assignment", "endpoints");
    if (localities.length !== 1 || list(localities[0], "lb_endpoints").length !== 1)
      return `cluster "${name}": LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`;
  }
  return undefined;
}

function routesError(name: string, routeConfig: unknown): string | undefined {
  for (const vh of list(routeConfig, "virtual_hosts")) {
    for (const route of list(vh, "routes")) {
      if (at(route, "route") !== undefined && text(route, "route", "cluster") === "") {
        return `route configuration "${name}" virtual host "${text(vh, "name") ?? ""}": route cluster must not be empty`;
      }
    }
  }
  return undefined;
}

/** "a.b.c.d/n" with host bits cleared (Envoy's CidrRange); other text as given. */
function cidrKey(range: unknown): string {
  const address = text(range, "address_prefix") ?? "";
  const len = num(range, "prefix_len") ?? 0;
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (!m || len > 32) return `${address}/${len}`;
  const value = m
    .slice(1)
    .map(Number)
    .reduce((a, o) => a * 256 + o, 0);
  const size = 2 ** (32 - len);
  const network = Math.floor(value / size) * size;
  return `${[24, 16, 8, 0].map((s) => Math.floor(network / 2 ** s) % 256).join(".")}/${len}`;
}

/** Every combination of a FilterChainMatch's criteria, one key each (an empty list = any). */
function matchKeys(match: unknown): string[] {
  const values = (field: string, read: (v: unknown) => string): string[] => {
    const l = list(match, field).map(read);
    return l.length > 0 ? [...l] : [""];
  };
  const axes: string[][] = [
    [String(num(match, "destination_port") ?? 0)],
    values("prefix_ranges", cidrKey),
    values("server_names", (v) => String(v).toLowerCase()),
    [text(match, "transport_protocol") ?? ""],
    values("application_protocols", String),
    values("direct_source_prefix_ranges", cidrKey),
    [JSON.stringify(at(match, "source_type") ?? "ANY")],
    values("source_prefix_ranges", cidrKey),
    values("source_ports", String),
  ];
  return axes.reduce<string[]>((keys, axis) => keys.flatMap((k) => axis.map((v) => `${k}|${v}`)), [""]);
}
