// oooi.debug.v1.DebugService: connected nodes with per-type sync state, a node's configuration as
// JSON, and the push history with its latencies; read from the xDS status record.
import {
  status as GrpcStatus,
  type sendUnaryData,
  type Server,
  type ServerUnaryCall,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { SnapshotCache } from "../cache/cache.js";
import { clientKey, isProbe } from "../client-status.js";
import { nearestName } from "../../api/validate.js";
import { cacheVersions, typeFacts, typeHealth, type HealthState } from "../health.js";
import type {
  HeldResource,
  NackRecord,
  NodeStatus,
  PushRecord,
  StreamConfig,
  StreamStatus,
  TypeStatus,
  XdsProtocol,
  XdsStatusView,
} from "../client-status.js";
import { introspectionProtos } from "./protos.js";
import { duration, reportedTypes, syncState, timestamp, typeStatusOf, type SyncState } from "./state.js";
import { LOADER_VALUE_KEYS, structFromJson, type StructObject } from "../resource/struct.js";

type Time = { seconds: number; nanos: number };

/** oooi.debug.v1.SyncStatus names. */
export type SyncStatusName = `SYNC_STATUS_${SyncState}` | "SYNC_STATUS_UNSPECIFIED";
/** oooi.debug.v1.Health names. */
export type HealthName = `HEALTH_${HealthState}` | "HEALTH_UNSPECIFIED";
/** oooi.debug.v1.Protocol names. */
export type ProtocolName = "PROTOCOL_SOTW" | "PROTOCOL_DELTA" | "PROTOCOL_UNSPECIFIED";

/** oooi.debug.v1.Nack. */
export interface NackMessage {
  version: string;
  nonce: string;
  time: Time | null;
  code: number;
  message: string;
  repeats: number;
}
/** oooi.debug.v1.TypeState. */
export interface TypeStateMessage {
  type_url: string;
  status: SyncStatusName;
  sent_version: string;
  sent_time: Time | null;
  acked_version: string;
  acked_time: Time | null;
  last_nack: NackMessage | null;
  sent_resources: number;
  acked_resources: number;
  health: HealthName;
  current_version: string;
  behind_reason: string;
}
/** oooi.debug.v1.Stream. */
export interface StreamMessage {
  stream_id: string;
  peer: string;
  protocol: ProtocolName;
  service: string;
  connected_time: Time | null;
  types: TypeStateMessage[];
}
/** oooi.debug.v1.Node. */
export interface NodeMessage {
  id: string;
  cluster: string;
  user_agent: string;
  streams: StreamMessage[];
  last_seen_time: Time | null;
  types: TypeStateMessage[];
  unknown_group: boolean;
  nearest_group: string;
  gone_time: Time | null;
  probe: boolean;
}
/** oooi.debug.v1.Resource. */
export interface ResourceMessage {
  name: string;
  version: string;
  config: StructObject | null;
}
/** oooi.debug.v1.TypeConfig. */
export interface TypeConfigMessage {
  stream_id: string;
  state: TypeStateMessage | null;
  acked: ResourceMessage[];
  sent: ResourceMessage[];
}
/** oooi.debug.v1.Push. */
export interface PushMessage {
  stream_id: string;
  node_id: string;
  cluster: string;
  type_url: string;
  protocol: ProtocolName;
  version: string;
  nonce: string;
  cause: "PUSH_CAUSE_CHANGE" | "PUSH_CAUSE_SUBSCRIPTION" | "PUSH_CAUSE_UNSPECIFIED";
  change_time: Time | null;
  sent_time: Time | null;
  ack_time: Time | null;
  nack_time: Time | null;
  change_to_sent: Time | null;
  change_to_ack: Time | null;
  resources: number;
  removed: number;
  bytes: number;
}

/** oooi.debug.v1.ListNodesRequest. */
export interface ListNodesRequest {
  cluster?: string;
  include_disconnected?: boolean;
}
/** oooi.debug.v1.GetNodeConfigRequest. */
export interface GetNodeConfigRequest {
  node_id?: string;
  type_urls?: string[];
}
/** oooi.debug.v1.PushHistoryRequest. */
export interface PushHistoryRequest {
  node_id?: string;
  cluster?: string;
  type_url?: string;
  limit?: number;
}

/** oooi.debug.v1.ListFleetRequest. */
export interface ListFleetRequest {
  cluster?: string;
}
/** oooi.debug.v1.FleetTypeState. */
export interface FleetTypeStateMessage {
  type_url: string;
  acked_version: string;
  nack_version: string;
  nack_message: string;
}
/** oooi.debug.v1.FleetNode. */
export interface FleetNodeMessage {
  id: string;
  cluster: string;
  replica: string;
  user_agent: string;
  types: FleetTypeStateMessage[];
}
/** oooi.debug.v1.Replica. */
export interface ReplicaMessage {
  name: string;
  live: boolean;
  nodes: number;
}
/** oooi.debug.v1.ListFleetResponse. */
export interface ListFleetResponse {
  replica: string;
  replicas: ReplicaMessage[];
  nodes: FleetNodeMessage[];
}

/**
 * The operator's fleet as one replica sees it (src/operator/status/fleet.ts's FleetReports has this
 * shape); declared here so the xDS layer imports nothing from the operator.
 */
export interface FleetSource {
  /** This replica's identity. */
  readonly replica: string;
  nodes(): readonly {
    readonly id: string;
    readonly group: string;
    readonly replica: string;
    readonly userAgent: string;
    readonly types: readonly {
      readonly typeUrl: string;
      readonly acked?: string;
      readonly nack?: { readonly version: string; readonly message: string };
    }[];
  }[];
  replicas(): readonly { readonly replica: string; readonly live: boolean; readonly nodes: number }[];
}

/** Which oooi a server is (GetVersion), given by the process that starts it. */
export interface ServerVersion {
  readonly version: string;
  /** "serve" or "operator". */
  readonly command: string;
  /** Process start, ms since the epoch. */
  readonly startedMs: number;
}

/** oooi.debug.v1.GetVersionResponse. */
export interface GetVersionResponse {
  version: string;
  command: string;
  start_time: Time | null;
  runtime: string;
}

/** Answers the debug service's questions from the status record (and the fleet, on an operator). */
export class DebugReporter {
  /**
   * @param fleet read on every ListFleet: the operator creates its fleet after the gRPC server
   *   started, and `oooi serve` has none (undefined).
   */
  constructor(
    private readonly view: XdsStatusView,
    private readonly cache: SnapshotCache,
    private readonly fleet: () => FleetSource | undefined = () => undefined,
    private readonly server?: ServerVersion,
  ) {}

  /** GetVersion: which oooi answers; the version is empty when the process did not say. */
  version(): GetVersionResponse {
    return {
      version: this.server?.version ?? "",
      command: this.server?.command ?? "",
      start_time: this.server === undefined ? null : timestamp(this.server.startedMs),
      runtime: `node ${process.version}`,
    };
  }

  /** ListFleet: every node of the fleet with its replica; empty off an operator. */
  listFleet(req: ListFleetRequest): ListFleetResponse {
    const fleet = this.fleet();
    if (fleet === undefined) return { replica: "", replicas: [], nodes: [] };
    const nodes = fleet
      .nodes()
      .filter((n) => !req.cluster || n.group === req.cluster)
      .map((n) => ({
        id: n.id,
        cluster: n.group,
        replica: n.replica,
        user_agent: n.userAgent,
        types: n.types.map((t) => ({
          type_url: t.typeUrl,
          acked_version: t.acked ?? "",
          nack_version: t.nack?.version ?? "",
          nack_message: t.nack?.message ?? "",
        })),
      }));
    const replicas = fleet.replicas().map((r) => ({ name: r.replica, live: r.live, nodes: r.nodes }));
    return { replica: fleet.replica, replicas, nodes };
  }

  /** ListNodes: nodes sorted by id, with their open streams. */
  listNodes(req: ListNodesRequest): { nodes: NodeMessage[] } {
    const streams = this.#streamsByNode();
    const nodes = this.view
      .nodes()
      .filter(
        (n) =>
          (req.include_disconnected === true || n.connectedStreams > 0) &&
          (!req.cluster || n.node.cluster === req.cluster),
      )
      .map((n) => this.#node(n, streams.get(clientKey(n.identity, n.node)) ?? []));
    return { nodes };
  }

  /** GetNodeConfig; undefined for a node never seen (or forgotten). */
  nodeConfig(req: GetNodeConfigRequest): { node: NodeMessage; configs: TypeConfigMessage[] } | undefined {
    const n = this.view.node(req.node_id ?? "");
    if (!n) return undefined;
    const streams = this.#streamsByNode().get(clientKey(n.identity, n.node)) ?? [];
    const only = new Set(req.type_urls ?? []);
    const configs: TypeConfigMessage[] = [];
    for (const s of streams) {
      for (const t of reportedTypes(this.view, this.cache, s)) {
        if (only.size > 0 && !only.has(t)) continue;
        const held = this.view.streamConfig(s.streamId, t) ?? { acked: [], sent: [] };
        configs.push({
          stream_id: s.streamId,
          state: this.#typeState(s, typeStatusOf(s, t), held),
          acked: resources(held.acked),
          sent: resources(held.sent),
        });
      }
    }
    return { node: this.#node(n, streams), configs };
  }

  /** PushHistory: matching pushes of served types, oldest first, at most `limit` of the newest. */
  pushHistory(req: PushHistoryRequest): { pushes: PushMessage[] } {
    const matching = this.view
      .history()
      .filter(
        (p) =>
          this.cache.typeSpec(p.typeUrl) !== undefined &&
          (!req.node_id || p.nodeId === req.node_id) &&
          (!req.cluster || p.group === req.cluster) &&
          (!req.type_url || p.typeUrl === req.type_url),
      );
    const limit = req.limit ?? 0;
    return { pushes: (limit > 0 ? matching.slice(-limit) : matching).map(push) };
  }

  #streamsByNode(): Map<string, StreamStatus[]> {
    const out = new Map<string, StreamStatus[]>();
    for (const s of this.view.streams()) {
      const key = clientKey(s.identity, s.node);
      const list = out.get(key) ?? [];
      list.push(s);
      out.set(key, list);
    }
    return out;
  }

  #node(n: NodeStatus, streams: readonly StreamStatus[]): NodeMessage {
    return {
      id: n.node.id,
      cluster: n.node.cluster,
      user_agent: n.node.userAgent,
      streams: streams.map((s) => ({
        stream_id: s.streamId,
        peer: s.peer,
        protocol: protocolName(s.protocol),
        service: s.service,
        connected_time: timestamp(s.connectedAt),
        types: reportedTypes(this.view, this.cache, s).map((t) =>
          this.#typeState(s, typeStatusOf(s, t), this.view.streamConfig(s.streamId, t)),
        ),
      })),
      last_seen_time: timestamp(n.lastSeen),
      types: n.types
        .filter((t) => this.cache.typeSpec(t.typeUrl) !== undefined)
        .map((t) => this.#typeState(n, t, this.#newestHeld(streams, t.typeUrl))),
      ...unknownGroup(n.node.cluster, this.cache.groups()),
      gone_time: n.connectedStreams > 0 ? null : timestamp(n.lastSeen),
      probe: isProbe(n.node),
    };
  }

  /** A type's state on `owner` (a stream or node), judged against its group's current version. */
  #typeState(
    owner: { readonly node: { readonly cluster: string }; readonly types: readonly TypeStatus[] },
    t: TypeStatus,
    held: StreamConfig | undefined,
  ): TypeStateMessage {
    const nacked = owner.types.some((x) => x.lastNack !== undefined && x.lastNack.nonce === x.lastSent?.nonce);
    const health = typeHealth(typeFacts(t), cacheVersions(this.cache)(owner.node.cluster)?.get(t.typeUrl), nacked);
    return {
      ...typeState(t, held),
      health: `HEALTH_${health.state}`,
      current_version: health.current ?? "",
      behind_reason: health.reason ?? "",
    };
  }

  /** What the node holds of `typeUrl` on its newest stream that was sent the type. */
  #newestHeld(streams: readonly StreamStatus[], typeUrl: string): StreamConfig | undefined {
    const carrying = streams.filter((s) => typeStatusOf(s, typeUrl).lastSent !== undefined);
    const newest = carrying.reduce<StreamStatus | undefined>(
      (best, s) => (best === undefined || s.connectedAt >= best.connectedAt ? s : best),
      undefined,
    );
    return newest && this.view.streamConfig(newest.streamId, typeUrl);
  }
}

