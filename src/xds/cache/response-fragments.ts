// Protobuf wire fragments for xDS responses. A response is assembled by concatenating encoded
// fields (protobuf allows fields in any order), so every resource is encoded once into the bytes
// of a `resources` entry and those same bytes are copied into every stream's response.
import protobuf from "protobufjs";

const LENGTH_DELIMITED = 2;

/** google.protobuf.Any field numbers (type_url = 1, value = 2). */
const ANY_TYPE_URL = 1;
const ANY_VALUE = 2;

/** DiscoveryResponse.resources and DeltaDiscoveryResponse.resources share field number 2. */
export const RESPONSE_RESOURCES_FIELD = 2;

/** envoy.service.discovery.v3.Resource field numbers used by Delta responses. */
const RESOURCE_VERSION = 1;
const RESOURCE_ANY = 2;
const RESOURCE_NAME = 3;

/** Bytes of a google.protobuf.Any packing `value` (already-encoded message bytes) as `typeUrl`. */
export function encodeAny(typeUrl: string, value: Uint8Array): Uint8Array {
  return protobuf.Writer.create()
    .uint32((ANY_TYPE_URL << 3) | LENGTH_DELIMITED)
    .string(typeUrl)
    .uint32((ANY_VALUE << 3) | LENGTH_DELIMITED)
    .bytes(value)
    .finish();
}

/** A length-delimited field `field` holding `bytes` (tag + length + bytes). */
export function lengthDelimitedField(field: number, bytes: Uint8Array): Uint8Array {
  return protobuf.Writer.create()
    .uint32((field << 3) | LENGTH_DELIMITED)
    .bytes(bytes)
    .finish();
}

/** Bytes of a Delta `Resource {name, version, resource: Any}`. */
export function encodeDeltaResource(name: string, version: string, any: Uint8Array): Uint8Array {
  return protobuf.Writer.create()
    .uint32((RESOURCE_VERSION << 3) | LENGTH_DELIMITED)
    .string(version)
    .uint32((RESOURCE_ANY << 3) | LENGTH_DELIMITED)
    .bytes(any)
    .uint32((RESOURCE_NAME << 3) | LENGTH_DELIMITED)
    .string(name)
    .finish();
}
