// Kubernetes watches → Observable<Observed> (ClusterState plus the raw objects the operator compares against).
export { ClusterWatcher } from "./cluster.js";
export type { ClusterWatcherOptions } from "./cluster.js";
export { buildObserved } from "./observed.js";
export type { Observed, RawObjects } from "./observed.js";
export { Reflector, keyOf } from "./reflector.js";
export type { ReflectorOptions, RestartReason } from "./reflector.js";
export { WATCHED_RESOURCES, apiPrefix, collectionPath } from "./resources.js";
export type { ResourceName, WatchedResource } from "./resources.js";
export { KubeApiError, KubeRest, statusCode } from "../../kube/rest.js";
export type { KubeObject, KubeMetadata, KubeRequest, KubeRestOptions, WatchEvent } from "../../kube/rest.js";
export { SYSTEM_CLOCK, sleep } from "../../util/clock.js";
export type { Clock, TimerHandle } from "../../util/clock.js";
