// The operator: reconcile of children and workloads, status, finalizers, leader election, probes.
export { runOperator } from "./process/run.js";
export { LEASE_NAME } from "./process/writers.js";
export type { RunOperatorOptions, RunningOperator } from "./process/options.js";
export { NO_DATA_PLANE } from "./status/dataplane.js";
export type { DataPlaneView } from "./status/dataplane.js";
export { OPERATOR_METRICS } from "./process/metrics.js";
export type { Labels, MetricDefinition, MetricName, OperatorMetrics } from "./process/metrics.js";
export { DEFAULT_LEASE_TIMING, LeaderElector } from "./process/leader.js";
export type { LeaseTiming, LeaderElectorOptions } from "./process/leader.js";
export type { HttpListen } from "./process/http.js";
