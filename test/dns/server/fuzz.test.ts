// 100,000 random, mutated and truncated packets (fast-check, seeded): every reply is a well-formed
// response to the packet that caused it, malformed queries get FORMERR (or are dropped), and the
// live responder keeps answering over UDP and TCP after the same barrage.
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { connect } from "node:net";
import { Packet } from "dns2";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Forwarder } from "../../../src/dns/server/forward.js";
import { QueryHandler } from "../../../src/dns/server/handler.js";
import { startDnsResponder, type DnsResponder } from "../../../src/dns/server/index.js";
import { buildServing } from "../../../src/dns/server/serving.js";
import { parseIPv4 } from "../../../src/model/ipv4.js";
import { DOMAIN, encodeQuery, PROXY_IP, seedModel, VLAN_CLIENT, type QuerySpec } from "./helpers.js";

const RUNS = 100_000;
const TCP_LIMIT = 65535;
const FORMERR = 1;
const NOTIMP = 4;

const label = fc.stringMatching(/^[a-zA-Z0-9-]{1,20}$/);
const names = fc.oneof(
  fc.constantFrom(
    `api.${DOMAIN}`,
    `API.${DOMAIN.toUpperCase()}`,
    DOMAIN,
    `apps.${DOMAIN}`,
    "kubernetes.default.svc",
    "www.example.net",
    "kubernetes",
  ),
  label.map((l) => `${l}.apps.${DOMAIN}`),
  label.map((l) => `${l}.${DOMAIN}`),
  fc.array(label, { minLength: 1, maxLength: 6 }).map((ls) => ls.join(".")),
);
const querySpec: fc.Arbitrary<QuerySpec> = fc.record({
  id: fc.integer({ min: 0, max: 0xffff }),
  rd: fc.boolean(),
  name: names,
  type: fc.oneof(fc.constantFrom(1, 2, 6, 28, 255, 16, 33), fc.integer({ min: 0, max: 0xffff })),
  qclass: fc.oneof(fc.constant(1), fc.constant(1), fc.integer({ min: 0, max: 0xffff })),
  edns: fc.option(
    fc.record({
      payload: fc.integer({ min: 0, max: 0xffff }),
      version: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })),
      dnssecOk: fc.boolean(),
    }),
    { nil: undefined },
  ),
});

type Mutation =
  { kind: "set"; at: number; value: number } | { kind: "cut"; at: number } | { kind: "append"; bytes: Uint8Array };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("append" as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
);

function mutate(base: Buffer, ms: readonly Mutation[]): Buffer {
  let b = Buffer.from(base);
  for (const m of ms) {
    if (m.kind === "set" && b.length > 0) b[m.at % b.length] = m.value;
    else if (m.kind === "cut") b = b.subarray(0, m.at % (b.length + 1));
    else if (m.kind === "append") b = Buffer.concat([b, m.bytes]);
  }
  return b;
}

/** A packet with what we know about it for sure. */
interface Case {
  readonly packet: Buffer;
  /** "valid": a well-formed query; "broken": a strict prefix of one; "any": no promise. */
  readonly kind: "valid" | "broken" | "any";
  /** For valid queries: the UDP payload a reply may use (512, or the EDNS size). */
  readonly udpLimit?: number;
}

const cases: fc.Arbitrary<Case> = fc.oneof(
  querySpec.map((q) => ({
    packet: encodeQuery(q),
    kind: "valid" as const,
    udpLimit: q.edns === undefined ? 512 : Math.max(512, q.edns.payload),
  })),
  fc.tuple(querySpec, fc.nat()).map(([q, n]) => {
    const full = encodeQuery(q);
    // Anything from a bare header up to one byte short of the full message.
    return { packet: full.subarray(0, 12 + (n % (full.length - 12))), kind: "broken" as const };
  }),
  fc
    .tuple(querySpec, fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([q, ms]) => ({ packet: mutate(encodeQuery(q), ms), kind: "any" as const })),
  fc.uint8Array({ maxLength: 600 }).map((a) => ({ packet: Buffer.from(a), kind: "any" as const })),
);

/** Offset past the question of a message with one well-formed question. */
function questionEnd(msg: Buffer): number {
  let i = 12;
  while ((msg[i] ?? 0) !== 0) i += (msg[i] ?? 0) + 1;
  return i + 5;
}

const vlanIp = parseIPv4(VLAN_CLIENT);
let upstream: UdpSocket;
let upstreamPort = 0;

