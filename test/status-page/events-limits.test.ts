// Issue 25 row 10: pages on /events that never read, over a real loopback server. A stalled page
// holds at most the write its socket refused (not one view per change), and when it reads again it
// gets the latest view, not the backlog; beyond the client cap a page is refused with 503 and a
// body naming the limit and its flag. Timers are a manual clock; sockets are real.
import { createServer, type Server, type ServerResponse } from "node:http";
import { connect as tcpConnect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { StatusEvents } from "../../src/status-page/events.js";
import { statusPageHandler } from "../../src/status-page/handler.js";
import { buildStatusView, type StatusView } from "../../src/status-page/view.js";
import { ManualClock } from "../support/manual-clock.js";
import { until } from "../support/cli.js";

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const empty = buildStatusView({ model: undefined, nodes: [], pushes: [] });
/** A view of about `size` bytes whose first problem says `tag`. */
const bigView = (tag: string, size: number): StatusView => ({
  ...empty,
  problems: [
    { object: "Infra ns/a", field: "spec.cidr", reason: "InvalidSpec", severity: "error", message: tag },
    { object: "Infra ns/a", field: "spec.x", reason: "InvalidSpec", severity: "error", message: "x".repeat(size) },
  ],
});

async function start(view: () => StatusView, clock: ManualClock, maxClients?: number) {
  const events = new StatusEvents(view, {
    clock,
    heartbeatMs: 15_000,
    coalesceMs: 100,
    ...(maxClients === undefined ? {} : { maxClients }),
  });
  const server = createServer(
    statusPageHandler({ title: "test", view, events }, (_req, res) => {
      res.writeHead(404).end();
    }),
  );
  const responses: ServerResponse[] = [];
  server.on("request", (_req, res: ServerResponse) => responses.push(res));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { events, responses, port: (server.address() as AddressInfo).port };
}

/** A raw HTTP client of /events whose reading the test controls; `text` is what it read so far. */
function rawEvents(port: number, paused: boolean): { socket: Socket; text: () => string } {
  const socket = tcpConnect({ host: "127.0.0.1", port });
  sockets.push(socket);
  let text = "";
  socket.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  if (paused) socket.pause();
  socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${String(port)}\r\n\r\n`);
  return { socket, text: () => text };
}

/** The first problem's message of each status event in a raw (chunked) HTTP response, in order. */
const statusEvents = (text: string): string[] =>
  [...text.matchAll(/event: status\ndata: \{[^\n]*?"message":"([^"]*)"/g)].map((m) => m[1] ?? "");

describe("StatusEvents under pages that do not read", () => {
  it("holds at most one refused write for a stalled page and sends it only the latest view when it drains", async () => {
    const clock = new ManualClock();
    const size = 1 << 20;
    let view = bigView("v0", size);
    const { events, responses, port } = await start(() => view, clock);
    const client = rawEvents(port, true);
    await until(() => events.clients === 1, "the page connected");
    const res = responses[0];
    if (res === undefined) throw new Error("no server-side response");
    // 40 changes of a 1 MiB view: far beyond what loopback's socket buffers take.
    for (let i = 1; i <= 40; i++) {
      view = bigView(`v${String(i)}`, size);
      events.changed();
      clock.advance(100);
      clock.advance(15_000); // heartbeats too
    }
    // Before: every change queued in the response (~40 MiB); now at most the one refused write.
    expect(res.writableLength).toBeLessThan(2 * size + 4096);

    client.socket.resume();
    await until(() => client.text().includes('"message":"v40"'), "the latest view after draining", 30_000);
    const received = statusEvents(client.text());
    // The connect snapshot, the writes the socket took before it filled, and the latest: no backlog.
    expect(received.length).toBeLessThan(10);
    expect(received.at(-1)).toBe("v40");
  });

  it("refuses pages beyond the cap with 503 naming the limit and its flag, and admits one when a page leaves", async () => {
    const clock = new ManualClock();
    const { events, port } = await start(() => empty, clock, 2);
    const a = rawEvents(port, false);
    rawEvents(port, false);
    await until(() => events.clients === 2, "two pages");
    const refused = await fetch(`http://127.0.0.1:${String(port)}/events`);
    expect(refused.status).toBe(503);
    expect(await refused.text()).toMatch(/limit 2, --http-max-event-clients/);
    expect(events.clients).toBe(2);
    a.socket.destroy();
    await until(() => events.clients === 1, "the closed page dropped");
    const again = rawEvents(port, false);
    await until(() => events.clients === 2 && again.text().includes("event: status\n"), "a new page admitted");
  });
});
