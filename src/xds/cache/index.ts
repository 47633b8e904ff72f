// The xDS snapshot cache: producers set snapshots per node group, the ADS server reads them.
export { SnapshotCache } from "./cache.js";
export type { SetSnapshotResult, SnapshotCacheOptions, SnapshotListener } from "./cache.js";
export { CachedResource, contentHash, setVersion } from "./snapshot.js";
export type { Snapshot, TypeSnapshot } from "./snapshot.js";
export { envoyTypeSpecs } from "./type-specs.js";
