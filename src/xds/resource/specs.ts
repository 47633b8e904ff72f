// The vocabulary the snapshot cache and the ADS server share about resource types: how a type is
// encoded and named, what a producer hands over, and the order types are pushed in. Any type can be
// registered (the four Envoy types, oooi.dhcp.v1.KeaConfig); nothing here knows an Envoy rule.
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "./type-urls.js";

/** One resource handed to the cache: its xDS name and its proto3 JSON (no top-level "@type"). */
export interface ResourceInput {
  readonly name: string;
  readonly resource: object;
}

/** Resources of a snapshot by type URL; a registered type that is absent has no resources. */
export type SnapshotInput = ReadonlyMap<string, readonly ResourceInput[]>;

/**
 * What a resource set must satisfy before it is served, beyond encoding: the errors that refuse
 * it (empty when it may be served). The composition root injects Envoy's rules here.
 */
export type SnapshotCheck = (input: SnapshotInput) => readonly string[];

/** Encoded pieces of a resource by content digest (FilterChain entries of a Listener). */
export type EncodedParts = ReadonlyMap<string, Uint8Array>;

/** A resource's protobuf bytes and, for the next version, its pieces as [start, end) of them. */
export interface PartedEncoding {
  readonly bytes: Uint8Array;
  readonly parts: ReadonlyMap<string, readonly [number, number]>;
}

/** How the cache encodes and names resources of one type URL. */
export interface ResourceTypeSpec {
  /** proto3 JSON → the message's protobuf bytes (not an Any); throws on an invalid resource. */
  readonly encode: (resource: object) => Uint8Array;
  /**
   * encode, reusing encoded pieces of the resource's previous version (a big Listener's filter
   * chains); the same bytes as encode. Types without it are encoded whole.
   */
  readonly encodeReusing?: (resource: object, previous: EncodedParts | undefined) => PartedEncoding;
  /** The name a resource declares for itself (checked against the snapshot's name), if any. */
  readonly nameOf?: (resource: object) => string | undefined;
  /**
   * Whether an empty first subscription means "everything" (legacy wildcard). True for LDS and
   * CDS; false for EDS and RDS, which clients always subscribe by name.
   */
  readonly legacyWildcard: boolean;
}

/** The field each Envoy resource type names itself by (the name Envoy subscribes to). */
export const ENVOY_NAME_FIELD: ReadonlyMap<string, string> = new Map([
  [LISTENER_TYPE_URL, "name"],
  [CLUSTER_TYPE_URL, "name"],
  [ENDPOINT_TYPE_URL, "cluster_name"],
  [ROUTE_TYPE_URL, "name"],
]);

/** Order in which ADS pushes types within one change: make before break (docs/xds-protocol.md#rule-14). */
export const ENVOY_TYPE_ORDER: readonly string[] = [
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
];
