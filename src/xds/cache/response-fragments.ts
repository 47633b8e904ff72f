// Protobuf wire fragments for xDS responses. A response is assembled by concatenating encoded
// fields (protobuf allows fields in any order), so every resource is encoded once, as an Any, and
// those same bytes, between the few bytes that make them a `resources` entry, are copied into every
// stream's response.
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

/** The tag and length that make the `length` bytes after them a length-delimited field `field`. */
function fieldHead(field: number, length: number): Uint8Array {
  return protobuf.Writer.create()
    .uint32((field << 3) | LENGTH_DELIMITED)
    .uint32(length)
    .finish();
}

/** A length-delimited string field. */
function stringField(field: number, value: string): Uint8Array {
  return protobuf.Writer.create()
    .uint32((field << 3) | LENGTH_DELIMITED)
    .string(value)
    .finish();
}

/**
 * A `resources` entry of a DiscoveryResponse holding `any`, as the bytes before it: the entry is
 * [head, any], so a response copies a resource's bytes once, into the message itself.
 */
export function sotwEntryHead(any: Uint8Array): Uint8Array {
  return fieldHead(RESPONSE_RESOURCES_FIELD, any.length);
}

/**
 * A `resources` entry of a DeltaDiscoveryResponse (a `Resource {version, resource: Any, name}`)
 * holding `any`, as the bytes before and after it: the entry is [before, any, after].
 */
export function deltaEntryAround(name: string, version: string, any: Uint8Array): [Uint8Array, Uint8Array] {
  const versionField = stringField(RESOURCE_VERSION, version);
  const anyHead = fieldHead(RESOURCE_ANY, any.length);
  const nameField = stringField(RESOURCE_NAME, name);
  const inner = versionField.length + anyHead.length + any.length + nameField.length;
  return [Buffer.concat([fieldHead(RESPONSE_RESOURCES_FIELD, inner), versionField, anyHead]), nameField];
}
