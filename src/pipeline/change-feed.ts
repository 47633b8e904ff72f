// A batch of the render loop → its publish into the xDS cache, one info line saying what changed
// and which groups got which versions (change-line.ts), then one line when every connected client
// of those groups ACKed the new versions, or when the timeout passes with who did not. The change
// feed of `oooi serve` and `oooi operator`; it only listens to the xDS status.
import type { ObjectChange } from "../model/incremental/infras-read.js";
import type { Snapshot, SnapshotCache } from "../xds/cache/index.js";
import { isProbe, type PushRecord, type StreamStatus, type XdsStatusView } from "../xds/client-status.js";
import type { Clock, TimerHandle } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { changeLine, type ChangeLineInput, type GroupVersionChange } from "./change-line.js";
import { publishSnapshots, type Publishable } from "./snapshots.js";

/** What a batch brings besides its outputs. */
export interface FeedBatch {
  readonly changes: readonly ObjectChange[] | undefined;
  readonly rebuilt: ReadonlySet<string>;
  readonly locate?: NonNullable<ChangeLineInput["locate"]>;
}

export interface ChangeFeedOptions {
  readonly cache: SnapshotCache;
  readonly log: Pick<Logger, "info" | "warn" | "error">;
  readonly clock: Clock;
  /** How long to wait for every client's ACK (default 10 s). */
  readonly ackTimeoutMs?: number;
}

export const DEFAULT_ACK_TIMEOUT_MS = 10_000;

/** A client (stream) the change waits on, and the versions it must ACK per type. */
interface Waiting {
  readonly nodeId: string;
  readonly group: string;
  readonly needs: Map<string, string>;
}

interface PendingChange {
  readonly seq: number;
  readonly startedAt: number;
  readonly clients: number;
  readonly waiting: Map<string, Waiting>;
  readonly gone: string[];
  timer: TimerHandle | undefined;
}

export class ChangeFeed {
  readonly #opts: ChangeFeedOptions;
  #seq = 0;
  #published: Publishable | undefined;
  readonly #pending = new Set<PendingChange>();
  /** The ADS server's status, once attached (before: no client is counted, no ACK line). */
  #status: XdsStatusView | undefined;
  /** Open streams by node group, so a change looks only at its groups' clients. */
  readonly #streams = new Map<string, Set<string>>();

  constructor(opts: ChangeFeedOptions) {
    this.#opts = opts;
  }

