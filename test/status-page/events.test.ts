// The status page's event stream over a real loopback HTTP server, read as raw text/event-stream
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): the view on connect, one
// coalesced update per burst, nothing for a change that shows nothing, heartbeat comments, and a
// client that goes away dropped. Timers are a manual clock; the network is real.
import { createServer, get, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { StatusEvents } from "../../src/status-page/events.js";
import { statusPageHandler } from "../../src/status-page/handler.js";
import { buildStatusView, type StatusView } from "../../src/status-page/view.js";
import { ManualClock } from "../support/manual-clock.js";
import { until } from "../support/cli.js";

interface Stream {
  readonly res: IncomingMessage;
  text: string;
  /** The parsed `data` of every `status` event so far. */
  events(): StatusView[];
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function start(view: () => StatusView, clock: ManualClock) {
  const events = new StatusEvents(view, { clock, heartbeatMs: 15_000, coalesceMs: 100 });
  const server = createServer(
    statusPageHandler({ title: "test", view, events }, (_req, res) => {
      res.writeHead(404).end();
    }),
  );
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { events, port: (server.address() as AddressInfo).port };
}

function connect(port: number): Promise<Stream> {
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/events" }, (res) => {
      const stream: Stream = {
        res,
        text: "",
        events: () =>
          stream.text
            .split("\n\n")
            .filter((block) => block.startsWith("event: status\n"))
            .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)) as StatusView),
      };
      res.setEncoding("utf8").on("data", (d: string) => {
        stream.text += d;
      });
      resolve(stream);
    }).on("error", reject);
  });
}

const empty = buildStatusView({ model: undefined, nodes: [], pushes: [] });
const withProblem = (message: string): StatusView => ({
  ...empty,
  problems: [{ object: "Infra ns/a", field: "spec.cidr", reason: "InvalidSpec", severity: "error", message }],
});

describe("StatusEvents", () => {
  it("sends the view on connect as a text/event-stream, with a retry hint", async () => {
    const clock = new ManualClock();
    const { port } = await start(() => withProblem("first"), clock);
    const s = await connect(port);
    expect(s.res.headers["content-type"]).toMatch(/^text\/event-stream/);
    await until(() => s.events().length === 1, "the snapshot");
    expect(s.text.startsWith("retry: 2000\n\n")).toBe(true);
    expect(s.events()[0]).toEqual(withProblem("first"));
  });

  it("coalesces a burst of changes into one update, and sends nothing when the view did not change", async () => {
    const clock = new ManualClock();
    let view = withProblem("first");
    const { events, port } = await start(() => view, clock);
    const s = await connect(port);
    await until(() => events.clients === 1 && s.events().length === 1, "connected");
    view = withProblem("second");
    events.changed();
    events.changed();
    view = withProblem("third");
    events.changed();
    clock.advance(100);
    await until(() => s.events().length === 2, "one update");
    expect(s.events()[1]).toEqual(withProblem("third"));
    events.changed();
    clock.advance(100);
    view = withProblem("fourth");
    events.changed();
    clock.advance(100);
    await until(() => s.events().length >= 3, "the next real change");
    // The unchanged flush in between sent nothing: the third event is the fourth view.
    expect(s.events().map((v) => v.problems[0]?.message)).toEqual(["first", "third", "fourth"]);
  });

  it("writes a heartbeat comment while a page is connected", async () => {
    const clock = new ManualClock();
    const { events, port } = await start(() => empty, clock);
    const s = await connect(port);
    await until(() => events.clients === 1, "connected");
    clock.advance(15_000);
    await until(() => s.text.includes(": heartbeat\n\n"), "a heartbeat");
    clock.advance(15_000);
    await until(() => s.text.split(": heartbeat\n\n").length === 3, "a second heartbeat");
  });

  it("drops a page that went away, keeps serving the others, and ends every stream on close", async () => {
    const clock = new ManualClock();
    let view = withProblem("first");
    const { events, port } = await start(() => view, clock);
    const gone = await connect(port);
    const stays = await connect(port);
    await until(() => events.clients === 2, "two pages");
    gone.res.destroy();
    await until(() => events.clients === 1, "the closed page dropped");
    view = withProblem("second");
    events.changed();
    clock.advance(100);
    await until(() => stays.events().length === 2, "the remaining page updated");
    const ended = new Promise((r) => stays.res.once("end", r));
    events.close();
    await ended;
    expect(events.clients).toBe(0);
  });

  it("serves the page with a CSP that admits only its own script, /status.json, and 405 on other methods", async () => {
    const clock = new ManualClock();
    const { port } = await start(() => withProblem("x"), clock);
    const page = await fetch(`http://127.0.0.1:${String(port)}/`);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(await page.text()).toMatch(/<script>[\s\S]*EventSource\("events"\)/);
    const json = await fetch(`http://127.0.0.1:${String(port)}/status.json`);
    expect(await json.json()).toEqual(withProblem("x"));
    expect((await fetch(`http://127.0.0.1:${String(port)}/`, { method: "POST" })).status).toBe(405);
    expect((await fetch(`http://127.0.0.1:${String(port)}/metrics`)).status).toBe(404);
  });
});
