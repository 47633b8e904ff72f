// The control-socket client over real unix sockets, against a scripted peer that behaves like
// Kea 2.2 (one command per connection, answer, close) and can misbehave on demand: answers in
// pieces, never answers, closes early. Behaviour with the real Kea is in kea-sync.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  KeaCommandError,
  KeaControlClient,
  KeaEmptyError,
  KeaTimeoutError,
  KeaTransportError,
  KeaUnreachableError,
  KeaUnsupportedError,
  isTransient,
} from "../../src/dhcp/kea/index.js";

type Reply = (command: { command: string; arguments?: unknown }, sock: Socket) => void;

interface Peer {
  readonly path: string;
  /** Highest number of commands received but not yet answered, at once. */
  readonly maxOpen: () => number;
  readonly received: string[];
}

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "oooi-kc-"));
  dirs.push(d);
  return d;
}

async function peer(reply: Reply): Promise<Peer> {
  const path = join(scratch(), "sock");
  let open = 0;
  let maxOpen = 0;
  const received: string[] = [];
  const server = createServer((sock) => {
    let buf = "";
    sock.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      let cmd: { command: string; arguments?: unknown };
      try {
        cmd = JSON.parse(buf) as typeof cmd;
      } catch {
        return;
      }
      received.push(cmd.command);
      open++;
      maxOpen = Math.max(maxOpen, open);
      // Answered once the reply is flushed (or the connection is gone).
      let counted = true;
      const done = (): void => {
        if (counted) {
          counted = false;
          open--;
        }
      };
      sock.on("finish", done).on("close", done);
      reply(cmd, sock);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return { path, maxOpen: () => maxOpen, received };
}

function answer(sock: Socket, body: unknown, delayMs = 0): void {
  setTimeout(() => {
    sock.end(JSON.stringify(body));
  }, delayMs);
}

describe("KeaControlClient", () => {
  it("sends one command per connection, strictly one at a time, in call order", async () => {
    const p = await peer((cmd, sock) => {
      answer(sock, { result: 0, text: cmd.command, arguments: cmd.arguments ?? null }, 15);
    });
    const c = new KeaControlClient(p.path);
    const names = ["a", "b", "c", "d", "e"];
    const answers = await Promise.all(names.map((n) => c.command(n, { n })));
    expect(answers.map((a) => a.text)).toEqual(names);
    expect(answers.map((a) => a.arguments)).toEqual(names.map((n) => ({ n })));
    expect(p.received).toEqual(names);
    expect(p.maxOpen()).toBe(1);
  });

  it("reads an answer that arrives in pieces, large ones included", async () => {
    const big = {
      result: 0,
      arguments: { leases: Array.from({ length: 20_000 }, (_, i) => ({ "ip-address": `10.0.${i >> 8}.${i & 255}` })) },
    };
    const p = await peer((_cmd, sock) => {
      const text = JSON.stringify(big);
      sock.write(text.slice(0, 7));
      setTimeout(() => {
        sock.end(text.slice(7));
      }, 10);
    });
    const a = await new KeaControlClient(p.path).command("lease4-get-all");
    expect((a.arguments as { leases: unknown[] }).leases).toHaveLength(20_000);
  });

  it("maps result codes to typed errors carrying Kea's text", async () => {
    const codes: Record<string, number> = { bad: 1, unknown: 2, none: 3, odd: 7 };
    const p = await peer((cmd, sock) => {
      answer(sock, { result: codes[cmd.command] ?? 0, text: `text of ${cmd.command}` });
    });
    const c = new KeaControlClient(p.path);
    const failure = (name: string) =>
      c.command(name).then(
        () => undefined,
        (e: unknown) => e,
      );
    const bad = await failure("bad");
    expect(bad).toBeInstanceOf(KeaCommandError);
    expect(bad).toMatchObject({ command: "bad", result: 1, text: "text of bad" });
    expect(await failure("unknown")).toBeInstanceOf(KeaUnsupportedError);
    expect(await failure("none")).toBeInstanceOf(KeaEmptyError);
    expect(await failure("odd")).toMatchObject({ name: "KeaCommandError", result: 7 });
    expect(isTransient(bad)).toBe(false);
    expect(await c.command("fine")).toMatchObject({ result: 0, text: "text of fine" });
  });

  it("accepts the control agent's list-wrapped answer", async () => {
    const p = await peer((_cmd, sock) => {
      answer(sock, [{ result: 0, text: "wrapped" }]);
    });
    expect(await new KeaControlClient(p.path).command("x")).toMatchObject({ text: "wrapped" });
  });

  it("a missing socket and a path nobody listens on are 'Kea not reachable'", async () => {
    const dir = scratch();
    const missing = await new KeaControlClient(join(dir, "absent")).command("x").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(KeaUnreachableError);
    expect(missing).toMatchObject({ code: "ENOENT" });
    writeFileSync(join(dir, "plain"), "");
    const refused = await new KeaControlClient(join(dir, "plain")).command("x").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KeaUnreachableError);
    expect(refused).toMatchObject({ code: "ECONNREFUSED" });
    expect(isTransient(refused)).toBe(true);
  });

  it("times out a command Kea never answers, and the next command still runs", async () => {
    const p = await peer((cmd, sock) => {
      if (cmd.command !== "hang") answer(sock, { result: 0 });
    });
    const c = new KeaControlClient(p.path, { timeoutMs: 100 });
    const hung = c.command("hang").catch((e: unknown) => e);
    const after = c.command("after");
    expect(await hung).toBeInstanceOf(KeaTimeoutError);
    expect(await after).toMatchObject({ result: 0 });
  });

  it("a connection closed before a complete answer is a transport error", async () => {
    const p = await peer((_cmd, sock) => {
      sock.end('{"result": 0, "text": "cut');
    });
    const e = await new KeaControlClient(p.path).command("x").catch((err: unknown) => err);
    expect(e).toBeInstanceOf(KeaTransportError);
    expect(isTransient(e)).toBe(true);
  });
});
