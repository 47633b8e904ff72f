// Answers the datagrams of one UDP socket through a QueryHandler: the responder's own socket, and
// the same socket in each helper process (./udp-process.ts), so every process answering UDP does
// it the same way.
import type { RemoteInfo, Socket as UdpSocket } from "node:dgram";
import { parseIPv4 } from "../../model/ipv4.js";
import { CLASSIC_UDP_LIMIT } from "./dns-message.js";
import type { QueryHandler } from "./handler.js";

// Source addresses seen recently → IPv4 number (-1 = not IPv4); bounded, cleared when full.
const ADDRESS_CACHE_SIZE = 65_536;

/** Replies to each datagram on `udp` with the handler's answer, to the address it came from. */
export class UdpAnswerer {
  private readonly addresses = new Map<string, number>();

  constructor(
    private readonly udp: UdpSocket,
    private readonly handler: QueryHandler,
    log: (msg: string) => void,
  ) {
    udp.on("message", (msg: Buffer, rinfo: RemoteInfo) => {
      this.onDatagram(msg, rinfo);
    });
    udp.on("error", (err) => {
      log(`dns: udp: ${err.message}`);
    });
  }

  /** The client's IPv4 address as a number (IPv4-mapped IPv6 unwrapped); undefined for IPv6. */
  clientIPv4(address: string): number | undefined {
    let ip = this.addresses.get(address);
    if (ip === undefined) {
      const bare = address.toLowerCase().startsWith("::ffff:") ? address.slice(7) : address;
      ip = parseIPv4(bare) ?? -1;
      if (this.addresses.size >= ADDRESS_CACHE_SIZE) this.addresses.clear();
      this.addresses.set(address, ip);
    }
    return ip < 0 ? undefined : ip;
  }

  private onDatagram(msg: Buffer, rinfo: RemoteInfo): void {
    const result = this.handler.handle(msg, this.clientIPv4(rinfo.address), CLASSIC_UDP_LIMIT);
    if (result === undefined) return;
    if (result instanceof Promise) {
      void result.then((reply) => {
        if (reply !== undefined) this.send(reply, rinfo);
      });
      return;
    }
    this.send(result, rinfo);
  }

  private send(reply: Buffer, rinfo: RemoteInfo): void {
    try {
      this.udp.send(reply, rinfo.port, rinfo.address);
    } catch {
      // The socket closed while a forwarded answer was on its way.
    }
  }
}
