// The client side of a state-of-the-world ADS stream for one resource type: DiscoveryRequests
// encoded and DiscoveryResponses decoded with the real Envoy types. Resources stay packed here;
// the agent unpacks them, so a bad resource becomes a NACK instead of a broken stream.
import { messageType } from "../../xds/resource/protos.js";

/** gRPC path of the aggregated discovery service's SotW method. */
export const ADS_SOTW_METHOD = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

/** google.rpc.Code INVALID_ARGUMENT: what a NACK's error_detail carries, as Envoy's does. */
export const INVALID_ARGUMENT = 3;

/** The identity an xDS client declares in its first request (envoy.config.core.v3.Node). */
export interface NodeInit {
  readonly id: string;
  /** The node group whose snapshot is served. */
  readonly cluster: string;
  readonly user_agent_name: string;
}

/** A DiscoveryRequest as the agent writes it (proto field names). */
export interface DiscoveryRequestInit {
  readonly version_info: string;
  readonly node?: NodeInit;
  readonly resource_names: readonly string[];
  readonly type_url: string;
  readonly response_nonce: string;
  readonly error_detail?: { readonly code: number; readonly message: string };
}

/** One google.protobuf.Any of a response, still packed. */
export interface PackedResource {
  readonly typeUrl: string;
  readonly value: Uint8Array;
}

/** A DiscoveryResponse with its resources still packed. */
export interface DiscoveryResponseIn {
  readonly versionInfo: string;
  readonly typeUrl: string;
  readonly nonce: string;
  readonly resources: readonly PackedResource[];
}

/** Serializes a DiscoveryRequest. */
export function encodeDiscoveryRequest(req: DiscoveryRequestInit): Buffer {
  const t = messageType("envoy.service.discovery.v3.DiscoveryRequest");
  return Buffer.from(t.encode(t.fromObject(req as unknown as Record<string, unknown>)).finish());
}

/** Parses a DiscoveryResponse (throws on malformed bytes: gRPC then fails the stream). */
export function decodeDiscoveryResponse(bytes: Buffer): DiscoveryResponseIn {
  const t = messageType("envoy.service.discovery.v3.DiscoveryResponse");
  const m = t.decode(bytes) as unknown as {
    version_info?: string;
    type_url?: string;
    nonce?: string;
    resources?: { type_url?: string; value?: Uint8Array }[];
  };
  return {
    versionInfo: m.version_info ?? "",
    typeUrl: m.type_url ?? "",
    nonce: m.nonce ?? "",
    resources: (m.resources ?? []).map((a) => ({ typeUrl: a.type_url ?? "", value: a.value ?? new Uint8Array() })),
  };
}
