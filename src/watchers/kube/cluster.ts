// Every watched resource as one stream of cluster snapshots. Optional (third-party) resources are
// watched only while discovery says they are served, re-checked periodically. Nothing is emitted
// before every reflector's first list: a partial view would make the operator prune what it
// cannot see.
import { asyncScheduler, identity, map, share, Subject, tap, type Observable } from "rxjs";
import { coalesceTurn } from "../../pipeline/coalesce-turn.js";
import { minInterval } from "../../pipeline/min-interval.js";
import type { BackoffOptions } from "../../util/backoff.js";
import { backoffDelay } from "../../util/backoff.js";
import { sleep, SYSTEM_CLOCK, type Clock } from "../../util/clock.js";
import { buildObserved, ChangeHistory, type DecodeCache, type Observed, type RawObjects } from "./observed.js";
import { Reflector, type RestartReason } from "./reflector.js";
import { SnapshotMap } from "./snapshot-map.js";
import { apiPrefix, WATCHED_RESOURCES, type ResourceName, type WatchedResource } from "./resources.js";
import { statusCode, type KubeObject, type KubeRest } from "../../kube/rest.js";
import type { Logger } from "../../util/logger.js";

/** One object of a resource changed (`key`), or possibly all of it (undefined). */
interface WatchChange {
  readonly resource: ResourceName;
  readonly key: string | undefined;
}

/** The initial sync completed: the first snapshot. */
const READY = "ready";

/** Options of ClusterWatcher. */
export interface ClusterWatcherOptions {
  readonly rest: KubeRest;
  readonly logger: Pick<Logger, "debug" | "info" | "warn">;
  readonly clock?: Clock;
  /**
   * Coalescing window: the first change is emitted at once, later ones at most once per window.
   * Default 0: no window — the changes read in one turn of the event loop make one snapshot, emitted
   * as soon as that turn's I/O is handled (a change never waits for a timer; under load, the
   * events read while a rendering ran are coalesced into the next one).
   */
  readonly debounceMs?: number;
  readonly watchTimeoutSeconds?: number;
  readonly watchdogMs?: number;
  /** How often discovery is re-checked for optional resources (default 60 s). */
  readonly discoveryIntervalMs?: number;
  readonly backoff?: BackoffOptions;
  /** Restrict or replace the watched set (tests). */
  readonly resources?: readonly WatchedResource[];
  readonly onRestart?: (resource: string, reason: RestartReason) => void;
  /**
   * Told about a failed request; true when it was the API server being unreachable and is reported
   * there (src/operator/process/api-outage.ts), so this one logs nothing of it.
   */
  readonly unreachable?: (what: string, e: unknown) => boolean;
}

/** Watches the cluster; `snapshots$` emits an Observed after the initial sync and after every burst of changes. */
export class ClusterWatcher {
  /** Hot, shared: subscribe before or after start(); emits only once every resource has synced. */
  readonly snapshots$: Observable<Observed>;
  readonly #opts: ClusterWatcherOptions;
  readonly #clock: Clock;
  readonly #resources: readonly WatchedResource[];
  readonly #reflectors = new Map<ResourceName, Reflector>();
  readonly #served = new Map<ResourceName, boolean>();
  /** Keyed changes after the initial sync; READY once, when it completes. */
  readonly #changes = new Subject<WatchChange | typeof READY>();
  readonly #stop = new AbortController();
  readonly #cache: DecodeCache = new WeakMap();
  #seq = 0;
  #ready = false;
  #readyResolve: () => void = () => undefined;
  #discovery: Promise<void> | undefined;
  #last: Observed | undefined;
  /** The keyed changes of the last snapshots (Observed.changesSince). */
  readonly #history = new ChangeHistory();
  /** Per resource, its view in the last snapshot. */
  readonly #views = new Map<ResourceName, SnapshotMap<KubeObject>>();
  /** Per resource, the keys changed since the last snapshot (undefined: the whole list). */
  #dirty = new Map<ResourceName, Set<string> | undefined>();
  /** Resolves once every resource has completed its first list. */
  readonly ready: Promise<void>;

