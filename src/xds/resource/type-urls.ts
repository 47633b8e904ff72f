// Type URLs of the Envoy v3 messages oooi renders or speaks, as they appear in Any and in xDS
// requests. Kept apart from protos.ts so pure renderers can name types without loading protos.

/** Prefix of every type URL in xDS Any values and DiscoveryRequest.type_url. */
export const TYPE_URL_PREFIX = "type.googleapis.com/";

/** LDS resource: envoy.config.listener.v3.Listener. */
export const LISTENER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.listener.v3.Listener`;
/** CDS resource: envoy.config.cluster.v3.Cluster. */
export const CLUSTER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.cluster.v3.Cluster`;
/** EDS resource: envoy.config.endpoint.v3.ClusterLoadAssignment. */
export const ENDPOINT_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`;
/** RDS resource: envoy.config.route.v3.RouteConfiguration. */
export const ROUTE_TYPE_URL = `${TYPE_URL_PREFIX}envoy.config.route.v3.RouteConfiguration`;

/** typed_config of the TCP proxy network filter. */
export const TCP_PROXY_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`;
/** typed_config of the HTTP connection manager network filter. */
export const HTTP_CONNECTION_MANAGER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;
/** typed_config of the TLS inspector listener filter (fills in SNI and transport protocol). */
export const TLS_INSPECTOR_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`;
/** typed_config of the terminal HTTP router filter. */
export const ROUTER_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.router.v3.Router`;

/** filter_chain_matcher inputs (envoy.extensions.matching.common_inputs.network.v3): what a connection offers. */
export const TRANSPORT_PROTOCOL_INPUT_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.matching.common_inputs.network.v3.TransportProtocolInput`;
export const SERVER_NAME_INPUT_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.matching.common_inputs.network.v3.ServerNameInput`;
export const SOURCE_IP_INPUT_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.matching.common_inputs.network.v3.SourceIPInput`;
export const DESTINATION_PORT_INPUT_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.matching.common_inputs.network.v3.DestinationPortInput`;
/** Custom matchers of the unified matcher API: server names with wildcards, and CIDR ranges (a trie). */
export const SERVER_NAME_MATCHER_TYPE_URL = `${TYPE_URL_PREFIX}xds.type.matcher.v3.ServerNameMatcher`;
export const IP_MATCHER_TYPE_URL = `${TYPE_URL_PREFIX}xds.type.matcher.v3.IPMatcher`;
/** A filter_chain_matcher action: the name of the filter chain, as a google.protobuf.StringValue. */
export const STRING_VALUE_TYPE_URL = `${TYPE_URL_PREFIX}google.protobuf.StringValue`;

/** State-of-the-world ADS request (envoy.service.discovery.v3.DiscoveryRequest). */
export const DISCOVERY_REQUEST_TYPE_URL = `${TYPE_URL_PREFIX}envoy.service.discovery.v3.DiscoveryRequest`;
/** State-of-the-world ADS response. */
export const DISCOVERY_RESPONSE_TYPE_URL = `${TYPE_URL_PREFIX}envoy.service.discovery.v3.DiscoveryResponse`;
/** Incremental (delta) ADS request. */
export const DELTA_DISCOVERY_REQUEST_TYPE_URL = `${TYPE_URL_PREFIX}envoy.service.discovery.v3.DeltaDiscoveryRequest`;
/** Incremental (delta) ADS response. */
export const DELTA_DISCOVERY_RESPONSE_TYPE_URL = `${TYPE_URL_PREFIX}envoy.service.discovery.v3.DeltaDiscoveryResponse`;
