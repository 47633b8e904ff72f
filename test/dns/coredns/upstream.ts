// The upstream resolver both DNS servers forward to in these tests: UDP and TCP on loopback,
// dns2's codec (independent of ours), an answer for every name so a test can tell a forwarded
// name from an authoritative one, and a record of what it was asked.
//   A of any name          → one address derived from the name (198.18.0.0/16), TTL 60
//   names starting "nx"    → NXDOMAIN with an SOA in the authority section
//   other types            → NODATA with the same SOA
import { createHash } from "node:crypto";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";
import { Packet } from "dns2";

/** A query as the upstream saw it. */
export interface UpstreamQuery {
  readonly name: string;
  readonly type: number;
}

export interface Upstream {
  readonly host: string;
  readonly port: number;
  readonly seen: readonly UpstreamQuery[];
  close(): Promise<void>;
}

/** The address the upstream gives `name` (lower case, no trailing dot). */
export function upstreamAddress(name: string): string {
  const digest = createHash("sha256").update(name.toLowerCase().replace(/\.$/, "")).digest();
  return `198.18.${digest[0] ?? 0}.${(digest[1] ?? 0) | 1}`;
}

/** Owner of the SOA in the upstream's negative answers. */
export const UPSTREAM_SOA_OWNER = "upstream.test";

function answer(query: Buffer, seen: UpstreamQuery[]): Buffer {
  const req = Packet.parse(query);
  const res = new Packet();
  res.header = new Packet.Header({ id: req.header.id, opcode: req.header.opcode, rd: req.header.rd, qr: 1, ra: 1 });
  res.questions = req.questions;
  const q = req.questions[0];
  if (q === undefined) return res.toBuffer();
  const name = q.name.toLowerCase();
  seen.push({ name, type: q.type });
  const nx = name.startsWith("nx");
  if (!nx && q.type === Packet.TYPE.A) {
    res.answers.push(
      new Packet.Resource({ name: q.name, type: Packet.TYPE.A, class: 1, ttl: 60, address: upstreamAddress(name) }),
    );
  } else {
    if (nx) res.header.rcode = 3;
    res.authorities.push(
      new Packet.Resource({
        name: UPSTREAM_SOA_OWNER,
        type: Packet.TYPE.SOA,
        class: 1,
        ttl: 60,
        primary: `ns.${UPSTREAM_SOA_OWNER}`,
        admin: `hostmaster.${UPSTREAM_SOA_OWNER}`,
        serial: 7,
        refresh: 3600,
        retry: 600,
        expiration: 86400,
        minimum: 60,
      }),
    );
  }
  return res.toBuffer();
}

/** Starts the upstream on `host` at a free port (the same for UDP and TCP). */
export async function startUpstream(host = "127.0.0.1"): Promise<Upstream> {
  const seen: UpstreamQuery[] = [];
  const sockets = new Set<Socket>();
  const tcp = createServer((socket) => {
    sockets.add(socket);
    let buf = Buffer.alloc(0);
    socket.on("error", () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        let reply: Buffer;
        try {
          reply = answer(msg, seen);
        } catch {
          socket.destroy();
          return;
        }
        const len = Buffer.alloc(2);
        len.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([len, reply]));
      }
    });
  });
  const { udp, port } = await listenBoth(tcp, host);
  udp.on("message", (msg, rinfo) => {
    try {
      udp.send(answer(msg, seen), rinfo.port, rinfo.address);
    } catch {
      // A malformed probe: no answer, as a real resolver might.
    }
  });
  return {
    host,
    port,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((r) =>
          udp.close(() => {
            r();
          }),
        ),
        new Promise<void>((r) =>
          tcp.close(() => {
            r();
          }),
        ),
      ]);
    },
  };
}

/** Listens with `tcp` on a free port and binds a UDP socket to the same one; retries when UDP's is taken. */
async function listenBoth(tcp: Server, host: string): Promise<{ udp: UdpSocket; port: number }> {
  for (;;) {
    await new Promise<void>((resolve) => tcp.listen(0, host, resolve));
    const address = tcp.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const udp = createSocket("udp4");
    const bound = await new Promise<boolean>((resolve) => {
      const failed = (): void => {
        resolve(false);
      };
      udp.once("error", failed);
      udp.bind(port, host, () => {
        udp.off("error", failed);
        resolve(true);
      });
    });
    if (bound) return { udp, port };
    udp.close();
    await new Promise<void>((resolve) =>
      tcp.close(() => {
        resolve();
      }),
    );
  }
}
