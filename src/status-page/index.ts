// The live status page of `serve` and `operator`: holds the latest model, reads the xDS status
// record, and tells the event stream when either changed. The composition root feeds it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BuildResult } from "../model/types.js";
import type { Clock } from "../util/clock.js";
import type { XdsStatusView } from "../xds/client-status.js";
import type { SnapshotCache } from "../xds/cache/cache.js";
import { cacheVersions, type CurrentVersions } from "../xds/health.js";
import { StatusEvents } from "./events.js";
import { statusPageHandler } from "./handler.js";
import { buildStatusView, type StatusView } from "./view.js";

export { buildStatusView, type StatusView } from "./view.js";
export { DEFAULT_MAX_EVENT_CLIENTS, StatusEvents, statusEvent } from "./events.js";

export interface StatusPageOptions {
  readonly title: string;
  readonly clock?: Clock;
  readonly heartbeatMs?: number;
  /** Concurrent /events streams (default DEFAULT_MAX_EVENT_CLIENTS). */
  readonly maxEventClients?: number;
}

type Model = Pick<BuildResult, "topologies" | "problems">;

export class StatusPage {
  readonly events: StatusEvents;
  readonly #title: string;
  #model: Model | undefined;
  #xds: XdsStatusView | undefined;
  #current: CurrentVersions | undefined;

  constructor(options: StatusPageOptions) {
    this.#title = options.title;
    this.events = new StatusEvents(() => this.view(), {
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
      ...(options.maxEventClients === undefined ? {} : { maxClients: options.maxEventClients }),
    });
  }

  /** A new rendering: the page shows its Infras, attachments and problems. */
  setModel(model: Model): void {
    this.#model = model;
    this.events.changed();
  }

  /**
   * Shows `status`'s clients and pushes, judged against each group's current versions in `cache`,
   * updating on their events; returns the function that stops it.
   */
  watchXds(status: XdsStatusView, cache?: Pick<SnapshotCache, "getSnapshot" | "subscribe">): () => void {
    this.#xds = status;
    this.#current = cache && cacheVersions(cache);
    const changed = (): void => {
      this.events.changed();
    };
    const names = ["stream-open", "stream-close", "push", "ack", "nack"] as const;
    for (const n of names) status.on(n, changed);
    // A new version makes a client that does not get it BEHIND, with no push to tell.
    const unsubscribe = cache?.subscribe(changed);
    this.events.changed();
    return () => {
      unsubscribe?.();
      for (const n of names) status.off(n, changed);
    };
  }

  view(): StatusView {
    return buildStatusView({
      model: this.#model,
      nodes: this.#xds?.nodes() ?? [],
      pushes: this.#xds?.history() ?? [],
      ...(this.#current === undefined ? {} : { current: this.#current }),
    });
  }

  /** The page's routes in front of `next`. */
  handler(
    next: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    return statusPageHandler({ title: this.#title, view: () => this.view(), events: this.events }, next);
  }

  close(): void {
    this.events.close();
  }
}
