// Client side of the xDS wire: DiscoveryRequests encoded with the real Envoy types, responses
// decoded with them and every resource unpacked from its Any (so a malformed response fails here,
// as it would in Envoy). Types come from ./protos.ts, never from the server's code.
import { decodeToJson, encodeMessage, typeOf } from "./protos.js";

/** A state-of-the-world request as a client writes it. */
export interface SotwRequestInit {
  version_info?: string;
  node?: { id: string; cluster: string; user_agent_name?: string };
  resource_names?: string[];
  type_url: string;
  response_nonce?: string;
  error_detail?: { code: number; message: string };
}

/** An incremental request as a client writes it. */
export interface DeltaRequestInit {
  node?: { id: string; cluster: string; user_agent_name?: string };
  type_url: string;
  resource_names_subscribe?: string[];
  resource_names_unsubscribe?: string[];
  initial_resource_versions?: Record<string, string>;
  response_nonce?: string;
  error_detail?: { code: number; message: string };
}

/** One resource of a response, unpacked. */
export interface DecodedResource {
  /** Delta: Resource.name; SotW: the name the resource declares. */
  readonly name: string;
  /** Delta: Resource.version; SotW: "". */
  readonly version: string;
  readonly typeUrl: string;
  /** Bytes of the google.protobuf.Any as they were on the wire (Any.value for SotW and Delta). */
  readonly value: Uint8Array;
  readonly json: Record<string, unknown>;
}

/** A decoded DiscoveryResponse. */
export interface SotwResponse {
  readonly kind: "sotw";
  readonly versionInfo: string;
  readonly typeUrl: string;
  readonly nonce: string;
  readonly controlPlane: string;
  readonly resources: readonly DecodedResource[];
  readonly bytes: number;
}

/** A decoded DeltaDiscoveryResponse. */
export interface DeltaResponse {
  readonly kind: "delta";
  readonly systemVersionInfo: string;
  readonly typeUrl: string;
  readonly nonce: string;
  readonly resources: readonly DecodedResource[];
  readonly removed: readonly string[];
  readonly bytes: number;
}

const NAME_FIELD: Record<string, string> = {
  "envoy.config.endpoint.v3.ClusterLoadAssignment": "cluster_name",
};

/** The name a resource declares (cluster_name for ClusterLoadAssignment, name otherwise). */
export function declaredName(typeUrl: string, json: Record<string, unknown>): string {
  const field = NAME_FIELD[typeUrl.slice(typeUrl.lastIndexOf("/") + 1)] ?? "name";
  const v = json[field];
  return typeof v === "string" ? v : "";
}

/** Serializes a SotW request. */
export function encodeSotwRequest(req: SotwRequestInit): Buffer {
  return encodeMessage("envoy.service.discovery.v3.DiscoveryRequest", req);
}

/** Serializes a Delta request. */
export function encodeDeltaRequest(req: DeltaRequestInit): Buffer {
  return encodeMessage("envoy.service.discovery.v3.DeltaDiscoveryRequest", req);
}

interface RawAny {
  type_url?: string;
  value?: Uint8Array;
}

function unpack(any: RawAny | undefined, name: string | undefined, version: string): DecodedResource {
  const typeUrl = any?.type_url ?? "";
  const value = any?.value ?? new Uint8Array();
  const json = decodeToJson(typeUrl, value);
  return { name: name ?? declaredName(typeUrl, json), version, typeUrl, value, json };
}

/** Decodes a DiscoveryResponse and every resource in it. */
export function decodeSotwResponse(bytes: Buffer): SotwResponse {
  const t = typeOf("envoy.service.discovery.v3.DiscoveryResponse");
  const m = t.decode(bytes) as unknown as {
    version_info: string;
    type_url: string;
    nonce: string;
    resources: RawAny[];
    control_plane?: { identifier?: string };
  };
  return {
    kind: "sotw",
    versionInfo: m.version_info,
    typeUrl: m.type_url,
    nonce: m.nonce,
    controlPlane: m.control_plane?.identifier ?? "",
    resources: m.resources.map((a) => unpack(a, undefined, "")),
    bytes: bytes.length,
  };
}

/** Decodes a DeltaDiscoveryResponse and every resource in it. */
export function decodeDeltaResponse(bytes: Buffer): DeltaResponse {
  const t = typeOf("envoy.service.discovery.v3.DeltaDiscoveryResponse");
  const m = t.decode(bytes) as unknown as {
    system_version_info: string;
    type_url: string;
    nonce: string;
    removed_resources: string[];
    resources: { name: string; version: string; resource?: RawAny }[];
  };
  return {
    kind: "delta",
    systemVersionInfo: m.system_version_info,
    typeUrl: m.type_url,
    nonce: m.nonce,
    resources: m.resources.map((r) => unpack(r.resource, r.name, r.version)),
    removed: m.removed_resources,
    bytes: bytes.length,
  };
}
