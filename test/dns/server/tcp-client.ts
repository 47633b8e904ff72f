// A raw DNS-over-TCP client for the responder's TCP limit tests: it writes frames as told, reads
// replies only once asked to (a client that never reads is the point of some tests), and says
// when the server closed it.
import { connect, type Socket } from "node:net";
import { encodeQuery } from "./helpers.js";

/** A length-prefixed A query for `name`. */
export function frame(name: string, id: number): Buffer {
  const q = encodeQuery({ id, rd: true, name, type: 1, qclass: 1, edns: undefined });
  const out = Buffer.alloc(2 + q.length);
  out.writeUInt16BE(q.length, 0);
  q.copy(out, 2);
  return out;
}

export class RawTcpClient {
  /** Complete replies read so far. */
  replies = 0;
  /** Set once the connection closed, by either side. */
  closedFlag = false;
  readonly closed: Promise<void>;
  private buffered = Buffer.alloc(0);

  private constructor(readonly socket: Socket) {
    this.closed = new Promise((resolve) => {
      socket.on("close", () => {
        this.closedFlag = true;
        resolve();
      });
    });
    socket.on("error", () => undefined);
  }

  /** Connects to 127.0.0.1:`port`, from `source` (another loopback address) when given. */
  static async open(port: number, source?: string): Promise<RawTcpClient> {
    const socket = connect({ port, host: "127.0.0.1", ...(source === undefined ? {} : { localAddress: source }) });
    const client = new RawTcpClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return client;
  }

  /** Starts reading and counting replies (until then nothing is read). */
  read(): void {
    this.socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 2 && this.buffered.length >= 2 + this.buffered.readUInt16BE(0)) {
        this.buffered = this.buffered.subarray(2 + this.buffered.readUInt16BE(0));
        this.replies++;
      }
    });
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Waits (a bounded number of short polls) until `cond` holds; throws naming `what` otherwise. */
export async function until(cond: () => boolean, what: string, polls = 1000): Promise<void> {
  for (let i = 0; i < polls; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never happened: ${what}`);
}

/** Waits until `sample` returns the same value `times` polls in a row; returns that value. */
export async function settled(sample: () => number, times = 10, polls = 1000): Promise<number> {
  let last = sample();
  let same = 0;
  for (let i = 0; i < polls && same < times; i++) {
    await new Promise((r) => setTimeout(r, 10));
    const now = sample();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}