beforeAll(async () => {
  // A raw upstream that refuses everything at once: the forwarding path runs, at no cost.
  upstream = createSocket("udp4");
  upstream.on("message", (msg, rinfo) => {
    if (msg.length < 12) return;
    const reply = Buffer.from(msg);
    reply[2] = (reply[2] ?? 0) | 0x80;
    reply[3] = ((reply[3] ?? 0) & 0xf0) | 5;
    upstream.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => upstream.bind(0, "127.0.9.54", resolve));
  upstreamPort = upstream.address().port;
});

afterAll(() => {
  upstream.close();
});

describe("fuzzing the query handler", () => {
  it(`answers ${RUNS} seeded packets with well-formed replies or drops them, FORMERR for malformed queries`, async () => {
    const forwarder = new Forwarder([], { timeoutMs: 100, maxInFlight: 16 });
    const handler = new QueryHandler(forwarder, () => undefined);
    handler.table = buildServing(seedModel(["127.0.9.54"]), undefined, { resolvConf: [], port: 53, self: [] }).table;
    await fc.assert(
      fc.asyncProperty(cases, fc.boolean(), fc.boolean(), async (c, fromVlan, tcp) => {
        const { packet } = c;
        const limit = tcp ? TCP_LIMIT : 512;
        const result = handler.handle(packet, fromVlan ? vlanIp : undefined, limit);
        const reply = result instanceof Promise ? await result : result;
        const isResponse = packet.length >= 3 && ((packet[2] ?? 0) & 0x80) !== 0;
        if (packet.length < 12 || isResponse) {
          expect(reply).toBeUndefined();
          return;
        }
        expect(reply).toBeDefined();
        if (reply === undefined) return;
        expect(reply.readUInt16BE(0)).toBe(packet.readUInt16BE(0));
        expect((reply[2] ?? 0) & 0x80).toBe(0x80);
        expect((reply[2] ?? 0) & 0x78).toBe((packet[2] ?? 0) & 0x78);
        if (!tcp && c.udpLimit !== undefined) expect(reply.length).toBeLessThanOrEqual(c.udpLimit);
        const rcode = (reply[3] ?? 0) & 0x0f;
        if (c.kind === "broken") expect(rcode).toBe(FORMERR);
        if (c.kind === "valid") expect(rcode).not.toBe(FORMERR);
        if (rcode === FORMERR || rcode === NOTIMP) {
          expect(reply.length).toBe(12);
          return;
        }
        // Anything else echoes the question and parses completely with an independent codec.
        const parsed = Packet.parse(reply);
        expect(parsed.questions).toHaveLength(1);
        expect(parsed.answers).toHaveLength(parsed.header.ancount);
        expect(parsed.authorities).toHaveLength(parsed.header.nscount);
        expect(parsed.additionals).toHaveLength(parsed.header.arcount);
        const qEnd = questionEnd(reply);
        expect(reply.subarray(12, qEnd).equals(packet.subarray(12, qEnd))).toBe(true);
      }),
      { seed: 20240517, numRuns: RUNS },
    );
    forwarder.close();
  });
});

describe("fuzzing the live responder", () => {
  let responder: DnsResponder;

  beforeAll(async () => {
    responder = await startDnsResponder(seedModel(["127.0.9.54"]), {
      host: "127.0.0.1",
      port: 0,
      upstreamPort,
      upstreamTimeoutMs: 200,
      resolvConfPath: "/nonexistent/resolv.conf",
    });
  });
  afterAll(async () => {
    await responder.close();
  });

  it(`keeps answering over UDP and TCP after ${RUNS} packets of barrage`, async () => {
    const port = responder.address.udpPort;
    const client = createSocket("udp4");
    let replies = 0;
    client.on("message", () => replies++);
    await new Promise<void>((resolve) => client.bind(0, VLAN_CLIENT, resolve));
    const packets = fc.sample(cases, { seed: 777, numRuns: RUNS });
    const before = responder.stats().queries;
    for (let i = 0; i < packets.length; i += 25) {
      for (const c of packets.slice(i, i + 25)) client.send(c.packet, port, "127.0.0.1");
      // Flow control: the barrage must reach the handler, not overflow the socket buffers
      // (libuv reads a bounded number of datagrams per loop turn).
      const sent = Math.min(i + 25, packets.length);
      for (let spins = 0; responder.stats().queries - before < sent && spins < 50; spins++) {
        await new Promise((r) => setImmediate(r));
      }
    }
    // Garbage over TCP too: random bytes, absurd lengths, frames cut short.
    for (const c of packets.slice(0, 50)) {
      await new Promise<void>((resolve) => {
        const s = connect(port, "127.0.0.1", () => {
          const frame = Buffer.alloc(2);
          frame.writeUInt16BE(c.packet.length);
          s.end(Buffer.concat([frame, c.packet, c.packet.subarray(0, 7)]));
        });
        s.on("error", () => {
          resolve();
        });
        s.on("close", () => {
          resolve();
        });
        s.resume();
      });
    }
    // Wait until the replies (forwarded ones included) stop arriving.
    for (let last = -1; last !== replies;) {
      last = replies;
      await new Promise((r) => setTimeout(r, 300));
    }
    client.close();
    const answerable = packets.filter((c) => c.packet.length >= 12 && ((c.packet[2] ?? 0) & 0x80) === 0).length;
    expect(responder.stats().queries - before).toBeGreaterThan(RUNS * 0.95);
    expect(replies).toBeGreaterThan(answerable * 0.95);

    const query = encodeQuery({ id: 99, rd: true, name: `api.${DOMAIN}`, type: 1, qclass: 1, edns: undefined });
    const udpReply = await new Promise<Buffer>((resolve) => {
      const s = createSocket("udp4");
      s.on("message", (m) => {
        s.close();
        resolve(m);
      });
      s.bind(0, VLAN_CLIENT, () => {
        s.send(query, port, "127.0.0.1");
      });
    });
    expect(Packet.parse(udpReply).answers[0]?.address).toBe(PROXY_IP);
    const tcpReply = await new Promise<Buffer>((resolve, reject) => {
      const s = connect({ port, host: "127.0.0.1", localAddress: VLAN_CLIENT }, () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(query.length);
        s.write(Buffer.concat([len, query]));
      });
      let buf = Buffer.alloc(0);
      s.on("data", (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          s.destroy();
          resolve(buf.subarray(2));
        }
      });
      s.on("error", reject);
    });
    expect(Packet.parse(tcpReply).answers[0]?.address).toBe(PROXY_IP);
  });
});
