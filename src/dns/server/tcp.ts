// One DNS-over-TCP connection (RFC 7766): length-prefixed queries in, replies out, pipelined and
// possibly reordered (§6.2.1.1). Everything a client controls is bounded: a client that stops
// reading its replies is no longer read from (its replies would otherwise pile up in memory), a
// message must arrive whole within a deadline (a byte now and then does not keep a slot), and an
// idle connection is closed (§6.2.3).
import type { Socket } from "node:net";
import type { Clock, TimerHandle } from "../../util/clock.js";
import type { Reply } from "./handler.js";

/** Per-connection bounds; see DnsResponderOptions for what each means and its default. */
export interface TcpLimits {
  readonly idleTimeoutMs: number;
  readonly messageTimeoutMs: number;
  readonly maxUnsentBytes: number;
  readonly maxQueriesInFlight: number;
}

export const DEFAULT_TCP_LIMITS: TcpLimits = {
  idleTimeoutMs: 10_000,
  messageTimeoutMs: 5_000,
  maxUnsentBytes: 64 * 1024,
  maxQueriesInFlight: 64,
};

/** Which deadline runs: none while forwarded queries are out (the forwarder bounds those). */
type Deadline = "none" | "idle" | "message";

const EMPTY = Buffer.alloc(0);

/** Serves one accepted socket until it closes; `answer` is the transport-independent handler. */
export class TcpConnection {
  private pending: Buffer = EMPTY;
  private inFlight = 0;
  private reading = true;
  private deadline: Deadline = "none";
  private timer: TimerHandle | undefined;
  /** When the running deadline started. */
  private since = 0;

  constructor(
    private readonly socket: Socket,
    private readonly answer: (msg: Buffer) => Reply,
    private readonly limits: TcpLimits,
    private readonly clock: Clock,
    private readonly onTimeout: () => void,
  ) {
    socket.setNoDelay(true);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      this.clearTimer();
    });
    socket.on("data", (chunk: Buffer) => {
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      this.drainQueries();
    });
    this.arm(false);
  }

  /** True while the connection is not read from because its client is behind. */
  get paused(): boolean {
    return !this.reading;
  }

  /**
   * Since when the connection has waited on its client — idle, or a message not yet whole;
   * undefined while it waits on forwarded answers (the server is the one behind then).
   */
  get waitingSince(): number | undefined {
    return this.deadline === "none" ? undefined : this.since;
  }

  /** Reply bytes accepted but not yet handed to the kernel. */
  get unsentBytes(): number {
    return this.socket.writableLength;
  }

  private behind(): boolean {
    return this.socket.writableLength >= this.limits.maxUnsentBytes || this.inFlight >= this.limits.maxQueriesInFlight;
  }

  /** Answers every complete query buffered, unless the client is behind; then stops reading. */
  private drainQueries(): void {
    let done = false;
    while (this.pending.length >= 2 && !this.behind()) {
      const length = this.pending.readUInt16BE(0);
      if (this.pending.length < 2 + length) break;
      const msg = this.pending.subarray(2, 2 + length);
      this.pending = this.pending.length === 2 + length ? EMPTY : this.pending.subarray(2 + length);
      done = true;
      this.dispatch(msg);
    }
    if (this.reading && this.behind()) {
      this.reading = false;
      this.socket.pause();
    }
    this.arm(done);
  }

  private dispatch(msg: Buffer): void {
    const result = this.answer(msg);
    if (result instanceof Promise) {
      this.inFlight++;
      void result.then((reply) => {
        this.inFlight--;
        if (reply !== undefined) this.write(reply);
        this.maybeResume();
        this.arm(false);
      });
    } else if (result !== undefined) this.write(result);
  }

  private write(reply: Buffer): void {
    const socket = this.socket;
    if (socket.destroyed || !socket.writable) return;
    const frame = Buffer.allocUnsafe(2 + reply.length);
    frame.writeUInt16BE(reply.length, 0);
    reply.copy(frame, 2);
    // The callback runs once the kernel took the frame: the client is reading again.
    socket.write(frame, () => {
      this.maybeResume();
      this.arm(this.deadline === "idle");
    });
  }

  /** Resumes reading once the unsent replies are down to half the bound (no flapping per reply). */
  private maybeResume(): void {
    if (this.reading || this.socket.destroyed) return;
    if (this.socket.writableLength > this.limits.maxUnsentBytes / 2) return;
    if (this.inFlight >= this.limits.maxQueriesInFlight) return;
    this.reading = true;
    this.drainQueries();
    if (!this.paused) this.socket.resume();
  }

  /**
   * Sets the deadline the connection's state calls for. A message's deadline runs from its first
   * byte, so later bytes never extend it; `restart` starts the current one over (a message
   * completed, or a reply left while idle). Restarting only moves `since`: the timer, when it
   * fires early, waits out the rest, so a busy connection costs no timer per query.
   */
  private arm(restart: boolean): void {
    if (this.socket.destroyed) return;
    const want: Deadline = this.inFlight > 0 ? "none" : this.pending.length > 0 && this.reading ? "message" : "idle";
    if (want === this.deadline) {
      if (restart) this.since = this.clock.now();
      return;
    }
    this.clearTimer();
    this.deadline = want;
    this.since = this.clock.now();
    if (want !== "none") this.schedule(this.limitOf(want));
  }

  private limitOf(deadline: Deadline): number {
    return deadline === "message" ? this.limits.messageTimeoutMs : this.limits.idleTimeoutMs;
  }

  private schedule(ms: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      const left = this.since + this.limitOf(this.deadline) - this.clock.now();
      if (left > 0) {
        this.schedule(left);
        return;
      }
      this.onTimeout();
      this.socket.destroy();
    }, ms);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
