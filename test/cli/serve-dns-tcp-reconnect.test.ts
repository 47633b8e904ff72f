// Reconnecting tricklers against the built `oooi serve` (issue 25 row 15, follow-up;
// docs/security.md#limits): clients that send a byte now and then and reconnect the moment they are
// cut. One address holds at most --dns-max-tcp-per-client (16) connections, the rest
// closed at once, so a real `dig +tcp` from another address is answered; and when tricklers from
// many addresses fill every slot, a new client takes the place of the one waiting longest on its
// client instead of being refused.
import { execFile } from "node:child_process";
import { connect, type Socket } from "node:net";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ServeProcess, until } from "../support/cli.js";
import { exampleCopy } from "../support/examples.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const exec = promisify(execFile);
const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const NAME = "api.alpha.clusters.example.com";
/** What examples/standalone answers a pod-network source (127.0.0.2) for NAME. */
const POD_NETWORK_ANSWER = "172.30.200.10";
/** A connection that has stayed this long was accepted, not closed at once. */
const HELD_MS = 500;

/**
 * `perSource` connections from each of `sources`, each sending the first byte of a length prefix,
 * then one byte a second (never a whole message), reconnecting as soon as it is closed.
 */
function trickle(port: number, sources: readonly string[], perSource: number) {
  const open = new Map<Socket, { source: string; since: number }>();
  let stopped = false;
  let cut = 0;
  const slot = (source: string): void => {
    if (stopped) return;
    const socket = connect({ port, host: "127.0.0.1", localAddress: source });
    const timer = setInterval(() => socket.write(Buffer.from([0x40])), 1000);
    socket.on("connect", () => {
      open.set(socket, { source, since: Date.now() });
      socket.write(Buffer.from([0x00]));
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      const entry = open.get(socket);
      if (entry !== undefined && Date.now() - entry.since < HELD_MS) cut++;
      open.delete(socket);
      setImmediate(() => {
        slot(source);
      });
    });
  };
  for (const source of sources) for (let i = 0; i < perSource; i++) slot(source);
  return {
    /** Connections from `source` open for HELD_MS or longer now. */
    held: (source: string) =>
      [...open.values()].filter((e) => e.source === source && Date.now() - e.since >= HELD_MS).length,
    /** Connections closed within HELD_MS of opening so far. */
    cut: () => cut,
    stop: () => {
      stopped = true;
      for (const s of open.keys()) s.destroy();
    },
  };
}

/** `dig +tcp` from 127.0.0.2, one try: the answer, or dig's complaint. */
async function digTcp(port: number): Promise<string> {
  const args = ["@127.0.0.1", "-p", String(port), "-b", "127.0.0.2", "+tcp", "+tries=1", "+time=3", "+short", NAME];
  const r = await exec("dig", args).catch((e: unknown) => ({
    stdout: (e as { stdout?: string }).stdout ?? "dig failed",
  }));
  return r.stdout.trim();
}

let serve: ServeProcess | undefined;
let flood: ReturnType<typeof trickle> | undefined;
afterEach(async () => {
  flood?.stop();
  await serve?.stop();
  flood = undefined;
  serve = undefined;
});

async function startServe(maxConnections: number): Promise<number> {
  serve = new ServeProcess(
    ["--manifests", exampleCopy("standalone"), "--no-xds", "--dns-listen", "127.0.0.1:0"].concat(
      "--dns-max-tcp-connections",
      String(maxConnections),
    ),
  );
  const s = serve;
  const port = await s.dnsPort();
  await until(() => s.log.includes("rendered"), "serve answering DNS");
  await until(async () => (await digTcp(port)) === POD_NETWORK_ANSWER, "a first answer over TCP");
  return port;
}

describe.skipIf(digMissing)("oooi serve: clients that trickle and reconnect at once", () => {
  it("one address holds at most 16 connections, its others closed at once; dig +tcp from another is answered", async () => {
    const port = await startServe(32);
    flood = trickle(port, ["127.0.0.1"], 48);
    const f = flood;
    let most = 0;
    const sample = setInterval(() => (most = Math.max(most, f.held("127.0.0.1"))), 50);
    try {
      await until(() => f.held("127.0.0.1") >= 16 && f.cut() >= 32, "the flood holding its share");
      for (let i = 0; i < 3; i++) expect(await digTcp(port)).toBe(POD_NETWORK_ANSWER);
    } finally {
      clearInterval(sample);
    }
    expect(most).toBe(16);
  }, 60_000);

  it("tricklers from many addresses fill every slot; a new client replaces the one waiting longest", async () => {
    const port = await startServe(32);
    const sources = ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"];
    flood = trickle(port, sources, 12);
    const f = flood;
    const held = () => sources.reduce((n, s) => n + f.held(s), 0);
    await until(() => held() >= 30, "the tricklers holding the slots");
    for (let i = 0; i < 3; i++) expect(await digTcp(port)).toBe(POD_NETWORK_ANSWER);
  }, 60_000);
});
