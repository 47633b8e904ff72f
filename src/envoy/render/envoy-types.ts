// The Envoy v3 fields the renderers set, as proto3 JSON (snake_case): a misspelt or misplaced
// field fails at compile time instead of at encode time. Only what oooi sets; every field follows
// the API reference, e.g. https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/cluster/v3/cluster.proto
// (test/envoy/render-types.test.ts proves the compiler refuses a misspelling).

/** config.core.v3.ConfigSource: always the ADS stream, v3 resources. */
export interface ConfigSource {
  readonly ads: Record<string, never>;
  readonly resource_api_version: "V3";
}

/** config.core.v3.Address with a socket_address. */
export interface Address {
  readonly socket_address: { readonly address: string; readonly port_value: number };
}

interface ClusterCommon {
  readonly name: string;
  /** google.protobuf.Duration in JSON form ("5s"). */
  readonly connect_timeout?: string;
}

/** config.cluster.v3.Cluster fed over ADS (EDS). */
export interface EdsCluster extends ClusterCommon {
  readonly type: "EDS";
  readonly eds_cluster_config: { readonly eds_config: ConfigSource };
}

/**
 * config.cluster.v3.Cluster that resolves one hostname itself (LOGICAL_DNS): its load_assignment
 * holds exactly one endpoint, the name and port
 * (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/service_discovery#logical-dns).
 */
export interface LogicalDnsCluster extends ClusterCommon {
  readonly type: "LOGICAL_DNS";
  readonly dns_lookup_family: "V4_ONLY";
  readonly load_assignment: ClusterLoadAssignment;
}

/** config.cluster.v3.Cluster, as oooi renders it. */
export type Cluster = EdsCluster | LogicalDnsCluster;

/** config.endpoint.v3.ClusterLoadAssignment. */
export interface ClusterLoadAssignment {
  readonly cluster_name: string;
  readonly endpoints?: readonly {
    readonly lb_endpoints: readonly { readonly endpoint: { readonly address: Address } }[];
  }[];
}

/** config.core.v3.CidrRange. */
export interface CidrRange {
  readonly address_prefix: string;
  readonly prefix_len: number;
}

/** extensions.filters.network.tcp_proxy.v3.TcpProxy, packed in an Any. */
export interface TcpProxyConfig {
  readonly "@type": string;
  readonly stat_prefix: string;
  readonly cluster: string;
}

/** extensions.filters.network.http_connection_manager.v3.HttpConnectionManager, packed in an Any. */
export interface HttpConnectionManagerConfig {
  readonly "@type": string;
  readonly stat_prefix: string;
  readonly rds: { readonly config_source: ConfigSource; readonly route_config_name: string };
  readonly upgrade_configs?: readonly { readonly upgrade_type: string }[];
  readonly http_filters: readonly { readonly name: string; readonly typed_config: { readonly "@type": string } }[];
}

/** config.listener.v3.Filter. */
export interface NetworkFilter {
  readonly name: string;
  readonly typed_config: TcpProxyConfig | HttpConnectionManagerConfig;
}

/** config.listener.v3.FilterChainMatch. */
export interface FilterChainMatch {
  readonly server_names?: readonly string[];
  readonly transport_protocol?: "tls";
  readonly source_prefix_ranges?: readonly CidrRange[];
}

/** config.listener.v3.FilterChain. */
export interface FilterChain {
  readonly name: string;
  readonly filter_chain_match?: FilterChainMatch;
  readonly filters: readonly NetworkFilter[];
}

/** config.listener.v3.Listener. */
export interface Listener {
  readonly name: string;
  readonly address: Address;
  readonly listener_filters?: readonly { readonly name: string; readonly typed_config: { readonly "@type": string } }[];
  readonly filter_chains: readonly FilterChain[];
  /** Picks a chain by name; Envoy then ignores every filter_chain_match. */
  readonly filter_chain_matcher?: Matcher;
}

/** xds.type.matcher.v3.Matcher, as oooi renders it: always a tree, on one input. */
export interface Matcher {
  readonly matcher_tree: {
    readonly input: { readonly name: string; readonly typed_config: { readonly "@type": string } };
    readonly exact_match_map?: { readonly map: Readonly<Record<string, OnMatch>> };
    readonly custom_match?: {
      readonly name: string;
      readonly typed_config: ServerNameMatcherConfig | IpMatcherConfig;
    };
  };
  readonly on_no_match?: OnMatch;
}

/** xds.type.matcher.v3.Matcher.OnMatch: a nested matcher, or the action naming a filter chain. */
export type OnMatch =
  { readonly matcher: Matcher } | { readonly action: { readonly name: string; readonly typed_config: StringValue } };

/** google.protobuf.StringValue, packed in an Any. */
export interface StringValue {
  readonly "@type": string;
  readonly value: string;
}

/** xds.type.matcher.v3.ServerNameMatcher, packed in an Any. */
export interface ServerNameMatcherConfig {
  readonly "@type": string;
  readonly domain_matchers: readonly { readonly domains: readonly string[]; readonly on_match: OnMatch }[];
}

/** xds.type.matcher.v3.IPMatcher, packed in an Any. */
export interface IpMatcherConfig {
  readonly "@type": string;
  readonly range_matchers: readonly { readonly ranges: readonly CidrRange[]; readonly on_match: OnMatch }[];
}

/** config.route.v3.RouteConfiguration (prefix routes to one cluster per virtual host). */
export interface RouteConfiguration {
  readonly name: string;
  readonly ignore_port_in_host_matching?: boolean;
  readonly virtual_hosts: readonly {
    readonly name: string;
    readonly domains: readonly string[];
    readonly routes: readonly {
      readonly match: { readonly prefix: string };
      readonly route: { readonly cluster: string; readonly timeout?: string };
    }[];
  }[];
}
