// The xDS server's default limits, apart from the server so the command line can show them in
// --help without loading gRPC.

/** Default of --xds-max-connections. */
export const DEFAULT_MAX_CONNECTIONS = 4096;

/**
 * Default of --xds-max-names-per-stream: resource names one stream may subscribe to over all its
 * types. An Envoy names its EDS clusters and route tables (listeners and clusters come by
 * wildcard): far fewer than this even for a large node group.
 */
export const DEFAULT_MAX_NAMES_PER_STREAM = 10_000;

/** Default maximum stream age: 30 minutes, as Istio does, so load rebalances after rollouts. */
export const DEFAULT_MAX_STREAM_AGE_MS = 30 * 60 * 1000;

/** Default of XdsEngineOptions.maxWarnedNodes. */
export const DEFAULT_MAX_WARNED_NODES = 1024;
