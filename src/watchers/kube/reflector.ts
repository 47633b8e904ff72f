// One resource's list+watch loop, kept alive whatever the API server does: a clean end re-watches
// from the last resourceVersion, 410 Gone (or a silent connection) re-lists, any other failure
// retries with jittered backoff. Objects are kept through failures: consumers keep seeing the last
// list, never an empty one because the API went away.
import { backoffDelay, type BackoffOptions } from "../../util/backoff.js";
import { sleep, type Clock, type TimerHandle } from "../../util/clock.js";
import { collectionPath, type WatchedResource } from "./resources.js";
import {
  KubeApiError,
  statusCode,
  watchError,
  type KubeObject,
  type KubeRest,
  type WatchEvent,
} from "../../kube/rest.js";

/** Why a reflector restarted its watch, for logs and metrics. */
export type RestartReason = "expired" | "watchdog" | "error";

/** Tuning of a reflector. */
export interface ReflectorOptions {
  readonly clock: Clock;
  /** Server-side watch timeout; each watch asks for a random value in [t, 2t) so replicas spread out (default 300 s). */
  readonly watchTimeoutSeconds?: number;
  /** Re-list when a watch has been silent (no event, no bookmark) this long (default: 2 × watchTimeoutSeconds). */
  readonly watchdogMs?: number;
  readonly backoff?: BackoffOptions;
  /** Page size of lists (default 500). */
  readonly pageSize?: number;
  /** An object changed (its key), or the whole list was replaced (none). */
  readonly onChange: (key?: string) => void;
  readonly onRestart?: (reason: RestartReason, error: unknown) => void;
}

/** "<namespace>/<name>" ("/<name>" cluster-scoped): the key of an object within its resource. */
export function keyOf(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
}

class WatchdogFired extends Error {}

/** List+watch of one resource into an in-memory map. */
export class Reflector {
  readonly resource: WatchedResource<string>;
  /** One string shared by every object, not a copy per object. */
  readonly #apiVersion: string;
  readonly #rest: KubeRest;
  readonly #opts: ReflectorOptions;
  #items = new Map<string, KubeObject>();
  #rv: string | undefined;
  #synced = false;
  #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #syncWaiters: (() => void)[] = [];

  constructor(rest: KubeRest, resource: WatchedResource<string>, opts: ReflectorOptions) {
    this.#rest = rest;
    this.resource = resource;
    this.#apiVersion = apiVersionOf(resource);
    this.#opts = opts;
  }

  /** Whether the first list has completed. */
  get synced(): boolean {
    return this.#synced;
  }

  /** The objects as last seen (the map is replaced on re-list, never emptied by failures). */
  get items(): ReadonlyMap<string, KubeObject> {
    return this.#items;
  }

  /** Resolves after the first successful list. */
  whenSynced(): Promise<void> {
    return this.#synced ? Promise.resolve() : new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Ends the loop and its open watch. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    let attempt = 0;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        if (this.#rv === undefined) await this.#list(signal);
        await this.#watch(signal);
        attempt = 0;
      } catch (e) {
        if (isAborted(signal)) break;
        if (statusCode(e) === 410 || e instanceof WatchdogFired) {
          this.#rv = undefined;
          this.#opts.onRestart?.(e instanceof WatchdogFired ? "watchdog" : "expired", e);
          continue;
        }
        attempt++;
        this.#opts.onRestart?.("error", e);
        await sleep(
          this.#opts.clock,
          backoffDelay(attempt, this.#opts.backoff ?? { initialMs: 200, maxMs: 30_000 }),
          signal,
        );
      }
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    const items = new Map<string, KubeObject>();
    let cont: string | undefined;
    let rv = "";
    do {
      const page = await this.#rest.request<{
        metadata?: { resourceVersion?: string; continue?: string };
        items?: KubeObject[];
      }>({
        method: "GET",
        path: collectionPath(this.resource, this.resource.namespace),
        query: {
          labelSelector: this.resource.labelSelector,
          limit: String(this.#opts.pageSize ?? 500),
          continue: cont,
        },
        signal,
      });
      for (const o of page.items ?? []) {
        // Built-in list items omit kind/apiVersion; restore them so consumers see whole objects.
        const obj = this.#project({ apiVersion: this.#apiVersion, kind: this.resource.kind, ...o });
        items.set(keyOf(obj), obj);
      }
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue === "" ? undefined : page.metadata?.continue;
    } while (cont !== undefined);
    this.#items = items;
    this.#rv = rv;
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
    this.#opts.onChange();
  }

  async #watch(outer: AbortSignal): Promise<void> {
    const t = this.#opts.watchTimeoutSeconds ?? 300;
    const timeout = Math.floor(t + Math.random() * t);
    const watchdogMs = this.#opts.watchdogMs ?? 2 * t * 1000;
    const ctl = new AbortController();
    const onOuter = (): void => {
      ctl.abort();
    };
    outer.addEventListener("abort", onOuter, { once: true });
    const outcome: { fired: boolean; failure: Error | undefined } = { fired: false, failure: undefined };
    let timer: TimerHandle | undefined;
    const arm = (): void => {
      if (timer !== undefined) this.#opts.clock.clearTimeout(timer);
      timer = this.#opts.clock.setTimeout(() => {
        outcome.fired = true;
        ctl.abort();
      }, watchdogMs);
    };
    arm();
    try {
      await this.#rest.watch(
        collectionPath(this.resource, this.resource.namespace),
        {
          resourceVersion: this.#rv,
          allowWatchBookmarks: "true",
          timeoutSeconds: String(timeout),
          labelSelector: this.resource.labelSelector,
        },
        (e) => {
          arm();
          try {
            this.#apply(e);
          } catch (err) {
            outcome.failure = err instanceof Error ? err : new Error(String(err));
            ctl.abort();
          }
        },
        ctl.signal,
      );
    } finally {
      if (timer !== undefined) this.#opts.clock.clearTimeout(timer);
      outer.removeEventListener("abort", onOuter);
    }
    if (outcome.failure !== undefined) throw outcome.failure;
    if (outcome.fired) throw new WatchdogFired(`${this.resource.plural}: watch silent for ${watchdogMs} ms`);
  }

  #project(o: KubeObject): KubeObject {
    return this.resource.project(o);
  }

  #apply(e: WatchEvent): void {
    const obj = e.object;
    if (e.type === "ERROR") throw watchError(obj);
    const rv = obj.metadata?.resourceVersion;
    if (e.type === "BOOKMARK") {
      if (rv !== undefined) this.#rv = rv;
      return;
    }
    const full = this.#project({ apiVersion: this.#apiVersion, kind: this.resource.kind, ...obj });
    const key = keyOf(full);
    if (e.type === "ADDED" || e.type === "MODIFIED") this.#items.set(key, full);
    else if (e.type === "DELETED") this.#items.delete(key);
    else throw new KubeApiError(500, "", `unknown watch event type ${e.type}`);
    if (rv !== undefined) this.#rv = rv;
    this.#opts.onChange(key);
  }
}

function apiVersionOf(r: Pick<WatchedResource, "group" | "version">): string {
  return r.group === "" ? r.version : `${r.group}/${r.version}`;
}

// A function call, so TypeScript does not narrow `aborted` across awaits.
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
