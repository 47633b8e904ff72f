// What the ADS server knows about its clients, for introspection (CSDS, the oooi.debug.v1
// service, Prometheus metrics, ProxyServer status). The server writes through the `record*`
// methods; everyone else reads through XdsStatusView and listens to its events. Bounded: open
// streams, a capped set of nodes (disconnected ones are evicted oldest first) and a fixed-size
// push history — never unbounded history.
//
// A client is (verified identity, node group, node id), never its node.id alone: node ids are
// chosen by the client, so keyed by them one tenant could claim another's id and take over its
// status. The identity is what the mTLS certificate proves (server/authz.ts); without
// client certificates every client's identity is NO_IDENTITY and only the group and id tell them apart.
import { EventEmitter } from "node:events";
import { SILENT_LOGGER, type Logger } from "../util/logger.js";

/** xDS transport variant of a stream: state of the world or incremental. */
export type XdsProtocol = "sotw" | "delta";

/** A response the server sent: version_info (SotW) or system_version_info (Delta), its nonce and time. */
export interface SentRecord {
  readonly version: string;
  readonly nonce: string;
  /** Clock time (ms). */
  readonly at: number;
  /** Resources in the response (Delta: changed ones only). */
  readonly resources: number;
  /** Names in Delta `removed_resources` (0 for SotW). */
  readonly removed: number;
  /** Serialized DiscoveryResponse size. */
  readonly bytes: number;
}

/** An ACK: the client applied the response with this nonce and version. */
export interface AckRecord {
  readonly version: string;
  readonly nonce: string;
  readonly at: number;
}

/** A NACK: the client rejected the response with this nonce (the version we sent) and said why. */
export interface NackRecord {
  /** Version of the rejected response. */
  readonly version: string;
  readonly nonce: string;
  readonly at: number;
  /** google.rpc.Status code and message from the request's error_detail (Envoy's error text). */
  readonly code: number;
  readonly message: string;
  /** How many NACKs in a row carried the same version and message. */
  readonly repeats: number;
}

/** Per type URL sync state of a stream or node. CSDS: NOT_SENT without lastSent, SYNCED when
 * lastAcked.nonce equals lastSent.nonce, ERROR when lastNack.nonce equals it, STALE otherwise. */
export interface TypeStatus {
  readonly typeUrl: string;
  readonly lastSent: SentRecord | undefined;
  readonly lastAcked: AckRecord | undefined;
  readonly lastNack: NackRecord | undefined;
}

/** The identity a stream declared in its first request (Envoy `node`). */
export interface NodeIdentity {
  /** `node.id`: the Envoy pod. */
  readonly id: string;
  /** `node.cluster`: the node group whose snapshot is served (`<namespace>/<ProxyServer>`). */
  readonly cluster: string;
  /** `node.user_agent_name`, e.g. "envoy" or "grpc-node-js". */
  readonly userAgent: string;
}

/**
 * `node.user_agent_name` of `oooi verify`'s snapshot fetch (verify/fetch-snapshot.ts): a probe, not a
 * data plane. The health view lists it as such while it runs and forgets it when its stream closes.
 */
export const PROBE_USER_AGENT = "oooi-verify";

/** Whether `node` is a probe rather than a data plane. */
export function isProbe(node: NodeIdentity): boolean {
  return node.userAgent === PROBE_USER_AGENT;
}

/** The identity of every client on a port without client certificates (plaintext or TLS only). */
export const NO_IDENTITY = "none";

/** The key of one client: its verified identity, its node group and its node id (see the file comment). */
export function clientKey(identity: string, node: NodeIdentity): string {
  // JSON: a separator character could occur in the client-chosen strings.
  return JSON.stringify([identity, node.cluster, node.id]);
}

/** One open xDS stream. */
export interface StreamStatus {
  readonly streamId: string;
  readonly node: NodeIdentity;
  /** The verified identity of its client (its certificate's URIs), or NO_IDENTITY. */
  readonly identity: string;
  /** Remote address as gRPC reports it ("ipv4:127.0.0.1:52011"). */
  readonly peer: string;
  readonly protocol: XdsProtocol;
  /** "ads" for the aggregated service, else the per-type service ("lds", "cds", "eds", "rds"). */
  readonly service: string;
  /** Clock time (ms) the stream's first request arrived. */
  readonly connectedAt: number;
  readonly types: readonly TypeStatus[];
}

