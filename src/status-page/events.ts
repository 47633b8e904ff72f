// The status page's live feed: server-sent events (text/event-stream). Each client gets the whole
// view on connect, then the whole view again whenever it changed (coalesced: a burst of pushes is
// one event), and a comment line as heartbeat so proxies and the browser keep the stream open.
// Clients that go away are dropped on their response's "close".
// A page that does not read (a stalled tab, a hostile client) holds at most the one write its socket
// refused: while it has not drained it is sent nothing, and once it drains it gets the latest view
// only, never the backlog — the same "latest snapshot" rule the xDS server applies to slow streams.
// At most `maxClients` pages are served at once; more are refused with 503.
// Format: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
import type { IncomingMessage, ServerResponse } from "node:http";
import { SYSTEM_CLOCK, type Clock, type TimerHandle } from "../util/clock.js";
import type { StatusView } from "./view.js";

export interface StatusEventsOptions {
  /** Comment line interval (default 15 s, under the usual 30–60 s idle timeouts of proxies). */
  readonly heartbeatMs?: number;
  /** How long a change waits for the next one before the view is sent (default 100 ms). */
  readonly coalesceMs?: number;
  readonly clock?: Clock;
  /** Concurrent event streams served; more get 503 (default DEFAULT_MAX_EVENT_CLIENTS). */
  readonly maxClients?: number;
}

/** How many pages may follow the live view at once (`--http-max-event-clients`). */
export const DEFAULT_MAX_EVENT_CLIENTS = 64;

interface Client {
  /** The last event written to it. */
  last: string;
  /** Its socket refused a write and has not drained: the next event waits for "drain". */
  blocked: boolean;
}

/** One SSE message carrying the view; JSON has no raw newline, so one `data:` line suffices. */
export function statusEvent(view: StatusView): string {
  return `event: status\ndata: ${JSON.stringify(view)}\n\n`;
}

/** Fans the view out to every connected page. */
export class StatusEvents {
  readonly #view: () => StatusView;
  /** Each page and the last event it was sent (pages connect at different moments). */
  readonly #clients = new Map<ServerResponse, Client>();
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #coalesceMs: number;
  readonly #maxClients: number;
  #pending: TimerHandle | undefined;
  #heartbeat: TimerHandle | undefined;

  constructor(view: () => StatusView, options: StatusEventsOptions = {}) {
    this.#view = view;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#heartbeatMs = options.heartbeatMs ?? 15_000;
    this.#coalesceMs = options.coalesceMs ?? 100;
    this.#maxClients = options.maxClients ?? DEFAULT_MAX_EVENT_CLIENTS;
  }

  /** Connected pages right now. */
  get clients(): number {
    return this.#clients.size;
  }

  /** Serves one GET of the event stream: headers, the current view, then updates until it closes. */
  attach(req: IncomingMessage, res: ServerResponse): void {
    if (this.#clients.size >= this.#maxClients) {
      const body = `too many live status pages open (limit ${String(this.#maxClients)}, --http-max-event-clients); close one or read /status.json\n`;
      res.writeHead(503, {
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": Buffer.byteLength(body),
        "Retry-After": "10",
        "Cache-Control": "no-store",
      });
      res.end(body);
      return;
    }
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    // retry: how long the browser waits before reconnecting after the server went away.
    const event = statusEvent(this.#view());
    const client: Client = { last: event, blocked: false };
    this.#clients.set(res, client);
    this.#send(res, client, `retry: 2000\n\n${event}`);
    const drained = (): void => {
      client.blocked = false;
      // Whatever changed meanwhile, as one event of the view as it is now.
      const latest = statusEvent(this.#view());
      if (latest === client.last) return;
      client.last = latest;
      this.#send(res, client, latest);
    };
    res.on("drain", drained);
    const drop = (): void => {
      res.off("drain", drained);
      this.#clients.delete(res);
      if (this.#clients.size === 0) this.#stopHeartbeat();
    };
    req.once("close", drop);
    res.once("close", drop);
    this.#startHeartbeat();
  }

  /** Something the view is built from changed; the view goes out once the burst settles. */
  changed(): void {
    if (this.#pending !== undefined || this.#clients.size === 0) return;
    this.#pending = this.#clock.setTimeout(() => {
      this.#pending = undefined;
      this.#flush();
    }, this.#coalesceMs);
  }

  /** Ends every stream and stops the timers (the server is closing). */
  close(): void {
    if (this.#pending !== undefined) this.#clock.clearTimeout(this.#pending);
    this.#pending = undefined;
    this.#stopHeartbeat();
    for (const res of this.#clients.keys()) res.end();
    this.#clients.clear();
  }

  #flush(): void {
    const event = statusEvent(this.#view());
    // A change that shows nothing new on a page (e.g. a repeated subscription) is not sent to it.
    for (const [res, client] of this.#clients) {
      // A blocked page catches up on "drain", with the view as it is then.
      if (client.blocked || client.last === event) continue;
      client.last = event;
      this.#send(res, client, event);
    }
  }

  #send(res: ServerResponse, client: Client, text: string): void {
    if (!res.write(text)) client.blocked = true;
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return;
    const beat = (): void => {
      // A blocked page's connection is evidently open; a comment would only add to its backlog.
      for (const [res, client] of this.#clients) if (!client.blocked) this.#send(res, client, ": heartbeat\n\n");
      this.#heartbeat = this.#clock.setTimeout(beat, this.#heartbeatMs);
    };
    this.#heartbeat = this.#clock.setTimeout(beat, this.#heartbeatMs);
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat !== undefined) this.#clock.clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}