  /** Publishes `out` (only the groups it changed) and logs the change when some group's versions moved. */
  publish(out: Publishable, batch: FeedBatch): void {
    const { cache, log } = this.#opts;
    // Only the groups the publish set or deleted can have moved: the line compares those alone.
    const touched = publishSnapshots(cache, out, log, this.#published);
    this.#published = out;
    const [before, after] = [new Map<string, Snapshot>(), new Map<string, Snapshot>()];
    for (const [group, was] of touched) {
      const now = cache.getSnapshot(group);
      if (was !== undefined) before.set(group, was);
      if (now !== undefined) after.set(group, now);
    }
    const line = changeLine({ seq: this.#seq + 1, ...batch, before, after });
    if (line === undefined) return;
    this.#seq += 1;
    const clients = this.#track(line.fields.change, line.groups);
    log.info(
      { ...line.fields, clients },
      clients === 0 ? `${line.msg} (no client connected)` : `${line.msg}; waiting for ${String(clients)} client(s)`,
    );
  }

  /** Stops listening and drops the changes still waiting (no line for them). */
  close(): void {
    for (const p of this.#pending) if (p.timer !== undefined) this.#opts.clock.clearTimeout(p.timer);
    this.#pending.clear();
    this.#status?.off("ack", this.#onAck);
    this.#status?.off("stream-open", this.#onOpen);
    this.#status?.off("stream-close", this.#onClose);
    this.#status = undefined;
    this.#streams.clear();
  }

  /** Listens to the ADS server's status: its clients are counted and their ACKs awaited from now on. */
  attach(status: XdsStatusView): void {
    this.close();
    this.#status = status;
    status.on("ack", this.#onAck);
    status.on("stream-open", this.#onOpen);
    status.on("stream-close", this.#onClose);
    for (const stream of status.streams()) this.#onOpen(stream);
  }

  /** Starts waiting for the clients of the groups that moved; returns how many there are. */
  #track(seq: number, groups: readonly GroupVersionChange[]): number {
    const status = this.#status;
    if (status === undefined) return 0;
    const waiting = new Map<string, Waiting>();
    let clients = 0;
    for (const moved of groups)
      for (const streamId of this.#streams.get(moved.group) ?? []) {
        const stream = status.stream(streamId);
        const needs = stream === undefined ? undefined : needsOf(stream, moved);
        // Not a client of the change: subscribes to none of the types that moved, or is oooi verify's probe.
        if (stream === undefined || needs === undefined || isProbe(stream.node)) continue;
        clients += 1;
        if (needs.size > 0) waiting.set(streamId, { nodeId: stream.node.id, group: moved.group, needs });
      }
    if (clients === 0) return 0;
    const pending: PendingChange = {
      seq,
      startedAt: this.#opts.clock.now(),
      clients,
      waiting,
      gone: [],
      timer: undefined,
    };
    this.#pending.add(pending);
    if (waiting.size === 0) this.#finish(pending, this.#opts.clock.now());
    else
      pending.timer = this.#opts.clock.setTimeout(() => {
        pending.timer = undefined;
        this.#finish(pending, this.#opts.clock.now());
      }, this.#opts.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS);
    return clients;
  }

  readonly #onOpen = (stream: StreamStatus): void => {
    const ids = this.#streams.get(stream.node.cluster) ?? new Set<string>();
    ids.add(stream.streamId);
    this.#streams.set(stream.node.cluster, ids);
  };

  readonly #onAck = (push: PushRecord): void => {
    for (const p of this.#pending) {
      const w = p.waiting.get(push.streamId);
      const wanted = w?.needs.get(push.typeUrl);
      if (w === undefined || wanted === undefined || !ackedVersion(push.version, wanted)) continue;
      w.needs.delete(push.typeUrl);
      if (w.needs.size === 0) p.waiting.delete(push.streamId);
      if (p.waiting.size === 0) this.#finish(p, push.ackAt ?? this.#opts.clock.now());
    }
  };

  readonly #onClose = (stream: StreamStatus): void => {
    const ids = this.#streams.get(stream.node.cluster);
    ids?.delete(stream.streamId);
    if (ids?.size === 0) this.#streams.delete(stream.node.cluster);
    for (const p of this.#pending) {
      if (!p.waiting.delete(stream.streamId)) continue;
      p.gone.push(stream.node.id);
      if (p.waiting.size === 0) this.#finish(p, this.#opts.clock.now());
    }
  };

  #finish(p: PendingChange, at: number): void {
    if (!this.#pending.delete(p)) return;
    if (p.timer !== undefined) this.#opts.clock.clearTimeout(p.timer);
    const ms = Math.max(0, at - p.startedAt);
    const missing = [...p.waiting.values()];
    const acked = p.clients - missing.length - p.gone.length;
    const fields = {
      change: p.seq,
      clients: p.clients,
      acked,
      ms,
      notAcked: missing.slice(0, 5).map((w) => `${w.group} ${w.nodeId}`),
      disconnected: p.gone.slice(0, 5),
    };
    const of = `${String(acked)} of ${String(p.clients)} client(s)`;
    if (missing.length === 0 && p.gone.length === 0) {
      this.#opts.log.info(fields, `change ${String(p.seq)}: ACKed by ${of} in ${String(ms)} ms`);
      return;
    }
    const behind = [
      missing.length === 0
        ? ""
        : `${String(missing.length)} did not ACK (${fields.notAcked.join(", ")}${missing.length > 5 ? ", …" : ""})`,
      p.gone.length === 0 ? "" : `${String(p.gone.length)} disconnected`,
    ].filter((s) => s !== "");
    this.#opts.log.warn(
      fields,
      `change ${String(p.seq)}: ACKed by ${of} within ${String(ms)} ms; ${behind.join(", ")} — \`oooi debug nodes\` shows why`,
    );
  }
}

/**
 * The versions a stream must still ACK: the moved types it was ever sent (those it subscribes to),
 * less any it already ACKed at the new version. Undefined: it was sent none of them.
 */
function needsOf(stream: StreamStatus, moved: GroupVersionChange): Map<string, string> | undefined {
  let subscribed = false;
  const needs = new Map<string, string>();
  for (const t of moved.types) {
    if (t.to === undefined) continue;
    const held = stream.types.find((s) => s.typeUrl === t.typeUrl);
    if (held?.lastSent === undefined) continue;
    subscribed = true;
    if (held.lastAcked === undefined || !ackedVersion(held.lastAcked.version, t.to)) needs.set(t.typeUrl, t.to);
  }
  return subscribed ? needs : undefined;
}

/** An ACKed version_info is the type's version, or it plus "+<retained>" while a removal waits (xds-protocol.md). */
function ackedVersion(acked: string, wanted: string): boolean {
  return acked === wanted || acked.startsWith(`${wanted}+`);
}