/** A node (identity, `node.cluster`, `node.id`) across its streams, kept after it disconnects (bounded). */
export interface NodeStatus {
  readonly node: NodeIdentity;
  /** The verified identity of its client, or NO_IDENTITY. */
  readonly identity: string;
  /** Open streams of this node right now. */
  readonly connectedStreams: number;
  /** Clock time (ms) of its latest request or disconnect. */
  readonly lastSeen: number;
  /** Latest sent / ACKed / NACKed per type over all its streams; the last ACKed version survives reconnects. */
  readonly types: readonly TypeStatus[];
}

/** One response the server pushed and what became of it. */
export interface PushRecord {
  readonly streamId: string;
  readonly nodeId: string;
  readonly group: string;
  readonly typeUrl: string;
  readonly protocol: XdsProtocol;
  readonly version: string;
  readonly nonce: string;
  /** "change": the snapshot changed; "subscription": the client asked for something new. */
  readonly cause: "change" | "subscription";
  /** Clock time (ms) of the change (snapshot type change, or the subscribing request). */
  readonly changeAt: number;
  readonly sentAt: number;
  /** Set when the client ACKs this response: change → ACK latency is ackAt - changeAt. */
  readonly ackAt: number | undefined;
  readonly nackAt: number | undefined;
  readonly resources: number;
  readonly removed: number;
  readonly bytes: number;
}

/** A resource as a client holds it, for config dumps. */
export interface HeldResource {
  readonly name: string;
  readonly version: string;
  /** proto3 JSON as the cache was given it; undefined when only the version is known (Delta reconnect). */
  readonly resource: object | undefined;
}

/** What a stream's client holds of one type: as last acknowledged, and as last sent. */
export interface StreamConfig {
  readonly acked: readonly HeldResource[];
  readonly sent: readonly HeldResource[];
}

/** Events for metrics. Payloads are the records above, read-only. */
export interface XdsStatusEvents {
  "stream-open": [StreamStatus];
  "stream-close": [StreamStatus];
  push: [PushRecord];
  ack: [PushRecord];
  /** Emitted for every NACK; `first` is false for a repeat of the node's previous NACK. */
  nack: [PushRecord, NackRecord, { first: boolean }];
}

/** The read side: what introspection and metrics may use. */
export interface XdsStatusView {
  /** Open streams, oldest first. */
  streams(): StreamStatus[];
  /** One open stream. */
  stream(streamId: string): StreamStatus | undefined;
  /** The resources a stream's client holds of one type (for CSDS config dumps). */
  streamConfig(streamId: string, typeUrl: string): StreamConfig | undefined;
  /** Known nodes (connected or recently seen), by node id, then group and identity. */
  nodes(): NodeStatus[];
  /** The most recently connected node of this id (and group, when given). */
  node(nodeId: string, group?: string): NodeStatus | undefined;
  /** Recent pushes, oldest first (bounded ring). */
  history(): PushRecord[];
  on<K extends keyof XdsStatusEvents>(event: K, listener: (...args: XdsStatusEvents[K]) => void): unknown;
  off<K extends keyof XdsStatusEvents>(event: K, listener: (...args: XdsStatusEvents[K]) => void): unknown;
}

/** Options of the status recorder. */
export interface XdsStatusOptions {
  readonly logger?: Logger;
  /** Push history entries kept (default 1024). */
  readonly historySize?: number;
  /** Disconnected nodes remembered (default 4096). */
  readonly maxIdleNodes?: number;
}

interface MutableType {
  typeUrl: string;
  lastSent: SentRecord | undefined;
  lastAcked: AckRecord | undefined;
  lastNack: NackRecord | undefined;
}

interface StreamEntry {
  readonly streamId: string;
  readonly node: NodeIdentity;
  readonly identity: string;
  /** clientKey of identity and node. */
  readonly key: string;
  readonly peer: string;
  readonly protocol: XdsProtocol;
  readonly service: string;
  readonly connectedAt: number;
  types: readonly MutableType[];
  readonly config: (typeUrl: string) => StreamConfig | undefined;
}

interface NodeEntry {
  node: NodeIdentity;
  readonly identity: string;
  connectedStreams: number;
  lastSeen: number;
  types: readonly MutableType[];
  /**
   * Its NodeStatus while none of the above moved: a reader (every reconcile pass) gets the very
   * object of a node that did not change. Writers reach an entry only through XdsStatus.#changing, which drops it.
   */
  view: NodeStatus | undefined;
}

type MutablePush = { -readonly [K in keyof PushRecord]: PushRecord[K] };

