// Prometheus metrics of an oooi process: the registry and its xDS metrics, and the scrape handler.
export { LATENCY_BUCKETS, Metrics } from "./metrics.js";
export type { CatalogueEntry, CatalogueRecorder, Labels, MetricsOptions } from "./metrics.js";
export { attachXdsMetrics } from "./xds.js";
export type { XdsMetricsOptions } from "./xds.js";
export { metricsHandler } from "./http.js";