function protocolName(p: XdsProtocol): ProtocolName {
  return p === "sotw" ? "PROTOCOL_SOTW" : "PROTOCOL_DELTA";
}

function nack(n: NackRecord | undefined): NackMessage | null {
  return n
    ? {
        version: n.version,
        nonce: n.nonce,
        time: timestamp(n.at),
        code: n.code,
        message: n.message,
        repeats: n.repeats,
      }
    : null;
}

function unknownGroup(group: string, known: readonly string[]): { unknown_group: boolean; nearest_group: string } {
  return known.includes(group)
    ? { unknown_group: false, nearest_group: "" }
    : { unknown_group: true, nearest_group: nearestName(group, known) ?? "" };
}

/** A type's CSDS-rule state; `held` (what the client holds of it) gives the resource counts, 0 without. */
function typeState(
  t: TypeStatus,
  held: StreamConfig | undefined,
): Omit<TypeStateMessage, "health" | "current_version" | "behind_reason"> {
  return {
    type_url: t.typeUrl,
    status: `SYNC_STATUS_${syncState(t)}`,
    sent_version: t.lastSent?.version ?? "",
    sent_time: t.lastSent ? timestamp(t.lastSent.at) : null,
    acked_version: t.lastAcked?.version ?? "",
    acked_time: t.lastAcked ? timestamp(t.lastAcked.at) : null,
    last_nack: nack(t.lastNack),
    sent_resources: held?.sent.length ?? 0,
    acked_resources: held?.acked.length ?? 0,
  };
}

