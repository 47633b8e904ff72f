// envoy.service.status.v3.ClientStatusDiscoveryService: what every connected node was sent and
// acknowledged, per resource, with the server's sync verdict. One ClientConfig per node (its
// streams together); one GenericXdsConfig per resource, carrying the same Any bytes the cache
// sent, plus one name-less entry for a type that holds no resource so its status stays visible.
import {
  status as GrpcStatus,
  type sendUnaryData,
  type Server,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import protobuf from "protobufjs";
import type { SnapshotCache } from "../cache/cache.js";
import {
  clientKey,
  type HeldResource,
  type NodeIdentity,
  type StreamStatus,
  type TypeStatus,
  type XdsStatusView,
} from "../client-status.js";
import { MatcherError, nodeMatchesAny, type NodeMatcherObject } from "./matchers.js";
import { introspectionProtos } from "./protos.js";
import { reportedTypes, syncState, timestamp, typeStatusOf, type SyncState } from "./state.js";

/** A decoded envoy.service.status.v3.ClientStatusRequest. */
export interface ClientStatusRequest {
  node_matchers?: readonly NodeMatcherObject[];
  exclude_resource_contents?: boolean;
}

/** google.protobuf.Any as proto-loader serializes it. */
export interface AnyObject {
  type_url: string;
  value: Uint8Array;
}

/** admin.v3.ClientResourceStatus of one resource. */
export type ClientResourceStatus = "UNKNOWN" | "REQUESTED" | "DOES_NOT_EXIST" | "ACKED" | "NACKED";

/** One envoy.service.status.v3.ClientConfig.GenericXdsConfig. */
export interface GenericXdsConfig {
  type_url: string;
  name: string;
  version_info: string;
  xds_config?: AnyObject;
  last_updated?: { seconds: number; nanos: number };
  config_status: SyncState;
  client_status: ClientResourceStatus;
  error_state?: {
    failed_configuration?: AnyObject;
    last_update_attempt: { seconds: number; nanos: number };
    details: string;
    version_info: string;
  };
}

/** One envoy.service.status.v3.ClientConfig. */
export interface ClientConfig {
  node: { id: string; cluster: string; user_agent_name: string };
  generic_xds_configs: GenericXdsConfig[];
}

/** Builds CSDS responses from the status record and the cache. */
export class ClientStatusReporter {
  constructor(
    private readonly view: XdsStatusView,
    private readonly cache: SnapshotCache,
  ) {}

  /** The ClientStatusResponse for `request`; throws MatcherError on an unusable matcher. */
  respond(request: ClientStatusRequest): { config: ClientConfig[] } {
    const byNode = new Map<string, { node: NodeIdentity; streams: StreamStatus[] }>();
    for (const s of this.view.streams()) {
      if (!nodeMatchesAny(s.node, request.node_matchers)) continue;
      // One ClientConfig per client (identity, group, id): two identities may declare one node.id.
      const key = clientKey(s.identity, s.node);
      const entry = byNode.get(key) ?? { node: s.node, streams: [] };
      entry.streams.push(s);
      byNode.set(key, entry);
    }
    const contents = request.exclude_resource_contents !== true;
    const config = [...byNode.values()]
      .sort((a, b) => compareNodes(a.node, b.node))
      .map(({ node, streams }) => ({
        node: { id: node.id, cluster: node.cluster, user_agent_name: node.userAgent },
        generic_xds_configs: streams.flatMap((s) =>
          reportedTypes(this.view, this.cache, s).flatMap((t) => this.#typeConfigs(s, typeStatusOf(s, t), contents)),
        ),
      }));
    return { config };
  }

  #typeConfigs(stream: StreamStatus, t: TypeStatus, contents: boolean): GenericXdsConfig[] {
    const state = syncState(t);
    const held = this.view.streamConfig(stream.streamId, t.typeUrl) ?? { acked: [], sent: [] };
    const acked = new Map(held.acked.map((r) => [r.name, r]));
    const sent = new Map(held.sent.map((r) => [r.name, r]));
    const names = [...new Set([...acked.keys(), ...sent.keys()])].sort();
    const nack = t.lastNack;
    const updated = state === "SYNCED" ? t.lastAcked?.at : t.lastSent?.at;
    const base = {
      type_url: t.typeUrl,
      config_status: state,
      ...(updated === undefined ? {} : { last_updated: timestamp(updated) }),
    };
    if (names.length === 0) {
      const version = state === "SYNCED" ? t.lastAcked?.version : t.lastSent?.version;
      return [
        {
          ...base,
          name: "",
          version_info: version ?? "",
          client_status: state === "ERROR" ? "NACKED" : state === "SYNCED" ? "ACKED" : "UNKNOWN",
        },
      ];
    }
    return names.map((name): GenericXdsConfig => {
      const a = acked.get(name);
      const s = sent.get(name);
      const unchanged = a !== undefined && (s === undefined || s.version === a.version);
      const any = (r: HeldResource | undefined): { xds_config?: AnyObject } => {
        const x = contents && r ? this.#any(stream.node.cluster, t.typeUrl, r) : undefined;
        return x ? { xds_config: x } : {};
      };
      if (state === "ERROR" && !unchanged && nack) {
        // The client runs what it acknowledged; the rejected version is the failed configuration.
        const failed = contents && s ? this.#any(stream.node.cluster, t.typeUrl, s) : undefined;
        return {
          ...base,
          name,
          version_info: a ? (t.lastAcked?.version ?? "") : "",
          ...any(a),
          client_status: "NACKED",
          error_state: {
            ...(failed ? { failed_configuration: failed } : {}),
            last_update_attempt: timestamp(nack.at),
            details: nack.message,
            version_info: nack.version,
          },
        };
      }
      if (state === "STALE" && !unchanged) {
        return { ...base, name, version_info: t.lastSent?.version ?? "", ...any(s ?? a), client_status: "UNKNOWN" };
      }
      return { ...base, name, version_info: t.lastAcked?.version ?? "", ...any(a ?? s), client_status: "ACKED" };
    });
  }

  /** The resource as an Any: the cache's bytes when it still holds this content, else re-encoded. */
  #any(group: string, typeUrl: string, r: HeldResource): AnyObject | undefined {
    const cached = this.cache.getSnapshot(group)?.types.get(typeUrl)?.resources.get(r.name);
    if (cached && (cached.resource === r.resource || cached.version === r.version)) return splitAny(cached.any);
    if (r.resource === undefined) return undefined;
    try {
      const spec = this.cache.typeSpec(typeUrl);
      return spec ? { type_url: typeUrl, value: spec.encode(r.resource) } : undefined;
    } catch {
      return undefined;
    }
  }
}

