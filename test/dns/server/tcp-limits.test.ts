// The responder's TCP side under hostile clients (issue 25 rows 5, 8 and 15), over real sockets on
// loopback: a client that pipelines queries and never reads its replies, clients trickling one
// byte at a time, more connections than the cap. What is asserted is the server's own state
// (queries read, reply bytes queued, connections open) and what clients get; the deadlines run on
// an injected clock.

import { createSocket } from "node:dgram";
import { Packet } from "dns2";
import { afterEach, describe, expect, it } from "vitest";
import { startDnsResponder, type DnsResponder, type DnsResponderOptions } from "../../../src/dns/server/index.js";
import { addresses, dig, DOMAIN, FORWARDED_IP, INTERNAL_IP, seedModel, startStandIn, type StandIn } from "./helpers.js";
import { ManualClock } from "../../support/manual-clock.js";
import { frame, RawTcpClient, settled, until } from "./tcp-client.js";
import { skipUnless, toolMissing } from "../../support/peers.js";

const HAVE_DIG = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) === undefined;
const MAX_FRAME = 2 + 65535;

let responder: DnsResponder | undefined;
let upstream: StandIn | undefined;
const clients: RawTcpClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await responder?.close();
  await upstream?.close();
  responder = undefined;
  upstream = undefined;
});

async function start(opts: Partial<DnsResponderOptions>, upstreamHost?: string): Promise<DnsResponder> {
  if (upstreamHost !== undefined) upstream = await startStandIn(upstreamHost);
  responder = await startDnsResponder(seedModel(upstreamHost === undefined ? [] : [upstreamHost]), {
    host: "127.0.0.1",
    port: 0,
    resolvConfPath: "/nonexistent/resolv.conf",
    ...(upstream === undefined ? {} : { upstreamPort: upstream.port }),
    ...opts,
  });
  return responder;
}

async function open(r: DnsResponder, source?: string): Promise<RawTcpClient> {
  const c = await RawTcpClient.open(r.address.tcpPort, source);
  clients.push(c);
  return c;
}

/** One A query over UDP; the addresses answered. */
async function udpAsk(port: number, name: string): Promise<string[]> {
  const s = createSocket("udp4");
  try {
    const reply = await new Promise<Buffer>((resolve) => {
      s.on("message", resolve);
      s.send(frame(name, 7).subarray(2), port, "127.0.0.1");
    });
    return Packet.parse(reply).answers.map((a) => a.address ?? "");
  } finally {
    s.close();
  }
}

describe("a TCP client that pipelines queries and never reads the replies", () => {
  const BOUND = 16 * 1024;
  const QUERIES = 60_000;

  it("is no longer read once its unsent replies reach the bound, and is served in full once it reads", async () => {
    const r = await start({ maxTcpUnsentBytes: BOUND, clock: new ManualClock() });
    const c = await open(r);
    const query = frame(`api.${DOMAIN}`, 1);
    c.write(Buffer.concat(Array.from({ length: QUERIES }, () => query)));
    let maxUnsent = 0;
    const read = await settled(() => {
      const s = r.stats();
      maxUnsent = Math.max(maxUnsent, s.tcpUnsentBytes);
      return s.queries;
    });
    // The kernel's socket buffers hold some replies; the process holds at most the bound and a reply.
    expect(read).toBeLessThan(QUERIES);
    expect(r.stats().tcpPaused).toBe(1);
    expect(maxUnsent).toBeGreaterThan(0);
    expect(maxUnsent).toBeLessThanOrEqual(BOUND + MAX_FRAME);

    c.read();
    await until(() => c.replies === QUERIES, "every reply read");
    expect(r.stats()).toMatchObject({ queries: QUERIES, tcpPaused: 0, tcpUnsentBytes: 0 });
  });

  it("has at most maxTcpQueriesInFlight forwarded queries read ahead of their answers", async () => {
    const r = await start(
      { maxTcpQueriesInFlight: 8, upstreamTimeoutMs: 600_000, clock: new ManualClock() },
      "127.0.9.61",
    );
    if (upstream !== undefined) upstream.mode = "silent";
    const c = await open(r);
    c.write(Buffer.concat(Array.from({ length: 200 }, (_, i) => frame("www.example.net", i))));
    expect(await settled(() => r.stats().queries)).toBe(8);
    expect(r.stats()).toMatchObject({ forwarded: 8, tcpPaused: 1 });
  });
});