  constructor(opts: ClusterWatcherOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? SYSTEM_CLOCK;
    this.#resources = opts.resources ?? WATCHED_RESOURCES;
    this.ready = new Promise((resolve) => {
      this.#readyResolve = resolve;
    });
    const windowMs = opts.debounceMs ?? 0;
    this.snapshots$ = this.#changes.pipe(
      coalesceTurn(),
      // Every batch's keys are noted, also those of a batch the window holds back.
      tap((batch) => {
        for (const c of batch) if (c !== READY) this.#changed(c.resource, c.key);
      }),
      windowMs > 0 ? minInterval(windowMs, asyncScheduler) : identity,
      map(() => this.snapshot()),
      share(),
    );
  }

  /** Whether every resource has been listed at least once. */
  isReady(): boolean {
    return this.#ready;
  }

  /** The latest snapshot emitted (undefined before ready). */
  get last(): Observed | undefined {
    return this.#last;
  }

  /** Starts discovery and the reflectors. */
  start(): void {
    this.#discovery ??= this.#discoveryLoop();
  }

  /** Stops every watch; the stream completes. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#discovery;
    await Promise.all([...this.#reflectors.values()].map((r) => r.stop()));
    this.#changes.complete();
  }

  /** The current view (every unserved optional resource empty); only changed keys are copied. */
  snapshot(): Observed {
    const empty = new Map<string, KubeObject>();
    const last = this.#last;
    const raw: Partial<Record<ResourceName, ReadonlyMap<string, KubeObject>>> = {};
    for (const r of WATCHED_RESOURCES) {
      const kept = this.#views.get(r.name);
      const live = this.#reflectors.get(r.name)?.items ?? empty;
      const view =
        kept === undefined
          ? SnapshotMap.copy(live)
          : this.#dirty.has(r.name)
            ? kept.next(live, this.#dirty.get(r.name))
            : kept;
      this.#views.set(r.name, view);
      raw[r.name] = view;
    }
    const dirty = this.#dirty;
    this.#dirty = new Map();
    const built = buildObserved(
      raw as RawObjects,
      ++this.#seq,
      this.#cache,
      last === undefined ? undefined : { observed: last, dirty },
    );
    const history = this.#history;
    history.add(built.seq, built.changes);
    const obs: Observed = { ...built, changesSince: (seq) => history.since(seq, built.seq) };
    this.#last = obs;
    return obs;
  }

  /** Notes a change of one resource: `key`, or (undefined) possibly all of it. */
  #changed(name: ResourceName, key: string | undefined): void {
    const keys = this.#dirty.get(name);
    if (key === undefined || (this.#dirty.has(name) && keys === undefined)) this.#dirty.set(name, undefined);
    else this.#dirty.set(name, (keys ?? new Set()).add(key));
  }

  async #discoveryLoop(): Promise<void> {
    const signal = this.#stop.signal;
    let attempt = 0;
    while (!signal.aborted) {
      let delay = this.#opts.discoveryIntervalMs ?? 60_000;
      try {
        await this.#discover(signal);
        attempt = 0;
      } catch (e) {
        if (isAborted(signal)) break;
        attempt++;
        if (this.#opts.unreachable?.("API discovery", e) !== true)
          this.#opts.logger.warn({ err: (e as Error).message }, "API discovery failed; keeping the watched set");
        delay = backoffDelay(attempt, this.#opts.backoff ?? { initialMs: 200, maxMs: 30_000 });
      }
      await sleep(this.#clock, delay, signal);
    }
  }

  async #discover(signal: AbortSignal): Promise<void> {
    const groups = new Map<string, WatchedResource[]>();
    for (const r of this.#resources) {
      if (!r.optional) continue;
      const key = apiPrefix(r.group, r.version);
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    for (const [path, resources] of groups) {
      let served: Set<string>;
      try {
        const doc = await this.#opts.rest.request<{ resources?: { name?: string }[] }>({ method: "GET", path, signal });
        served = new Set((doc.resources ?? []).map((x) => x.name ?? ""));
      } catch (e) {
        if (statusCode(e) !== 404) throw e;
        served = new Set();
      }
      for (const r of resources) this.#setServed(r, served.has(r.plural));
    }
    for (const r of this.#resources) if (!r.optional) this.#setServed(r, true);
    await this.#checkReady();
  }

  #setServed(r: WatchedResource, served: boolean): void {
    const was = this.#served.get(r.name);
    this.#served.set(r.name, served);
    if (was === served) return;
    if (served) {
      if (was !== undefined || r.optional)
        this.#opts.logger.info({ resource: r.plural, group: r.group }, "API serves it; watching");
      const reflector = new Reflector(this.#opts.rest, r, {
        clock: this.#clock,
        ...(this.#opts.watchTimeoutSeconds === undefined
          ? {}
          : { watchTimeoutSeconds: this.#opts.watchTimeoutSeconds }),
        ...(this.#opts.watchdogMs === undefined ? {} : { watchdogMs: this.#opts.watchdogMs }),
        ...(this.#opts.backoff === undefined ? {} : { backoff: this.#opts.backoff }),
        // Before the initial sync nothing is noted: the first snapshot copies every list whole.
        onChange: (key) => {
          if (this.#ready) this.#changes.next({ resource: r.name, key });
        },
        onRestart: (reason, error) => {
          this.#opts.onRestart?.(r.plural, reason);
          if (reason === "error" && this.#opts.unreachable?.("watches", error) === true) return;
          const log =
            reason === "error"
              ? this.#opts.logger.warn.bind(this.#opts.logger)
              : this.#opts.logger.debug.bind(this.#opts.logger);
          log(
            { resource: r.plural, reason, err: error instanceof Error ? error.message : String(error) },
            "watch restarted",
          );
        },
      });
      this.#reflectors.set(r.name, reflector);
      // One that appears after the initial sync joins when listed (its list triggers a snapshot).
      reflector.start();
    } else if (was === true) {
      this.#opts.logger.info({ resource: r.plural, group: r.group }, "API no longer serves it; dropping its objects");
      const reflector = this.#reflectors.get(r.name);
      this.#reflectors.delete(r.name);
      if (this.#ready) this.#changes.next({ resource: r.name, key: undefined });
      else this.#changed(r.name, undefined);
      void reflector?.stop();
    }
  }

  async #checkReady(): Promise<void> {
    if (this.#ready) return;
    const pending = [...this.#reflectors.values()];
    const all = Promise.all(pending.map((r) => r.whenSynced()));
    await Promise.race([
      all,
      new Promise<void>((resolve) => {
        this.#stop.signal.addEventListener(
          "abort",
          () => {
            resolve();
          },
          { once: true },
        );
      }),
    ]);
    if (isAborted(this.#stop.signal) || this.isReady()) return;
    this.#ready = true;
    this.#opts.logger.info({ resources: pending.length }, "every watched resource listed");
    this.#readyResolve();
    this.#changes.next(READY);
  }
}

// A function call, so TypeScript does not narrow `aborted` across awaits.
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