/** The server's record of streams, nodes and pushes; read it through XdsStatusView. */
export class XdsStatus extends EventEmitter<XdsStatusEvents> implements XdsStatusView {
  readonly #streams = new Map<string, StreamEntry>();
  /** By clientKey, least recently connected first. */
  readonly #nodes = new Map<string, NodeEntry>();
  /** #nodes in nodes() order; undefined once a node came or went (a node's own change keeps its place). */
  #sorted: NodeEntry[] | undefined;
  /** Nodes in #nodes with no stream connected, kept as they change: a close costs no walk of every node. */
  #idleNodes = 0;
  readonly #history: MutablePush[] = [];
  #historyStart = 0;
  readonly #logger: Logger;
  readonly #historySize: number;
  readonly #maxIdleNodes: number;

  constructor(options: XdsStatusOptions = {}) {
    super();
    this.#logger = options.logger ?? SILENT_LOGGER;
    this.#historySize = Math.max(1, options.historySize ?? 1024);
    this.#maxIdleNodes = Math.max(0, options.maxIdleNodes ?? 4096);
  }

  streams(): StreamStatus[] {
    return [...this.#streams.values()].map(streamView);
  }

  stream(streamId: string): StreamStatus | undefined {
    const s = this.#streams.get(streamId);
    return s && streamView(s);
  }

  streamConfig(streamId: string, typeUrl: string): StreamConfig | undefined {
    return this.#streams.get(streamId)?.config(typeUrl);
  }

  nodes(): NodeStatus[] {
    this.#sorted ??= [...this.#nodes.values()].sort(nodeOrder);
    return this.#sorted.map(nodeView);
  }

  node(nodeId: string, group?: string): NodeStatus | undefined {
    let found: NodeEntry | undefined;
    for (const n of this.#nodes.values())
      if (n.node.id === nodeId && (group === undefined || n.node.cluster === group)) found = n;
    return found && nodeView(found);
  }

  /** The entry of `key` for writing: its view goes, so the next read sees the write. */
  #changing(key: string): NodeEntry | undefined {
    const n = this.#nodes.get(key);
    if (n !== undefined) n.view = undefined;
    return n;
  }

  #forget(key: string): void {
    this.#nodes.delete(key);
    this.#sorted = undefined;
  }

  history(): PushRecord[] {
    return [...this.#history.slice(this.#historyStart), ...this.#history.slice(0, this.#historyStart)].map((r) => ({
      ...r,
    }));
  }

  // ------------------------------------------------------------------ written by the server

  /**
   * A stream declared its node. `config` reads what its client holds (for streamConfig). Without
   * an identity, the client's is NO_IDENTITY.
   */
  recordOpen(
    opened: Omit<StreamStatus, "types" | "identity"> & { readonly identity?: string },
    config: (typeUrl: string) => StreamConfig | undefined,
  ): void {
    const info = { ...opened, identity: opened.identity ?? NO_IDENTITY };
    const key = clientKey(info.identity, info.node);
    const entry: StreamEntry = { ...info, key, types: [], config };
    this.#streams.set(info.streamId, entry);
    const node = this.#changing(key);
    if (node) {
      node.node = info.node;
      if (node.connectedStreams === 0) this.#idleNodes -= 1;
      node.connectedStreams += 1;
      node.lastSeen = info.connectedAt;
      this.#nodes.delete(key); // re-insert: map order is least recently connected first
      this.#nodes.set(key, node);
    } else {
      this.#nodes.set(key, {
        node: info.node,
        identity: info.identity,
        connectedStreams: 1,
        lastSeen: info.connectedAt,
        types: [],
        view: undefined,
      });
      this.#sorted = undefined;
    }
    this.emit("stream-open", streamView(entry));
  }

  /** A response went out; returns its push record (ACK/NACK update it). */
  recordSent(
    streamId: string,
    group: string,
    typeUrl: string,
    sent: SentRecord,
    cause: PushRecord["cause"],
    changeAt: number,
  ): PushRecord | undefined {
    const s = this.#streams.get(streamId);
    if (!s) return undefined;
    typeOf(s, typeUrl).lastSent = sent;
    const n = this.#changing(s.key);
    if (n) typeOf(n, typeUrl).lastSent = sent;
    const record: MutablePush = {
      streamId,
      nodeId: s.node.id,
      group,
      typeUrl,
      protocol: s.protocol,
      version: sent.version,
      nonce: sent.nonce,
      cause,
      changeAt,
      sentAt: sent.at,
      ackAt: undefined,
      nackAt: undefined,
      resources: sent.resources,
      removed: sent.removed,
      bytes: sent.bytes,
    };
    if (this.#history.length < this.#historySize) {
      this.#history.push(record);
    } else {
      this.#history[this.#historyStart] = record;
      this.#historyStart = (this.#historyStart + 1) % this.#historySize;
    }
    this.emit("push", record);
    return record;
  }

  /** The client ACKed the response of `push`. */
  recordAck(streamId: string, push: PushRecord | undefined, ack: AckRecord, typeUrl: string): void {
    const s = this.#streams.get(streamId);
    if (!s) return;
    typeOf(s, typeUrl).lastAcked = ack;
    const n = this.#changing(s.key);
    if (n) {
      typeOf(n, typeUrl).lastAcked = ack;
      n.lastSeen = ack.at;
    }
    if (push) {
      (push as MutablePush).ackAt = ack.at;
      this.emit("ack", push);
    }
  }

  /** The client NACKed the response of `push`; logged once per distinct (node, type, version, message). */
  recordNack(streamId: string, push: PushRecord | undefined, nack: Omit<NackRecord, "repeats">, typeUrl: string): void {
    const s = this.#streams.get(streamId);
    if (!s) return;
    const n = this.#changing(s.key);
    const previous = n?.types.find((t) => t.typeUrl === typeUrl)?.lastNack;
    const first = previous?.version !== nack.version || previous.message !== nack.message;
    const record: NackRecord = { ...nack, repeats: first ? 1 : previous.repeats + 1 };
    typeOf(s, typeUrl).lastNack = record;
    if (n) {
      typeOf(n, typeUrl).lastNack = record;
      n.lastSeen = nack.at;
    }
    const context = {
      node: s.node.id,
      group: s.node.cluster,
      typeUrl,
      version: nack.version,
      nonce: nack.nonce,
      error: nack.message,
    };
    if (first) this.#logger.warn(context, "xDS client rejected configuration (NACK)");
    else this.#logger.debug({ ...context, repeats: record.repeats }, "xDS client repeated its NACK");
    if (push) {
      (push as MutablePush).nackAt = nack.at;
      this.emit("nack", push, record, { first });
    }
  }

  /** A stream ended. */
  recordClose(streamId: string, at: number): void {
    const s = this.#streams.get(streamId);
    if (!s) return;
    this.#streams.delete(streamId);
    const n = this.#changing(s.key);
    if (n && n.connectedStreams > 0) {
      n.connectedStreams -= 1;
      n.lastSeen = at;
      // A probe that finished is not a client that went away: nothing of it stays listed.
      if (n.connectedStreams === 0 && isProbe(n.node)) this.#forget(s.key);
      else if (n.connectedStreams === 0) this.#idleNodes += 1;
    }
    this.#evictIdleNodes();
    this.emit("stream-close", streamView(s));
  }

  #evictIdleNodes(): void {
    if (this.#idleNodes <= this.#maxIdleNodes) return;
    for (const [id, n] of this.#nodes) {
      if (this.#idleNodes <= this.#maxIdleNodes) break;
      if (n.connectedStreams === 0) {
        this.#forget(id);
        this.#idleNodes -= 1;
      }
    }
  }
}

