// Resource types the cache can hold: the four Envoy types, and any type registered later (such as
// oooi.dhcp.v1.KeaConfig) with its own encoder.
import { encodeResource } from "../protos.js";
import { asString, get } from "../render/json.js";
import { encodeListener, type EncodedParts, type PartedEncoding } from "./splice.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../render/type-urls.js";

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

/** Order in which ADS pushes types within one change: make before break (docs/xds-protocol.md#rule-14). */
export const ENVOY_TYPE_ORDER: readonly string[] = [
  CLUSTER_TYPE_URL,
  ENDPOINT_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
];

function envoySpec(typeUrl: string, nameField: string, legacyWildcard: boolean): ResourceTypeSpec {
  return {
    encode: (resource) => encodeResource(typeUrl, resource),
    nameOf: (resource) => asString(get(resource, nameField)),
    legacyWildcard,
  };
}

/** Specs of the Envoy LDS, CDS, EDS and RDS resource types. */
export function envoyTypeSpecs(): Map<string, ResourceTypeSpec> {
  return new Map([
    [LISTENER_TYPE_URL, { ...envoySpec(LISTENER_TYPE_URL, "name", true), encodeReusing: encodeListener }],
    [CLUSTER_TYPE_URL, envoySpec(CLUSTER_TYPE_URL, "name", true)],
    [ENDPOINT_TYPE_URL, envoySpec(ENDPOINT_TYPE_URL, "cluster_name", false)],
    [ROUTE_TYPE_URL, envoySpec(ROUTE_TYPE_URL, "name", false)],
  ]);
}