/** google.protobuf.Any bytes → its type_url and value. */
export function splitAny(bytes: Uint8Array): AnyObject {
  const reader = protobuf.Reader.create(bytes);
  let typeUrl = "";
  let value: Uint8Array = new Uint8Array();
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === ((1 << 3) | 2)) typeUrl = reader.string();
    else if (tag === ((2 << 3) | 2)) value = reader.bytes();
    else reader.skipType(tag & 7);
  }
  return { type_url: typeUrl, value };
}

/** Mounts CSDS (FetchClientStatus and StreamClientStatus) on `server`. */
export function addCsds(server: Server, view: XdsStatusView, cache: SnapshotCache): ClientStatusReporter {
  const reporter = new ClientStatusReporter(view, cache);
  const answer = (
    req: ClientStatusRequest,
  ): { ok: true; res: { config: ClientConfig[] } } | { ok: false; code: GrpcStatus; details: string } => {
    try {
      return { ok: true, res: reporter.respond(req) };
    } catch (e) {
      if (e instanceof MatcherError) return { ok: false, code: GrpcStatus.INVALID_ARGUMENT, details: e.message };
      return { ok: false, code: GrpcStatus.INTERNAL, details: (e as Error).message };
    }
  };
  const impl: UntypedServiceImplementation = {
    FetchClientStatus: (call: ServerUnaryCall<ClientStatusRequest, unknown>, callback: sendUnaryData<unknown>) => {
      const r = answer(call.request);
      if (r.ok) callback(null, r.res);
      else callback({ code: r.code, details: r.details });
    },
    StreamClientStatus: (call: ServerDuplexStream<ClientStatusRequest, unknown>) => {
      call.on("data", (req: ClientStatusRequest) => {
        const r = answer(req);
        if (r.ok) call.write(r.res);
        else call.emit("error", { code: r.code, details: r.details });
      });
      call.on("end", () => {
        call.end();
      });
      call.on("error", () => {
        /* the client went away */
      });
    },
  };
  server.addService(introspectionProtos().csds, impl);
  return reporter;
}

function compareNodes(a: NodeIdentity, b: NodeIdentity): number {
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0;
}
