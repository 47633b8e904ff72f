// The legitimate client, in its own process so a busy flood generator cannot delay it: `count` A
// queries over UDP, one at a time, `gapMs` apart, each timed from send to reply (a reply not back
// within 2 s is lost). With `tcpEveryMs` > 0 it also tries one query over TCP that often and counts
// the answered ones (the TCP floods take TCP slots, not UDP). Prints one JSON object on stdout, with
// each query's send time (epoch ms) and latency (-1: lost) in `samples`, so a caller can cut windows.
// Usage: node probe.js PORT COUNT GAP_MS [TCP_EVERY_MS]; COUNT 0 = until standard input ends.
import { createSocket } from "node:dgram";
import { connect } from "node:net";
import { aQuery, LEGIT_NAME, tcpFramed } from "./dns-wire.js";

const TIMEOUT_MS = 2000;
const [port, count, gapMs, tcpEveryMs] = process.argv.slice(2).map(Number) as [number, number, number, number?];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Set when standard input ends (COUNT 0). */
let stdinEnded = false;

async function udpSeries(): Promise<{ latencies: number[]; lost: number; samples: [number, number][] }> {
  const socket = createSocket("udp4");
  let waiting: ((id: number) => void) | undefined;
  socket.on("message", (msg: Buffer) => {
    if (msg.length >= 2) waiting?.(msg.readUInt16BE(0));
  });
  const latencies: number[] = [];
  const samples: [number, number][] = [];
  let lost = 0;
  for (let k = 0; count === 0 ? !stdinEnded : k < count; k += 1) {
    const id = k & 0xffff;
    const sentAt = performance.timeOrigin + performance.now();
    const t0 = process.hrtime.bigint();
    const answered = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        resolve(false);
      }, TIMEOUT_MS);
      waiting = (got) => {
        if (got !== id) return;
        clearTimeout(timer);
        resolve(true);
      };
      socket.send(aQuery(id, LEGIT_NAME), port, "127.0.0.1");
    });
    const ms = answered ? Number(process.hrtime.bigint() - t0) / 1e6 : -1;
    samples.push([Math.round(sentAt * 1000) / 1000, Math.round(ms * 1000) / 1000]);
    if (answered) latencies.push(ms);
    else lost += 1;
    await sleep(gapMs);
  }
  socket.close();
  return { latencies, lost, samples };
}

/**
 * One query over a new TCP connection: answered within the timeout or not. From 127.0.0.2: the
 * floods come from 127.0.0.1, and the server bounds TCP connections per client address.
 */
function tcpOnce(id: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: "127.0.0.1", localAddress: "127.0.0.2" });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => {
      done(false);
    }, TIMEOUT_MS);
    let got = Buffer.alloc(0);
    s.on("connect", () => s.write(tcpFramed(aQuery(id, LEGIT_NAME))));
    s.on("data", (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 4) done(got.readUInt16BE(2) === id);
    });
    s.on("error", () => {
      done(false);
    });
    s.on("close", () => {
      done(false);
    });
  });
}

async function main(): Promise<void> {
  if (count === 0)
    process.stdin
      .on("end", () => {
        stdinEnded = true;
      })
      .resume();
  let stop = false;
  let tcpTried = 0;
  let tcpAnswered = 0;
  const tcp = (async () => {
    if (tcpEveryMs === undefined || tcpEveryMs <= 0) return;
    while (!stop) {
      tcpTried += 1;
      if (await tcpOnce(0x7000 + (tcpTried & 0xfff))) tcpAnswered += 1;
      await sleep(tcpEveryMs);
    }
  })();
  const udp = await udpSeries();
  stop = true;
  await tcp;
  process.stdout.write(`${JSON.stringify({ ...udp, tcpTried, tcpAnswered })}\n`);
}

await main();
