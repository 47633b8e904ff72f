// `serve --dns-max-tcp-connections`, through the built CLI: past the cap a new DNS-over-TCP
// connection takes the place of the open one idle longest; the other keeps being answered.
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exampleCopy } from "../support/examples.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const example = exampleCopy("standalone");

async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached within 30 s");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A DNS query for `name` (type A), length-prefixed for TCP. */
function tcpQuery(id: number, name: string): Buffer {
  const labels = name.split(".").map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const header = Buffer.from([id >> 8, id & 0xff, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  const body = Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
  return Buffer.concat([Buffer.from([body.length >> 8, body.length & 0xff]), body]);
}

/** What became of a connection: the first reply's id, or "closed" if it ended without one. */
function outcome(socket: Socket): Promise<number | "closed"> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    socket.on("data", (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 4) resolve(got.readUInt16BE(2));
    });
    socket.on("close", () => {
      resolve("closed");
    });
    socket.on("error", () => {
      resolve("closed");
    });
  });
}

describe("oooi serve --dns-max-tcp-connections", () => {
  it("past the cap a new connection replaces the one idle longest and keeps answering the other", async () => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        "serve",
        "--manifests",
        example,
        "--no-xds",
        "--dns-listen",
        "127.0.0.1:0",
        "--dns-max-tcp-connections",
        "2",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      log += d;
    });
    const sockets: Socket[] = [];
    try {
      let port = 0;
      await eventually(() => {
        port = Number(/DNS responder listening on 127\.0\.0\.1:(\d+)/.exec(log)?.[1] ?? 0);
        return port > 0;
      });
      const open = async (): Promise<Socket> => {
        const s = connect(port, "127.0.0.1");
        sockets.push(s);
        await new Promise<void>((resolve, reject) => s.once("connect", resolve).once("error", reject));
        return s;
      };
      const first = await open();
      const firstEnd = new Promise<void>((resolve) => first.once("close", resolve));
      const answered = outcome(first);
      first.write(tcpQuery(1, "api.alpha.clusters.example.com"));
      expect(await answered).toBe(1);
      // The server's clock counts milliseconds: the second connection's last answer comes later.
      await new Promise((r) => setTimeout(r, 20));
      const second = await open();
      const answer2 = outcome(second);
      second.write(tcpQuery(2, "api.alpha.clusters.example.com"));
      expect(await answer2).toBe(2);
      const third = await open();
      const answer3 = outcome(third);
      third.write(tcpQuery(3, "api.alpha.clusters.example.com"));
      expect(await answer3).toBe(3);
      await firstEnd;
      const again = outcome(second);
      second.write(tcpQuery(4, "api.alpha.clusters.example.com"));
      expect(await again).toBe(4);
    } finally {
      for (const s of sockets) s.destroy();
      child.kill("SIGTERM");
    }
  });
});