// Per stream and node a short array, not a Map: a client uses a handful of types, and a Map with
// its table per idle stream is a measurable part of its heap. Grown by copying, so it
// is exactly as long as needed (a push or a spread reserves room for more).
function typeOf(owner: { types: readonly MutableType[] }, typeUrl: string): MutableType {
  let t = owner.types.find((x) => x.typeUrl === typeUrl);
  if (!t) {
    t = { typeUrl, lastSent: undefined, lastAcked: undefined, lastNack: undefined };
    owner.types = owner.types.concat([t]);
  }
  return t;
}

function typeViews(types: readonly MutableType[]): TypeStatus[] {
  return [...types].sort((a, b) => (a.typeUrl < b.typeUrl ? -1 : 1)).map((t) => ({ ...t }));
}

function streamView(s: StreamEntry): StreamStatus {
  return {
    streamId: s.streamId,
    node: s.node,
    identity: s.identity,
    peer: s.peer,
    protocol: s.protocol,
    service: s.service,
    connectedAt: s.connectedAt,
    types: typeViews(s.types),
  };
}

/** The node's view, made once per change: its types are copies, so a view never moves under its reader. */
function nodeView(n: NodeEntry): NodeStatus {
  n.view ??= {
    node: n.node,
    identity: n.identity,
    connectedStreams: n.connectedStreams,
    lastSeen: n.lastSeen,
    types: typeViews(n.types),
  };
  return n.view;
}

/** nodes() order: by node id, then group, then identity — together an entry's key, so no two tie. */
function nodeOrder(a: NodeEntry, b: NodeEntry): number {
  const [x, y] = [
    [a.node.id, a.node.cluster, a.identity],
    [b.node.id, b.node.cluster, b.identity],
  ];
  const i = x.findIndex((v, j) => v !== y[j]);
  return i === -1 ? 0 : (x[i] ?? "") < (y[i] ?? "") ? -1 : 1;
}