describe("slow TCP clients", () => {
  /**
   * `slots` connections, each from its own address, send one byte, then another 4 s later; a client
   * asking meanwhile takes the place of one of them; 5 s after their first byte the others are
   * closed, whatever else they sent, and `ask` is answered. Returns what `ask` reported during and
   * after the trickle.
   */
  async function trickle(ask: (r: DnsResponder) => Promise<string[]>): Promise<{ during: string[]; after: string[] }> {
    const clock = new ManualClock();
    const slots = 8;
    const r = await start({ maxTcpConnections: slots, tcpMessageTimeoutMs: 5000, tcpIdleTimeoutMs: 10_000, clock });
    const tricklers = await Promise.all(Array.from({ length: slots }, (_, i) => open(r, `127.0.3.${String(i + 1)}`)));
    await until(() => r.stats().tcpOpen === slots, "every trickler accepted");
    const sendByte = async (b: number): Promise<void> => {
      await Promise.all(
        tricklers.map(
          (t) =>
            new Promise<void>((res) =>
              t.socket.write(Buffer.from([b]), () => {
                res();
              }),
            ),
        ),
      );
      await settled(() => r.stats().tcpOpen, 5);
    };
    await sendByte(0);
    const during = await ask(r);
    expect(r.stats()).toMatchObject({ tcpRefused: 0, tcpEvicted: 1 });
    await until(() => r.stats().tcpOpen === slots - 1, "the asker gone, the evicted trickler not back");

    clock.advance(4000);
    await sendByte(40);
    expect(r.stats().tcpOpen).toBe(slots - 1);
    clock.advance(1000);
    await until(() => tricklers.every((t) => t.closedFlag), "tricklers closed");
    expect(r.stats()).toMatchObject({ tcpOpen: 0, tcpTimedOut: slots - 1 });
    return { during, after: await ask(r) };
  }

  it("lose their connection when a message is not whole by its deadline; a new client is answered meanwhile", async () => {
    const { during, after } = await trickle(async (r) => {
      const c = await open(r);
      c.read();
      c.write(frame(`api.${DOMAIN}`, 1));
      await until(() => c.replies === 1 || c.closedFlag, "an answer or a close");
      c.destroy();
      return c.replies === 1 ? ["answered"] : [];
    });
    expect(during).toEqual(["answered"]);
    expect(after).toEqual(["answered"]);
  });

  it.skipIf(!HAVE_DIG)("do not keep dig +tcp from its answer", async () => {
    const { during, after } = await trickle(async (r) =>
      addresses(await dig({ host: "127.0.0.1", port: r.address.tcpPort }, ["+tcp", `api.${DOMAIN}`])),
    );
    expect(during).toEqual([INTERNAL_IP]);
    expect(after).toEqual([INTERNAL_IP]);
  });

  it("a message's deadline restarts with the next message; an idle connection closes after the idle timeout", async () => {
    const clock = new ManualClock();
    const r = await start({ tcpMessageTimeoutMs: 5000, tcpIdleTimeoutMs: 10_000, clock });
    const c = await open(r);
    c.read();
    const query = frame(`api.${DOMAIN}`, 3);
    c.write(query.subarray(0, 1));
    await settled(() => r.stats().tcpOpen, 5);
    clock.advance(4000);
    c.write(query.subarray(1));
    await until(() => c.replies === 1, "the answer");
    clock.advance(9000);
    await settled(() => r.stats().tcpOpen, 5);
    expect(c.closedFlag).toBe(false);
    clock.advance(1000);
    await until(() => c.closedFlag, "closed when idle");
    expect(r.stats().tcpTimedOut).toBe(1);
  });
});

