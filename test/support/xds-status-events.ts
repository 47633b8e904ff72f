// Random sequences of what the ADS server records (a stream opens, a response goes out, the client
// ACKs or NACKs it, the stream closes), played onto an XdsStatus as the server makes the calls: for
// properties of its node views and of what the operator builds from them.
import fc from "fast-check";
import {
  clientKey,
  PROBE_USER_AGENT,
  type NodeIdentity,
  type PushRecord,
  type SentRecord,
  type XdsStatus,
} from "../../src/xds/client-status.js";

/** The clients: two groups, one id in both, one id under two identities, a probe, and a node that reconnects as another agent. */
export const CLIENTS: readonly { readonly identity: string | undefined; readonly node: NodeIdentity }[] = [
  { identity: undefined, node: { id: "a", cluster: "ns/one", userAgent: "envoy" } },
  { identity: undefined, node: { id: "a", cluster: "ns/two", userAgent: "envoy" } },
  { identity: "spiffe://x", node: { id: "b", cluster: "ns/one", userAgent: "envoy" } },
  { identity: "spiffe://y", node: { id: "b", cluster: "ns/one", userAgent: "envoy" } },
  { identity: undefined, node: { id: "c", cluster: "ns/two", userAgent: "envoy" } },
  { identity: undefined, node: { id: "c", cluster: "ns/two", userAgent: "grpc-node-js" } },
  { identity: undefined, node: { id: "p", cluster: "ns/one", userAgent: PROBE_USER_AGENT } },
];

/** One recorder call; streams, clients, types, versions and messages by index. */
export type StatusEvent =
  | { readonly op: "open"; readonly stream: number; readonly client: number }
  | { readonly op: "sent"; readonly stream: number; readonly type: number; readonly version: number }
  | { readonly op: "ack"; readonly stream: number; readonly type: number }
  | { readonly op: "nack"; readonly stream: number; readonly type: number; readonly message: number }
  | { readonly op: "close"; readonly stream: number };

/** Events over `streams` stream ids and `types` types; opens weigh more, so most events find their stream. */
export function statusEventArb(streams: number, types: number): fc.Arbitrary<StatusEvent> {
  const stream = fc.integer({ min: 0, max: streams - 1 });
  const type = fc.integer({ min: 0, max: types - 1 });
  return fc.oneof(
    {
      arbitrary: fc.record({ op: fc.constant("open" as const), stream, client: fc.nat(CLIENTS.length - 1) }),
      weight: 3,
    },
    { arbitrary: fc.record({ op: fc.constant("sent" as const), stream, type, version: fc.nat(2) }), weight: 3 },
    { arbitrary: fc.record({ op: fc.constant("ack" as const), stream, type }), weight: 3 },
    { arbitrary: fc.record({ op: fc.constant("nack" as const), stream, type, message: fc.nat(1) }), weight: 2 },
    { arbitrary: fc.record({ op: fc.constant("close" as const), stream }), weight: 1 },
  );
}

interface OpenStream {
  readonly key: string;
  readonly group: string;
  /** Per type URL, the latest response sent and its push record. */
  readonly sent: Map<string, { readonly record: SentRecord; readonly push: PushRecord | undefined }>;
}

/** Plays events onto one XdsStatus; the same events on two players make the same calls. */
export class StatusPlayer {
  readonly #open = new Map<number, OpenStream>();
  #nonce = 0;

  constructor(
    readonly status: XdsStatus,
    readonly types: readonly string[],
    /** The version a `sent` event sends (its `version` index, for the stream's group). */
    readonly version: (group: string, index: number) => string = (_group, index) => `v${String(index)}`,
  ) {}

  /**
   * Plays `e` at clock time `at`; returns the key (clientKey) of the node it wrote to, undefined when
   * it wrote nothing (an open of an open stream, an answer to nothing sent, a call on a closed stream).
   */
  play(e: StatusEvent, at: number): string | undefined {
    const streamId = `s${String(e.stream)}`;
    const open = this.#open.get(e.stream);
    if (e.op === "open") {
      if (open !== undefined) return undefined;
      const { identity, node } = CLIENTS[e.client] ?? fail(`client ${String(e.client)}`);
      const opened = {
        streamId,
        node,
        peer: "ipv4:127.0.0.1:1",
        protocol: "sotw" as const,
        service: "ads",
        connectedAt: at,
      };
      this.status.recordOpen({ ...opened, ...(identity === undefined ? {} : { identity }) }, () => undefined);
      const key = clientKey(identity ?? "none", node);
      this.#open.set(e.stream, { key, group: node.cluster, sent: new Map() });
      return key;
    }
    if (open === undefined) return undefined;
    if (e.op === "close") {
      this.#open.delete(e.stream);
      this.status.recordClose(streamId, at);
      return open.key;
    }
    const typeUrl = this.types[e.type] ?? fail(`type ${String(e.type)}`);
    if (e.op === "sent") {
      const nonce = `n${String(this.#nonce++)}`;
      const record = { version: this.version(open.group, e.version), nonce, at, resources: 1, removed: 0, bytes: 10 };
      const push = this.status.recordSent(streamId, open.group, typeUrl, record, "change", at);
      open.sent.set(typeUrl, { record, push });
      return open.key;
    }
    const last = open.sent.get(typeUrl);
    if (last === undefined) return undefined;
    const { version, nonce } = last.record;
    if (e.op === "ack") this.status.recordAck(streamId, last.push, { version, nonce, at }, typeUrl);
    else
      this.status.recordNack(
        streamId,
        last.push,
        { version, nonce, at, code: 3, message: `refused ${String(e.message)}` },
        typeUrl,
      );
    return open.key;
  }
}

function fail(what: string): never {
  throw new Error(`no ${what}`);
}
