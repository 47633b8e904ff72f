// LDS: TLS-passthrough listeners on 443 and 6443 (one filter chain per backend, chosen by SNI and
// source address, no default chain so unknown clients reach nothing) and, when apps ingress is
// served, a plain-HTTP listener on 80 that routes by Host through RDS.
import type { Address, CidrRange, FilterChain, FilterChainMatch, Listener } from "./envoy-types.js";
import type { ObjectProblems } from "../../model/problems.js";
import { formatIPv4, parseCidr, parseIPv4 } from "../../model/ipv4.js";
import type { Backend } from "../../model/types.js";
import { adsConfigSource } from "./ads.js";
import type { ProxyFields } from "./fields.js";
import { compareText, sortByKey } from "../../xds/resource/json.js";
import { HTTP_ROUTE_CONFIG_NAME } from "./routes.js";
import {
  HTTP_CONNECTION_MANAGER_TYPE_URL,
  ROUTER_TYPE_URL,
  TCP_PROXY_TYPE_URL,
  TLS_INSPECTOR_TYPE_URL,
} from "../../xds/resource/type-urls.js";

/** Listener for SNI-routed TLS on 443 (oauth, ignition, konnectivity, kubernetes aliases, apps). */
export const HTTPS_LISTENER_NAME = "https-443";
/** Listener for SNI- or source-routed TLS on 6443 (kube-apiserver). */
export const KUBE_LISTENER_NAME = "kube-6443";
/** Listener for plain HTTP on 80 (apps ingress), routed by Host header. */
export const HTTP_LISTENER_NAME = "http-80";

/** Listener filter that reads SNI/ALPN from the ClientHello and sets transport protocol "tls". */
export const TLS_INSPECTOR_FILTER = "envoy.filters.listener.tls_inspector";
/** Network filter that forwards the raw (still encrypted) byte stream to one cluster. */
export const TCP_PROXY_FILTER = "envoy.filters.network.tcp_proxy";
/** Network filter that terminates HTTP and routes requests by Host through RDS. */
export const HTTP_CONNECTION_MANAGER_FILTER = "envoy.filters.network.http_connection_manager";
/** Terminal HTTP filter that sends a request to the cluster its route selected. */
export const ROUTER_FILTER = "envoy.filters.http.router";

const BIND_ADDRESS = "0.0.0.0";
const TLS_LISTENERS = [
  { name: HTTPS_LISTENER_NAME, port: 443 },
  { name: KUBE_LISTENER_NAME, port: 6443 },
] as const;

/** Listener JSON for the backends, sorted by name; unusable backend fields go to `problems`. */
export function renderListeners(
  backends: readonly Backend[],
  problems: ObjectProblems,
  fields: ProxyFields,
): Listener[] {
  const listeners: { name: string; value: Listener }[] = [];
  for (const { name, port } of TLS_LISTENERS) {
    const chains = sortByKey(
      backends.filter((b) => b.port === port),
      (b) => b.name,
    ).map((b) => tlsChain(b, problems, fields));
    if (chains.length === 0) continue;
    listeners.push({
      name,
      value: {
        name,
        address: socketAddress(port),
        listener_filters: [{ name: TLS_INSPECTOR_FILTER, typed_config: { "@type": TLS_INSPECTOR_TYPE_URL } }],
        filter_chains: chains,
      },
    });
  }
  const http = backends.filter((b) => b.port === 80);
  for (const b of http) {
    // Host routing cannot also match on the client address; refuse rather than widen access.
    if (b.sourcePrefixRanges.length > 0) {
      problems.error(
        fields.backend(b, "sourcePrefixRanges"),
        "InconsistentConfig",
        `backend "${b.name}": source prefix ranges are not supported on the HTTP listener`,
      );
    }
  }
  if (http.length > 0) listeners.push({ name: HTTP_LISTENER_NAME, value: httpListener() });
  const served: readonly number[] = [80, ...TLS_LISTENERS.map((l) => l.port)];
  for (const b of backends) {
    if (!served.includes(b.port)) {
      problems.error(
        fields.backend(b, "port"),
        "InconsistentConfig",
        `backend "${b.name}": no listener on port ${String(b.port)}`,
      );
    }
  }
  return sortByKey(listeners, (l) => l.name).map((l) => l.value);
}