describe("the TCP connection cap", () => {
  it("past it a new connection takes the place of the one idle longest", async () => {
    const clock = new ManualClock();
    const r = await start({ maxTcpConnections: 4, clock });
    const held: RawTcpClient[] = [];
    for (let i = 0; i < 4; i++) {
      held.push(await open(r, `127.0.4.${String(i + 1)}`));
      await until(() => r.stats().tcpOpen === i + 1, "accepted");
      clock.advance(1);
    }
    const fifth = await open(r, "127.0.4.5");
    fifth.read();
    fifth.write(frame(`api.${DOMAIN}`, 5));
    await until(() => fifth.replies === 1, "an answer on the fifth connection");
    await until(() => held[0]?.closedFlag === true, "the oldest idle connection closed");
    expect(held.map((c) => c.closedFlag)).toEqual([true, false, false, false]);
    expect(r.stats()).toMatchObject({ tcpOpen: 4, tcpEvicted: 1, tcpRefused: 0 });
  });

  it("when every connection is answering, a new one is closed at once while UDP answers and forwards; a freed slot is reused", async () => {
    const r = await start({ maxTcpConnections: 4, upstreamTimeoutMs: 600_000, clock: new ManualClock() }, "127.0.9.62");
    if (upstream !== undefined) upstream.mode = "silent";
    const held: RawTcpClient[] = [];
    for (let i = 0; i < 4; i++) {
      const c = await open(r, `127.0.5.${String(i + 1)}`);
      c.write(frame("www.example.net", i));
      held.push(c);
    }
    await until(() => r.stats().forwarded === 4, "four queries waiting on the upstream");
    const fifth = await open(r);
    await until(() => fifth.closedFlag, "the fifth connection closed");
    expect(r.stats()).toMatchObject({ tcpOpen: 4, tcpRefused: 1, tcpEvicted: 0 });

    if (upstream !== undefined) upstream.mode = "answer";
    expect(await udpAsk(r.address.udpPort, `api.${DOMAIN}`)).toEqual([INTERNAL_IP]);
    expect(await udpAsk(r.address.udpPort, "www.example.net")).toEqual([FORWARDED_IP]);

    held[0]?.destroy();
    await until(() => r.stats().tcpOpen === 3, "a slot freed");
    const next = await open(r);
    next.read();
    next.write(frame(`api.${DOMAIN}`, 5));
    await until(() => next.replies === 1, "an answer on the freed slot");
  });

  it("one client address holds at most maxTcpConnectionsPerClient; past it its new ones are closed, others' accepted", async () => {
    const r = await start({ maxTcpConnectionsPerClient: 2, clock: new ManualClock() });
    const mine = [await open(r, "127.0.6.1"), await open(r, "127.0.6.1")];
    await until(() => r.stats().tcpOpen === 2, "two accepted");
    const third = await open(r, "127.0.6.1");
    await until(() => third.closedFlag, "the third from that address closed");
    expect(r.stats()).toMatchObject({ tcpOpen: 2, tcpRefused: 1 });
    const other = await open(r, "127.0.6.2");
    other.read();
    other.write(frame(`api.${DOMAIN}`, 6));
    await until(() => other.replies === 1, "another address answered");
    mine[0]?.destroy();
    await until(() => r.stats().tcpOpen === 2, "a slot of that address freed");
    const again = await open(r, "127.0.6.1");
    again.read();
    again.write(frame(`api.${DOMAIN}`, 7));
    await until(() => again.replies === 1, "that address answered again");
    expect(r.stats().tcpRefused).toBe(1);
  });
});
