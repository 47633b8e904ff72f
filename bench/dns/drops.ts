// Where a lost query was dropped: the kernel's per-socket UDP drop counter (the last column of
// /proc/net/udp, "drops": datagrams refused because the socket's receive buffer was full, see
// proc(5) and the kernel's Documentation/networking/proc_net_udp) for the server's socket(s) and
// for dnsperf's, told apart by address: the server by its port, dnsperf by the source address it
// binds (-a). Sockets come and go (dnsperf's live for one run), so a watcher polls the table
// during the run and keeps, per socket (inode), the highest count seen.
import { readFileSync } from "node:fs";

/** One row of /proc/net/udp. */
export interface UdpSocketRow {
  /** Dotted IPv4 of the local address. */
  readonly address: string;
  readonly port: number;
  readonly inode: string;
  /** Bytes waiting in the receive queue. */
  readonly rxQueue: number;
  readonly drops: number;
}

/** "0100007F:0035" (little-endian hex address, hex port) → ["127.0.0.1", 53]. */
function endpoint(hex: string): [string, number] {
  const [ip = "", port = "0"] = hex.split(":");
  const n = Number.parseInt(ip, 16);
  const address = [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24].join(".");
  return [address, Number.parseInt(port, 16)];
}

/** Parses /proc/net/udp (IPv4 sockets) text. */
export function parseProcNetUdp(text: string): UdpSocketRow[] {
  const rows: UdpSocketRow[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 13) continue;
    const [address, port] = endpoint(f[1] ?? "");
    const rxQueue = Number.parseInt((f[4] ?? "0:0").split(":")[1] ?? "0", 16);
    rows.push({ address, port, inode: f[9] ?? "", rxQueue, drops: Number(f[f.length - 1]) });
  }
  return rows;
}

/** Reads the table now. */
export function udpSockets(): UdpSocketRow[] {
  return parseProcNetUdp(readFileSync("/proc/net/udp", "utf8"));
}

/** Drops counted during a run, per side, and the fullest receive queue seen. */
export interface DropCounts {
  readonly server: number;
  readonly client: number;
  readonly server_max_rx_queue_bytes: number;
  readonly client_max_rx_queue_bytes: number;
}

/** Polls /proc/net/udp every `everyMs` until stopped. */
export class DropWatch {
  readonly #server = new Map<string, { first: number; last: number }>();
  readonly #client = new Map<string, number>();
  #serverQueue = 0;
  #clientQueue = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly serverPort: number,
    private readonly clientAddress: string,
    everyMs = 100,
  ) {
    this.#poll();
    this.#timer = setInterval(() => {
      this.#poll();
    }, everyMs);
  }

  #poll(): void {
    for (const s of udpSockets()) {
      if (s.port === this.serverPort) {
        const seen = this.#server.get(s.inode);
        if (seen) seen.last = s.drops;
        else this.#server.set(s.inode, { first: s.drops, last: s.drops });
        this.#serverQueue = Math.max(this.#serverQueue, s.rxQueue);
      } else if (s.address === this.clientAddress) {
        // Sockets of an earlier run are gone; a new one starts at 0.
        this.#client.set(s.inode, Math.max(this.#client.get(s.inode) ?? 0, s.drops));
        this.#clientQueue = Math.max(this.#clientQueue, s.rxQueue);
      }
    }
  }

  /** Stops polling (after one last look) and returns the counts. */
  stop(): DropCounts {
    clearInterval(this.#timer);
    this.#poll();
    let server = 0;
    for (const s of this.#server.values()) server += s.last - s.first;
    let client = 0;
    for (const d of this.#client.values()) client += d;
    return {
      server,
      client,
      server_max_rx_queue_bytes: this.#serverQueue,
      client_max_rx_queue_bytes: this.#clientQueue,
    };
  }
}