function socketAddress(port: number): Address {
  return { socket_address: { address: BIND_ADDRESS, port_value: port } };
}

/**
 * Chains rendered without a problem, by backend: the model keeps an unchanged hosted cluster's
 * Backend objects, so a change to one worker of a 50,000-worker VLAN renders (and the cache
 * encodes) only that cluster's chains. A chain with problems is rendered again each time: its
 * field paths depend on the backend's position in the proxy.
 */
const rendered = new WeakMap<Backend, FilterChain>();

function tlsChain(b: Backend, problems: ObjectProblems, fields: ProxyFields): FilterChain {
  const kept = rendered.get(b);
  if (kept !== undefined) return kept;
  const serverNames = [...new Set(b.serverNames)].sort(compareText);
  const { ranges, clean } = sourceRanges(b, problems, fields);
  // Every chain on 443/6443 is TLS passthrough, the source-matched kubernetes-service chain too
  // (the original's test expects transport_protocol: tls there): a plain-TCP client matches nothing.
  const match: FilterChainMatch = {
    ...(serverNames.length > 0 ? { server_names: serverNames } : {}),
    transport_protocol: "tls",
    ...(ranges.length > 0 ? { source_prefix_ranges: ranges } : {}),
  };
  const chain: FilterChain = {
    name: b.name,
    filter_chain_match: match,
    filters: [
      {
        name: TCP_PROXY_FILTER,
        typed_config: { "@type": TCP_PROXY_TYPE_URL, stat_prefix: statPrefix(b.name), cluster: b.upstream },
      },
    ],
  };
  if (clean) rendered.set(b, chain);
  return chain;
}

/**
 * CidrRange JSON for the backend's source ranges, deduplicated, sorted by address then length;
 * `clean` when none was refused.
 */
function sourceRanges(
  b: Backend,
  problems: ObjectProblems,
  fields: ProxyFields,
): { ranges: CidrRange[]; clean: boolean } {
  let clean = true;
  const parsed = new Map<string, { network: number; prefix: number }>();
  for (const [k, text] of b.sourcePrefixRanges.entries()) {
    const bare = parseIPv4(text);
    const c = bare !== undefined ? { network: bare, prefix: 32 } : parseCidr(text);
    if (!c) {
      clean = false;
      problems.error(
        fields.backend(b, `sourcePrefixRanges[${String(k)}]`),
        "InconsistentConfig",
        `backend "${b.name}": source prefix range "${text}" is not an IPv4 CIDR`,
      );
      continue;
    }
    parsed.set(`${c.network}/${c.prefix}`, { network: c.network, prefix: c.prefix });
  }
  const ranges = [...parsed.values()]
    .sort((x, y) => x.network - y.network || x.prefix - y.prefix)
    .map((c) => ({ address_prefix: formatIPv4(c.network), prefix_len: c.prefix }));
  return { ranges, clean };
}

/** Stats prefix from a backend name: "." separates stat name segments, so keep to [A-Za-z0-9_-]. */
function statPrefix(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

function httpListener(): Listener {
  return {
    name: HTTP_LISTENER_NAME,
    address: socketAddress(80),
    filter_chains: [
      {
        name: HTTP_LISTENER_NAME,
        filters: [
          {
            name: HTTP_CONNECTION_MANAGER_FILTER,
            typed_config: {
              "@type": HTTP_CONNECTION_MANAGER_TYPE_URL,
              stat_prefix: HTTP_LISTENER_NAME,
              rds: { config_source: adsConfigSource(), route_config_name: HTTP_ROUTE_CONFIG_NAME },
              // The router behind the VIP speaks HTTP with its clients: WebSocket upgrades pass.
              upgrade_configs: [{ upgrade_type: "websocket" }],
              http_filters: [{ name: ROUTER_FILTER, typed_config: { "@type": ROUTER_TYPE_URL } }],
            },
          },
        ],
      },
    ],
  };
}
