// One DNS question over UDP from a chosen source address (as `dig -b SOURCE` asks): the view a
// split-horizon server picks depends on it. Codec from dns2; the socket is ours so it can bind.
import { createSocket } from "node:dgram";
import { Packet } from "dns2";

/** What came back, reduced to what a Verification check compares. */
export interface DnsAnswer {
  readonly rcode: number;
  /** The AA bit: answered from a zone of the server, not forwarded. */
  readonly authoritative: boolean;
  /** A records of the answer section, sorted. */
  readonly addresses: readonly string[];
}

export interface DnsProbeTarget {
  readonly host: string;
  readonly port: number;
}

/** Thrown when the server does not answer in time or the source cannot be bound. */
export class DnsProbeError extends Error {}

/** Asks `server` for the A record of `name`, from `source`; rejects after `timeoutMs`. */
export function queryA(server: DnsProbeTarget, source: string, name: string, timeoutMs: number): Promise<DnsAnswer> {
  const query = new Packet();
  query.header.id = Math.floor(Math.random() * 0xffff);
  query.header.rd = 1;
  query.questions.push(new Packet.Question(name, Packet.TYPE.A, Packet.CLASS.IN));
  const bytes = query.toBuffer();
  return new Promise<DnsAnswer>((resolve, reject) => {
    const socket = createSocket("udp4");
    const done = (f: () => void): void => {
      clearTimeout(timer);
      socket.close();
      f();
    };
    const timer = setTimeout(() => {
      done(() => {
        reject(
          new DnsProbeError(`no answer from ${server.host}:${String(server.port)} within ${String(timeoutMs)} ms`),
        );
      });
    }, timeoutMs);
    socket.once("error", (e) => {
      done(() => {
        const refused = (e as NodeJS.ErrnoException).code === "ECONNREFUSED";
        reject(
          new DnsProbeError(
            refused
              ? `nothing listens at ${server.host}:${String(server.port)} (connection refused)`
              : `cannot ask from ${source}: ${e.message}`,
          ),
        );
      });
    });
    socket.on("message", (msg) => {
      let reply: Packet;
      try {
        reply = Packet.parse(msg);
      } catch {
        return; // not a DNS message: keep waiting for the real answer
      }
      if (reply.header.id !== query.header.id) return;
      done(() => {
        resolve({
          rcode: reply.header.rcode,
          authoritative: reply.header.aa === 1,
          addresses: reply.answers
            .filter((a) => a.type === Packet.TYPE.A)
            .map((a) => a.address ?? "")
            .sort(),
        });
      });
    });
    // Connected, so a closed port's ICMP "port unreachable" is an error at once, not a timeout.
    socket.bind(0, source, () => {
      socket.connect(server.port, server.host, () => {
        socket.send(bytes);
      });
    });
  });
}
