// The operator: reconcile of children and workloads, status, finalizers, leader election, probes.
export { runOperator, LEASE_NAME } from "./run.js";
export type { OperatorLogger, RunOperatorOptions, RunningOperator } from "./run.js";
export { NO_DATA_PLANE } from "./dataplane.js";
export type { DataPlaneView } from "./dataplane.js";
export { OPERATOR_METRICS } from "./metrics.js";
export type { Labels, MetricDefinition, MetricName, OperatorMetrics } from "./metrics.js";
export { DEFAULT_LEASE_TIMING, LeaderElector } from "./leader.js";
export type { LeaseTiming, LeaderElectorOptions } from "./leader.js";
export type { HttpListen } from "./http.js";
