// The ADS thread's status record, replayed on the main thread: the server's thread records every
// stream opened, response sent, ACK, NACK and close as before (its CSDS and debug services read it
// there) and sends each call across; the main thread makes the same calls on an XdsStatus of its own,
// which the status page, metrics, change log lines and readiness read as they read the server's.
import type { AckRecord, NackRecord, PushRecord, SentRecord, StreamStatus } from "../client-status.js";
import { XdsStatus, type StreamConfig, type XdsStatusOptions } from "../client-status.js";

/** One recorder call, as it crosses between threads; a push is named by a number the sender gave it. */
export type StatusCall =
  | { readonly op: "open"; readonly opened: Omit<StreamStatus, "types" | "identity"> & { readonly identity?: string } }
  | {
      readonly op: "sent";
      readonly streamId: string;
      readonly group: string;
      readonly typeUrl: string;
      readonly sent: SentRecord;
      readonly cause: PushRecord["cause"];
      readonly changeAt: number;
      readonly push: number;
    }
  | {
      readonly op: "ack";
      readonly streamId: string;
      readonly push: number | undefined;
      readonly ack: AckRecord;
      readonly typeUrl: string;
    }
  | {
      readonly op: "nack";
      readonly streamId: string;
      readonly push: number | undefined;
      readonly nack: Omit<NackRecord, "repeats">;
      readonly typeUrl: string;
    }
  | { readonly op: "close"; readonly streamId: string; readonly at: number };

/**
 * The ADS thread's recorder: records as XdsStatus does and hands each call to `send`, batched per
 * turn of the event loop (one message for the responses of one snapshot to many streams).
 */
export class RelayingXdsStatus extends XdsStatus {
  readonly #send: (calls: StatusCall[]) => void;
  readonly #pushIds = new WeakMap<PushRecord, number>();
  #nextPush = 0;
  #batch: StatusCall[] = [];

  constructor(send: (calls: StatusCall[]) => void, options: XdsStatusOptions = {}) {
    super(options);
    this.#send = send;
  }

  #queue(call: StatusCall): void {
    if (this.#batch.length === 0)
      queueMicrotask(() => {
        const calls = this.#batch;
        this.#batch = [];
        this.#send(calls);
      });
    this.#batch.push(call);
  }

  override recordOpen(
    opened: Omit<StreamStatus, "types" | "identity"> & { readonly identity?: string },
    config: (typeUrl: string) => StreamConfig | undefined,
  ): void {
    super.recordOpen(opened, config);
    this.#queue({ op: "open", opened });
  }

  override recordSent(
    streamId: string,
    group: string,
    typeUrl: string,
    sent: SentRecord,
    cause: PushRecord["cause"],
    changeAt: number,
  ): PushRecord | undefined {
    const record = super.recordSent(streamId, group, typeUrl, sent, cause, changeAt);
    if (record === undefined) return undefined;
    const push = this.#nextPush++;
    this.#pushIds.set(record, push);
    this.#queue({ op: "sent", streamId, group, typeUrl, sent, cause, changeAt, push });
    return record;
  }

  override recordAck(streamId: string, push: PushRecord | undefined, ack: AckRecord, typeUrl: string): void {
    super.recordAck(streamId, push, ack, typeUrl);
    this.#queue({ op: "ack", streamId, push: push && this.#pushIds.get(push), ack, typeUrl });
  }

  override recordNack(
    streamId: string,
    push: PushRecord | undefined,
    nack: Omit<NackRecord, "repeats">,
    typeUrl: string,
  ): void {
    super.recordNack(streamId, push, nack, typeUrl);
    this.#queue({ op: "nack", streamId, push: push && this.#pushIds.get(push), nack, typeUrl });
  }

  override recordClose(streamId: string, at: number): void {
    super.recordClose(streamId, at);
    this.#queue({ op: "close", streamId, at });
  }
}

/** Pushes a stream may have awaiting an answer on the main side (older ones are forgotten). */
const PUSHES_PER_STREAM = 64;

/** Makes the calls of a RelayingXdsStatus on `status` (the main thread's copy). */
export class StatusReplay {
  /** Push number → its record here, per stream, oldest first; a stream's go when it closes. */
  readonly #pushes = new Map<string, Map<number, PushRecord>>();

  constructor(readonly status: XdsStatus) {}

  apply(calls: readonly StatusCall[]): void {
    for (const c of calls) this.#apply(c);
  }

  #apply(c: StatusCall): void {
    switch (c.op) {
      case "open":
        // What a client holds is read on the ADS thread (CSDS, oooi.debug.v1), not here.
        this.status.recordOpen(c.opened, () => undefined);
        return;
      case "sent": {
        const record = this.status.recordSent(c.streamId, c.group, c.typeUrl, c.sent, c.cause, c.changeAt);
        if (record === undefined) return;
        let pushes = this.#pushes.get(c.streamId);
        if (pushes === undefined) this.#pushes.set(c.streamId, (pushes = new Map<number, PushRecord>()));
        pushes.set(c.push, record);
        if (pushes.size > PUSHES_PER_STREAM) pushes.delete(pushes.keys().next().value as number);
        return;
      }
      case "ack":
        this.status.recordAck(c.streamId, this.#answered(c.streamId, c.push), c.ack, c.typeUrl);
        return;
      case "nack":
        this.status.recordNack(c.streamId, this.#answered(c.streamId, c.push), c.nack, c.typeUrl);
        return;
      case "close":
        this.#pushes.delete(c.streamId);
        this.status.recordClose(c.streamId, c.at);
        return;
    }
  }

  #answered(streamId: string, push: number | undefined): PushRecord | undefined {
    if (push === undefined) return undefined;
    return this.#pushes.get(streamId)?.get(push);
  }
}
