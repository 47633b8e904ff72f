// The xDS snapshot cache: producers set snapshots per node group, the ADS server reads them.
export { SnapshotCache, envoyInput } from "./cache.js";
export type {
  ResourceInput,
  SetSnapshotResult,
  SnapshotCacheOptions,
  SnapshotInput,
  SnapshotListener,
} from "./cache.js";
export { CachedResource, contentHash, setVersion } from "./snapshot.js";
export type { Snapshot, TypeSnapshot } from "./snapshot.js";
export { ENVOY_TYPE_ORDER, envoyTypeSpecs } from "./types.js";
export type { ResourceTypeSpec } from "./types.js";
export { NO_REFERENCES, referencesOf } from "./refs.js";
export type { References } from "./refs.js";
