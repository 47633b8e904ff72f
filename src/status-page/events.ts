// The status page's live feed: server-sent events (text/event-stream). Each client gets the whole
// view on connect, then the whole view again whenever it changed (coalesced: a burst of pushes is
// one event), and a comment line as heartbeat so proxies and the browser keep the stream open.
// Clients that go away are dropped on their response's "close".
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
}

/** One SSE message carrying the view; JSON has no raw newline, so one `data:` line suffices. */
export function statusEvent(view: StatusView): string {
  return `event: status\ndata: ${JSON.stringify(view)}\n\n`;
}

/** Fans the view out to every connected page. */
export class StatusEvents {
  readonly #view: () => StatusView;
  /** Each page and the last event it was sent (pages connect at different moments). */
  readonly #clients = new Map<ServerResponse, string>();
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #coalesceMs: number;
  #pending: TimerHandle | undefined;
  #heartbeat: TimerHandle | undefined;

  constructor(view: () => StatusView, options: StatusEventsOptions = {}) {
    this.#view = view;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#heartbeatMs = options.heartbeatMs ?? 15_000;
    this.#coalesceMs = options.coalesceMs ?? 100;
  }

  /** Connected pages right now. */
  get clients(): number {
    return this.#clients.size;
  }

  /** Serves one GET of the event stream: headers, the current view, then updates until it closes. */
  attach(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    // retry: how long the browser waits before reconnecting after the server went away.
    const event = statusEvent(this.#view());
    res.write(`retry: 2000\n\n${event}`);
    this.#clients.set(res, event);
    const drop = (): void => {
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
    for (const [res, last] of this.#clients) {
      if (last === event) continue;
      this.#clients.set(res, event);
      res.write(event);
    }
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return;
    const beat = (): void => {
      for (const res of this.#clients.keys()) res.write(": heartbeat\n\n");
      this.#heartbeat = this.#clock.setTimeout(beat, this.#heartbeatMs);
    };
    this.#heartbeat = this.#clock.setTimeout(beat, this.#heartbeatMs);
  }

  #stopHeartbeat(): void {
    if (this.#heartbeat !== undefined) this.#clock.clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}