/** Resources sorted by name. */
function resources(list: readonly HeldResource[]): ResourceMessage[] {
  return [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(resource);
}

function resource(r: HeldResource): ResourceMessage {
  return {
    name: r.name,
    version: r.version,
    config: r.resource === undefined ? null : structFromJson(r.resource, "config", LOADER_VALUE_KEYS),
  };
}

function push(p: PushRecord): PushMessage {
  return {
    stream_id: p.streamId,
    node_id: p.nodeId,
    cluster: p.group,
    type_url: p.typeUrl,
    protocol: protocolName(p.protocol),
    version: p.version,
    nonce: p.nonce,
    cause: p.cause === "change" ? "PUSH_CAUSE_CHANGE" : "PUSH_CAUSE_SUBSCRIPTION",
    change_time: timestamp(p.changeAt),
    sent_time: timestamp(p.sentAt),
    ack_time: p.ackAt === undefined ? null : timestamp(p.ackAt),
    nack_time: p.nackAt === undefined ? null : timestamp(p.nackAt),
    change_to_sent: duration(p.sentAt - p.changeAt),
    change_to_ack: p.ackAt === undefined ? null : duration(p.ackAt - p.changeAt),
    resources: p.resources,
    removed: p.removed,
    bytes: p.bytes,
  };
}

/** Mounts oooi.debug.v1.DebugService on `server`. */
export function addDebugService(
  server: Server,
  view: XdsStatusView,
  cache: SnapshotCache,
  fleet?: () => FleetSource | undefined,
  version?: ServerVersion,
): DebugReporter {
  const reporter = new DebugReporter(view, cache, fleet, version);
  const unary =
    <Req>(fn: (req: Req) => object | undefined, notFound: (req: Req) => string) =>
    (call: ServerUnaryCall<Req, unknown>, callback: sendUnaryData<unknown>): void => {
      try {
        const res = fn(call.request);
        if (res === undefined) callback({ code: GrpcStatus.NOT_FOUND, details: notFound(call.request) });
        else callback(null, res);
      } catch (e) {
        callback({ code: GrpcStatus.INTERNAL, details: (e as Error).message });
      }
    };
  const impl: UntypedServiceImplementation = {
    ListNodes: unary(
      (req: ListNodesRequest) => reporter.listNodes(req),
      () => "",
    ),
    GetNodeConfig: unary(
      (req: GetNodeConfigRequest) => reporter.nodeConfig(req),
      (req) => `node ${JSON.stringify(req.node_id ?? "")} is not known to this xDS server`,
    ),
    PushHistory: unary(
      (req: PushHistoryRequest) => reporter.pushHistory(req),
      () => "",
    ),
    ListFleet: unary(
      (req: ListFleetRequest) => reporter.listFleet(req),
      () => "",
    ),
    GetVersion: unary(
      () => reporter.version(),
      () => "",
    ),
  };
  server.addService(introspectionProtos().debug, impl);
  return reporter;
}
