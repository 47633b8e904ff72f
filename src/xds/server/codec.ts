// DiscoveryRequest decoding with the real Envoy types, and DiscoveryResponse assembly from
// pre-encoded resource entries: only the small header (version, type URL, nonce) is encoded per
// stream; the resources are the cache's bytes, copied as they are.
import type protobuf from "protobufjs";
import { messageType } from "../resource/protos.js";
import type { NodeIdentity } from "../client-status.js";

/** What the server reads from a state-of-the-world DiscoveryRequest. */
export interface SotwRequest {
  readonly versionInfo: string;
  readonly node: NodeIdentity | undefined;
  readonly resourceNames: readonly string[];
  readonly typeUrl: string;
  readonly responseNonce: string;
  readonly errorDetail: ErrorDetail | undefined;
}

/** What the server reads from a DeltaDiscoveryRequest. */
export interface DeltaRequest {
  readonly node: NodeIdentity | undefined;
  readonly typeUrl: string;
  readonly subscribe: readonly string[];
  readonly unsubscribe: readonly string[];
  readonly initialVersions: ReadonlyMap<string, string>;
  readonly responseNonce: string;
  readonly errorDetail: ErrorDetail | undefined;
}

/** google.rpc.Status of a NACK. */
export interface ErrorDetail {
  readonly code: number;
  readonly message: string;
}

/**
 * A serialized-on-demand response: byte chunks concatenated by the gRPC serializer, once however
 * many streams write it (the streams of a node group that send the same thing share one, see
 * shared.ts).
 */
export class WireResponse {
  #bytes: Buffer | undefined;

  constructor(
    readonly parts: readonly Uint8Array[],
    readonly byteLength: number,
  ) {}

  /** The message bytes: one copy of the chunks, made on the first call. */
  bytes(): Buffer {
    return (this.#bytes ??= Buffer.concat(this.parts, this.byteLength));
  }
}

/** Identifies this control plane in every response (`control_plane.identifier`). */
export const CONTROL_PLANE_ID = "oooi";

const TO_OBJECT: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: false,
  arrays: true,
  objects: true,
};

let types:
  { sotwReq: protobuf.Type; deltaReq: protobuf.Type; sotwRes: protobuf.Type; deltaRes: protobuf.Type } | undefined;

function discoveryTypes(): NonNullable<typeof types> {
  return (types ??= {
    sotwReq: messageType("envoy.service.discovery.v3.DiscoveryRequest"),
    deltaReq: messageType("envoy.service.discovery.v3.DeltaDiscoveryRequest"),
    sotwRes: messageType("envoy.service.discovery.v3.DiscoveryResponse"),
    deltaRes: messageType("envoy.service.discovery.v3.DeltaDiscoveryResponse"),
  });
}

type Loose = Record<string, unknown>;

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function nodeOf(v: unknown): NodeIdentity | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const n = v as Loose;
  return { id: str(n["id"]), cluster: str(n["cluster"]), userAgent: str(n["user_agent_name"]) };
}

function errorOf(v: unknown): ErrorDetail | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const e = v as Loose;
  return { code: typeof e["code"] === "number" ? e["code"] : 0, message: str(e["message"]) };
}

/** Decodes a DiscoveryRequest (throws on malformed bytes; gRPC then fails the call). */
export function decodeSotwRequest(bytes: Uint8Array): SotwRequest {
  const t = discoveryTypes().sotwReq;
  const m: Loose = t.toObject(t.decode(bytes), TO_OBJECT);
  return {
    versionInfo: str(m["version_info"]),
    node: nodeOf(m["node"]),
    resourceNames: strings(m["resource_names"]),
    typeUrl: str(m["type_url"]),
    responseNonce: str(m["response_nonce"]),
    errorDetail: errorOf(m["error_detail"]),
  };
}

/** Decodes a DeltaDiscoveryRequest. */
export function decodeDeltaRequest(bytes: Uint8Array): DeltaRequest {
  const t = discoveryTypes().deltaReq;
  const m: Loose = t.toObject(t.decode(bytes), TO_OBJECT);
  const initial = m["initial_resource_versions"];
  const versions = new Map<string, string>();
  if (typeof initial === "object" && initial !== null) {
    for (const [k, v] of Object.entries(initial as Loose)) versions.set(k, str(v));
  }
  return {
    node: nodeOf(m["node"]),
    typeUrl: str(m["type_url"]),
    subscribe: strings(m["resource_names_subscribe"]),
    unsubscribe: strings(m["resource_names_unsubscribe"]),
    initialVersions: versions,
    responseNonce: str(m["response_nonce"]),
    errorDetail: errorOf(m["error_detail"]),
  };
}

function assemble(header: Uint8Array, entries: readonly Uint8Array[]): WireResponse {
  let byteLength = header.length;
  for (const e of entries) byteLength += e.length;
  return new WireResponse([header, ...entries], byteLength);
}

/** A DiscoveryResponse whose `resources` are cache entries (CachedResource.sotwEntry). */
export function sotwResponse(
  versionInfo: string,
  typeUrl: string,
  nonce: string,
  entries: readonly Uint8Array[],
): WireResponse {
  const t = discoveryTypes().sotwRes;
  const header = t
    .encode(
      t.fromObject({
        version_info: versionInfo,
        type_url: typeUrl,
        nonce,
        control_plane: { identifier: CONTROL_PLANE_ID },
      }),
    )
    .finish();
  return assemble(header, entries);
}

/** A DeltaDiscoveryResponse whose `resources` are cache entries (CachedResource.deltaEntry). */
export function deltaResponse(
  systemVersionInfo: string,
  typeUrl: string,
  nonce: string,
  entries: readonly Uint8Array[],
  removed: readonly string[],
): WireResponse {
  const t = discoveryTypes().deltaRes;
  const header = t
    .encode(
      t.fromObject({
        system_version_info: systemVersionInfo,
        type_url: typeUrl,
        nonce,
        removed_resources: removed,
        control_plane: { identifier: CONTROL_PLANE_ID },
      }),
    )
    .finish();
  return assemble(header, entries);
}

/** The gRPC response serializer (grpc-js copies the result behind its 5-byte message prefix). */
export function serializeResponse(response: WireResponse): Buffer {
  return response.bytes();
}
