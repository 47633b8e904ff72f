// Forwarding of names outside our zones: the client's query goes upstream under a fresh random ID
// from a fresh socket (kernel-chosen random source port, RFC 5452), over UDP with a retry over TCP
// when the reply is truncated. Every attempt is bounded by the client's deadline, so a dead
// upstream costs at most the timeout and ends in SERVFAIL, never a hang.
import { randomFillSync } from "node:crypto";
import { createSocket } from "node:dgram";
import { connect, isIPv6 } from "node:net";
import { HEADER_SIZE, isReplyTo, RCODE } from "./dns-message.js";

/** A resolver we forward to. */
export interface Upstream {
  readonly host: string;
  readonly port: number;
}

/** Limits of the forwarder. */
export interface ForwarderOptions {
  /** Budget of one client query across every upstream attempt. */
  readonly timeoutMs: number;
  /** Queries upstream at once; beyond it clients get SERVFAIL at once instead of queueing. */
  readonly maxInFlight: number;
}

// Upstreams tried per client query; CoreDNS's forward plugin likewise gives up after a few.
const MAX_TRIES = 3;

/** Sends client queries upstream and hands back replies fitted with the client's ID and question. */
export class Forwarder {
  private upstreams: readonly Upstream[];
  private inFlight = 0;
  private readonly aborts = new Set<() => void>();
  private closed = false;

  constructor(
    upstreams: readonly Upstream[],
    private readonly options: ForwarderOptions,
  ) {
    this.upstreams = upstreams;
  }

  /** Replaces the upstream list; queries already in flight finish against the old one. */
  setUpstreams(upstreams: readonly Upstream[]): void {
    this.upstreams = upstreams;
  }

  /** Queries currently waiting on an upstream. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * The upstream reply to `query` with the client's ID and question spelling restored, or
   * undefined when no upstream answered in time (the caller answers SERVFAIL).
   */
  async resolve(query: Buffer, questionEnd: number): Promise<Buffer | undefined> {
    const upstreams = this.upstreams.slice(0, MAX_TRIES);
    if (this.closed || upstreams.length === 0 || this.inFlight >= this.options.maxInFlight) return undefined;
    this.inFlight++;
    try {
      const deadline = Date.now() + this.options.timeoutMs;
      let fallback: Buffer | undefined;
      for (let k = 0; k < upstreams.length; k++) {
        const upstream = upstreams[k];
        const remaining = deadline - Date.now();
        if (upstream === undefined || remaining <= 0) break;
        // Later upstreams still get a share of the budget when an early one is silent.
        const attemptEnd = Date.now() + remaining / (upstreams.length - k);
        const sent = Buffer.from(query);
        sent.writeUInt16BE(randomId(), 0);
        let reply = await this.udp(upstream, sent, questionEnd, attemptEnd - Date.now());
        if (reply !== undefined && ((reply[2] ?? 0) & 0x02) !== 0) {
          // Truncated: the full answer over TCP within what is left of the client's budget.
          reply = (await this.tcp(upstream, sent, questionEnd, deadline - Date.now())) ?? reply;
        }
        if (reply === undefined) continue;
        const rcode = (reply[3] ?? 0) & 0x0f;
        if ((rcode === RCODE.SERVFAIL || rcode === RCODE.REFUSED) && k < upstreams.length - 1) {
          fallback = reply;
          continue;
        }
        return restore(reply, query, questionEnd);
      }
      return fallback === undefined ? undefined : restore(fallback, query, questionEnd);
    } finally {
      this.inFlight--;
    }
  }

  /** Aborts every exchange in flight (each resolves as unanswered) and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const abort of [...this.aborts]) abort();
  }

  private udp(upstream: Upstream, sent: Buffer, questionEnd: number, timeoutMs: number): Promise<Buffer | undefined> {
    return this.exchange(timeoutMs, (finish) => {
      const socket = createSocket(isIPv6(upstream.host) ? "udp6" : "udp4");
      // A connected socket only receives datagrams from the upstream's address and port.
      socket.on("error", () => {
        finish(undefined);
      });
      socket.on("message", (msg) => {
        if (isReplyTo(msg, sent, questionEnd)) finish(msg);
      });
      socket.connect(upstream.port, upstream.host, () => {
        try {
          socket.send(sent, (err) => {
            if (err) finish(undefined);
          });
        } catch {
          finish(undefined); // closed by a timeout or close() while connecting
        }
      });
      return () => {
        try {
          socket.close();
        } catch {
          // Already closed after an error.
        }
      };
    });
  }

  private tcp(upstream: Upstream, sent: Buffer, questionEnd: number, timeoutMs: number): Promise<Buffer | undefined> {
    return this.exchange(timeoutMs, (finish) => {
      const socket = connect({ host: upstream.host, port: upstream.port });
      let buffered = Buffer.alloc(0);
      socket.on("error", () => {
        finish(undefined);
      });
      socket.on("close", () => {
        finish(undefined);
      });
      socket.on("data", (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        if (buffered.length < 2) return;
        const length = buffered.readUInt16BE(0);
        if (buffered.length < 2 + length) return;
        const msg = buffered.subarray(2, 2 + length);
        finish(isReplyTo(msg, sent, questionEnd) ? Buffer.from(msg) : undefined);
      });
      const frame = Buffer.allocUnsafe(2 + sent.length);
      frame.writeUInt16BE(sent.length, 0);
      sent.copy(frame, 2);
      socket.write(frame);
      return () => socket.destroy();
    });
  }

  /** Runs one exchange: `start` wires it up and returns its cleanup; the timer bounds it. */
  private exchange(
    timeoutMs: number,
    start: (finish: (reply: Buffer | undefined) => void) => () => void,
  ): Promise<Buffer | undefined> {
    if (timeoutMs <= 0 || this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const state = { done: false };
      let cleanup: (() => void) | undefined;
      const finish = (reply: Buffer | undefined): void => {
        if (state.done) return;
        state.done = true;
        clearTimeout(timer);
        this.aborts.delete(abort);
        cleanup?.();
        resolve(reply);
      };
      const abort = (): void => {
        finish(undefined);
      };
      const timer = setTimeout(abort, timeoutMs);
      this.aborts.add(abort);
      try {
        cleanup = start(finish);
        // finish() may already have run inside start(), before cleanup existed.
        if (state.done) cleanup();
      } catch {
        finish(undefined);
      }
    });
  }
}

/** The reply as the client must see it: its own ID and its own question bytes (0x20 spelling). */
function restore(reply: Buffer, query: Buffer, questionEnd: number): Buffer {
  const out = Buffer.from(reply);
  query.copy(out, 0, 0, 2);
  query.copy(out, HEADER_SIZE, HEADER_SIZE, questionEnd);
  return out;
}

// Random IDs come from a refilled pool: one getrandom call per 2048 forwarded queries.
const idPool = Buffer.alloc(4096);
let idOffset = idPool.length;

function randomId(): number {
  if (idOffset >= idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = idPool.readUInt16BE(idOffset);
  idOffset += 2;
  return id;
}

/** Nameserver addresses listed in resolv.conf text (`nameserver ADDR` lines; scoped IPv6 skipped). */
export function parseResolvConf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    const addr = m?.[1];
    if (addr !== undefined && !addr.includes("%") && !out.includes(addr)) out.push(addr);
  }
  return out;
}
