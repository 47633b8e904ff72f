// Header-only decoding of discovery responses for the benchmark's clients: version, type URL,
// nonce, resource count and (when asked) resource names, without unpacking resources. Keeps the
// load generator cheap so 1,000 streams fit beside the server on two cores; field numbers are read
// from the real Envoy types rather than written down.
import protobuf from "protobufjs";
import { messageType } from "../../src/xds/resource/protos.js";

/** What a benchmark client needs from one DiscoveryResponse or DeltaDiscoveryResponse. */
export interface ResponseHead {
  /** version_info (SotW) or system_version_info (Delta). */
  readonly version: string;
  readonly typeUrl: string;
  readonly nonce: string;
  /** Entries in `resources`. */
  readonly count: number;
  /** Resource names (SotW: the name inside each resource; Delta: Resource.name), when asked for. */
  readonly names: readonly string[];
  /** Delta removed_resources. */
  readonly removed: readonly string[];
}

function fieldId(type: string, field: string): number {
  const f = messageType(type).fields[field];
  if (f === undefined) throw new Error(`${type} has no field ${field}`);
  return f.id;
}

const LENGTH_DELIMITED = 2;

let ids: ReturnType<typeof loadIds> | undefined;

function loadIds(): {
  version: number;
  resources: number;
  typeUrl: number;
  nonce: number;
  deltaVersion: number;
  deltaResources: number;
  deltaTypeUrl: number;
  deltaNonce: number;
  removed: number;
  resourceName: number;
  anyValue: number;
  resourceNameField: number;
} {
  const sotw = "envoy.service.discovery.v3.DiscoveryResponse";
  const delta = "envoy.service.discovery.v3.DeltaDiscoveryResponse";
  const cluster = fieldId("envoy.config.cluster.v3.Cluster", "name");
  // Every resource type a benchmark client names (Cluster, Listener) keeps its name in the same field.
  if (fieldId("envoy.config.listener.v3.Listener", "name") !== cluster) throw new Error("name fields differ");
  return {
    version: fieldId(sotw, "version_info"),
    resources: fieldId(sotw, "resources"),
    typeUrl: fieldId(sotw, "type_url"),
    nonce: fieldId(sotw, "nonce"),
    deltaVersion: fieldId(delta, "system_version_info"),
    deltaResources: fieldId(delta, "resources"),
    deltaTypeUrl: fieldId(delta, "type_url"),
    deltaNonce: fieldId(delta, "nonce"),
    removed: fieldId(delta, "removed_resources"),
    resourceName: fieldId("envoy.service.discovery.v3.Resource", "name"),
    anyValue: fieldId("google.protobuf.Any", "value"),
    resourceNameField: cluster,
  };
}

/** The first string field `field` of a message, or "". */
function stringField(bytes: Uint8Array, field: number): string {
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === field && (tag & 7) === LENGTH_DELIMITED) return r.string();
    r.skipType(tag & 7);
  }
  return "";
}

/** The first bytes field `field` of a message. */
function bytesField(bytes: Uint8Array, field: number): Uint8Array | undefined {
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === field && (tag & 7) === LENGTH_DELIMITED) return r.bytes();
    r.skipType(tag & 7);
  }
  return undefined;
}

/** Decodes the head of a SotW (`delta` false) or Delta response. */
export function decodeHead(bytes: Uint8Array, delta: boolean, wantNames: boolean): ResponseHead {
  const f = (ids ??= loadIds());
  const want = delta
    ? { version: f.deltaVersion, resources: f.deltaResources, typeUrl: f.deltaTypeUrl, nonce: f.deltaNonce }
    : { version: f.version, resources: f.resources, typeUrl: f.typeUrl, nonce: f.nonce };
  let version = "";
  let typeUrl = "";
  let nonce = "";
  let count = 0;
  const names: string[] = [];
  const removed: string[] = [];
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire !== LENGTH_DELIMITED) {
      r.skipType(wire);
      continue;
    }
    if (field === want.version) version = r.string();
    else if (field === want.typeUrl) typeUrl = r.string();
    else if (field === want.nonce) nonce = r.string();
    else if (delta && field === f.removed) removed.push(r.string());
    else if (field === want.resources) {
      count += 1;
      if (!wantNames) {
        r.skipType(wire);
        continue;
      }
      const entry = r.bytes();
      if (delta) {
        names.push(stringField(entry, f.resourceName));
      } else {
        const value = bytesField(entry, f.anyValue);
        names.push(value === undefined ? "" : stringField(value, f.resourceNameField));
      }
    } else r.skipType(wire);
  }
  return { version, typeUrl, nonce, count, names, removed };
}
