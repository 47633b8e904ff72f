// The manifest directory as a stream: a load at subscription, then a reload after file changes.
// chokidar rather than Node's recursive fs.watch: on Linux the latter watches the inode a name had
// when watching began, so a file replaced by rename (sed -i, an editor's atomic save, git checkout)
// went silent for good. chokidar watches directories and re-attaches to the new file.
import { realpath, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { watch, type FSWatcher } from "chokidar";
import {
  asyncScheduler,
  catchError,
  concat,
  defer,
  EMPTY,
  exhaustMap,
  filter,
  from,
  map,
  merge,
  mergeMap,
  Observable,
  of,
  share,
  switchMap,
  tap,
  throttleTime,
  timer,
  type ObservableInput,
  type OperatorFunction,
  type SchedulerLike,
  type Subscription,
} from "rxjs";
import type { ObjectChange } from "../model/incremental/infras-read.js";
import { backoffDelay, type BackoffOptions } from "../util/backoff.js";
import { ManifestReader } from "./manifest-cache.js";
import { errnoText } from "./manifest-file-read.js";
import { loadManifests, type ManifestLoad } from "./manifests.js";
import { loadManifestFileOffThread } from "./manifest-parse-pool.js";

/** Options of watchManifestDir. */
export interface ManifestWatchOptions {
  /** Window in which a burst of file events (an editor save, a ConfigMap swap) is coalesced into one reload. */
  readonly debounceMs: number;
  /** Clock of the coalescing window (a TestScheduler in marble tests). */
  readonly scheduler?: SchedulerLike;
  /** Per-file size limit in bytes (--max-manifest-bytes); default DEFAULT_MAX_MANIFEST_BYTES. */
  readonly maxFileBytes?: number;
  /** Told when the folder's watch fails and when it is back, and of paths under it that cannot be watched. */
  readonly onWatch?: (health: WatchHealth) => void;
}

/**
 * How the watch of the folder fares. "down": it failed as a whole (EMFILE: the process is out of
 * file descriptors) and is started again after `retryMs`, until it is "up" again; meanwhile no
 * change is seen. "path": one entry cannot be watched (a symbolic link loop); the rest is.
 */
export type WatchHealth =
  | { readonly type: "down"; readonly reason: string; readonly retryMs: number }
  | { readonly type: "up" }
  | { readonly type: "path"; readonly path: string; readonly reason: string };

/** Options of fileEvents. */
export interface FileEventsOptions {
  readonly retryMs?: number;
  readonly onWatch?: (health: WatchHealth) => void;
  /** Pacing of restarts after the watch failed. */
  readonly backoff?: BackoffOptions;
  /** chokidar's watch; a test wraps it to fail a real watcher. */
  readonly watch?: typeof watch;
}

/** Restarts of a failed watch: soon at first (a burst of connections passes), at most every 10 s. */
export const WATCH_BACKOFF: BackoffOptions = { initialMs: 200, maxMs: 10_000, factor: 2, jitter: 0.2 };

/**
 * Closes a chokidar watcher for good. close() drops every listener while reads it started may
 * still fail and emit 'error', which without a listener would end the process.
 */
function closeWatcher(w: FSWatcher): void {
  w.close().catch(() => undefined);
  w.on("error", () => undefined);
}

/**
 * Editors' scratch files and our own temporaries: a save of `infra.yaml` in vim alone creates
 * 4913, .infra.yaml.swp and infra.yaml~; emacs leaves .#infra.yaml. None is a manifest, and
 * reacting to them only costs reloads. `.git` holds no manifests and changes on every checkout.
 */
export function isScratchPath(path: string): boolean {
  const name = basename(path);
  return (
    name === ".git" ||
    name === "4913" ||
    name.endsWith("~") ||
    name.startsWith(".#") ||
    /\.sw[a-px]$/.test(name) ||
    /\.(tmp|oooi-tmp)$/.test(name)
  );
}

/** The watcher has scanned the folder (changes from now on are reported), or something changed under it. */
export type WatchEvent = { readonly type: "ready" } | { readonly type: "change"; readonly path: string };

/**
 * Every change under dir (recursively), `path` relative to dir, after a "ready"; errors when dir
 * cannot be watched. The watcher of a removed folder reports nothing more, not even its return: when
 * the folder itself goes (reported with path "", or found gone `retryMs` after a change), it is looked
 * for every `retryMs`, and once it is back a new watcher starts, whose "ready" asks for a whole read.
 * A watcher that fails (out of file descriptors) is replaced the same way, after a backoff; an entry
 * that cannot be watched (a symbolic link loop) is reported to `onWatch` and the rest is watched.
 */
export function fileEvents(dir: string, options: FileEventsOptions = {}): Observable<WatchEvent> {
  const retryMs = options.retryMs ?? SCAN_AFTER_MS;
  const watchFolder = options.watch ?? watch;
  return new Observable<WatchEvent>((sub) => {
    let watcher: FSWatcher | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let check: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    /** Failed watches since the last one that became ready. */
    let failures = 0;
    /**
     * Entries reported as unwatchable, by where they really are: chokidar follows a link to an
     * enclosing folder down to the kernel's limit and meets a loop's entries once per level.
     */
    const unwatchable = new Set<string>();
    const reportPath = (rel: string, reason: string): void => {
      const abs = resolve(dir, rel);
      void realpath(dirname(abs)).then(
        (parent) => {
          const key = `${join(parent, basename(abs))}\0${reason}`;
          if (closed || unwatchable.has(key)) return;
          unwatchable.add(key);
          options.onWatch?.({ type: "path", path: rel, reason });
        },
        // Its folder is itself beyond the limit: a shallower sight of the same entry was reported.
        () => undefined,
      );
    };
    const lookForFolder = (delay = retryMs): void => {
      retry = setTimeout(() => {
        void stat(dir).then(
          (s) => {
            if (!closed) (s.isDirectory() ? start : lookForFolder)();
          },
          () => {
            if (!closed) lookForFolder();
          },
        );
      }, delay);
    };
    const drop = (w: FSWatcher): boolean => {
      if (closed || watcher !== w) return false;
      watcher = undefined;
      clearTimeout(check);
      check = undefined;
      closeWatcher(w);
      return true;
    };
    const start = (): void => {
      const w = watchFolder(dir, { ignoreInitial: true, ignored: (path: string) => isScratchPath(path) });
      watcher = w;
      w.on("ready", () => {
        if (watcher !== w) return;
        if (failures > 0) options.onWatch?.({ type: "up" });
        failures = 0;
        sub.next({ type: "ready" });
      });
      const gone = (): void => {
        if (drop(w)) lookForFolder();
      };
      // Not every removal of the folder is reported as such (a recursive rm may end on its files'
      // unlink events): a while after any change, the folder itself is checked.
      w.on("all", (event, path) => {
        if (watcher !== w) return;
        const rel = relative(dir, path);
        sub.next({ type: "change", path: rel });
        if (event === "unlinkDir" && rel === "") {
          gone();
          return;
        }
        check ??= setTimeout(() => {
          check = undefined;
          void stat(dir).then((s) => {
            if (!s.isDirectory()) gone();
          }, gone);
        }, retryMs);
      });
      w.on("error", (e: unknown) => {
        if (watcher !== w) return;
        const err = e as NodeJS.ErrnoException;
        const rel = typeof err.path === "string" ? relative(dir, err.path) : "";
        const inside = rel !== "" && !rel.startsWith("..");
        if (inside && err.code !== "EMFILE" && err.code !== "ENFILE") {
          reportPath(rel, errnoText(e));
          return;
        }
        if (!drop(w)) return;
        failures += 1;
        const delay = backoffDelay(failures, options.backoff ?? WATCH_BACKOFF);
        options.onWatch?.({ type: "down", reason: errnoText(e), retryMs: delay });
        lookForFolder(delay);
      });
    };
    start();
    return () => {
      closed = true;
      clearTimeout(retry);
      clearTimeout(check);
      if (watcher !== undefined) closeWatcher(watcher);
    };
  });
}

/**
 * Changes of one file, watched through its folder (not recursively) so that a rename over it — an
 * editor's atomic save — is seen as well as an in-place write; the folder's other entries are ignored.
 */
export function singleFileEvents(file: string): Observable<WatchEvent> {
  const dir = resolve(dirname(file));
  const target = resolve(file);
  return new Observable<WatchEvent>((sub) => {
    const watcher = watch(dir, {
      ignoreInitial: true,
      depth: 0,
      ignored: (path: string) => resolve(path) !== dir && resolve(path) !== target,
    });
    watcher.on("ready", () => {
      sub.next({ type: "ready" });
    });
    watcher.on("all", (_event, path) => {
      sub.next({ type: "change", path: basename(path) });
    });
    watcher.on("error", (e) => {
      sub.error(e);
    });
    return () => {
      closeWatcher(watcher);
    };
  });
}

/**
 * chokidar reports a file's change at most once per 50 ms and drops the others without a trailing
 * event, so writeFile's truncate may be reported and its write not: every reported change is echoed
 * once after this gap, and the load it causes reads the path again, by content.
 */
export const CHANGE_ECHO_MS = 60;

/**
 * The net under the watcher: this long after a reported change (at most once per this period while
 * changes keep coming), every file's stat is compared with what was read, and whatever differs is
 * read (a load follows only when something did).
 */
export const SCAN_AFTER_MS = 1000;

/** What a load reads: the paths reported since the previous load, or (undefined) the whole folder. */
export type LoadRequest = ReadonlySet<string> | undefined;

/** How a folder's events become loads: its own scan (the net) besides the reported paths. */
export interface ReloadSource<T> {
  readonly load: (paths: LoadRequest) => Observable<T>;
  /** Resolves to what a background check of the folder found should be read; none = no net. */
  readonly scan?: () => ObservableInput<LoadRequest>;
  /** Delay of the scan after a change (default SCAN_AFTER_MS). */
  readonly scanAfterMs?: number;
}

/**
 * Loads once the watcher is ready (so no change falls between the first read and the watch), then
 * per burst of changes: at once at the first change, and once at the end of its window for the
 * rest (throttle with leading and trailing edge), each reading the paths reported since the
 * previous load. One load runs at a time; what is asked meanwhile is read by one load after it.
 */
export function reloadOnEvents<T>(
  events: Observable<WatchEvent>,
  source: ReloadSource<T>,
  opts: ManifestWatchOptions,
): Observable<T> {
  const scheduler = opts.scheduler ?? asyncScheduler;
  return defer(() => {
    // What the next load reads; undefined = the whole folder.
    let wanted: Set<string> | undefined = new Set();
    const want = (r: LoadRequest): void => {
      if (r === undefined) wanted = undefined;
      else for (const p of r) wanted?.add(p);
    };
    const take = (): LoadRequest => {
      const r = wanted;
      wanted = new Set();
      return r;
    };
    const asked = events.pipe(
      mergeMap((e) =>
        e.type === "ready"
          ? of(undefined)
          : concat(of(new Set([e.path])), timer(CHANGE_ECHO_MS, scheduler).pipe(map(() => new Set([e.path])))),
      ),
      tap(want),
      share(),
    );
    const scan = source.scan;
    const scanned =
      scan === undefined
        ? EMPTY
        : asked.pipe(
            filter((r) => r !== undefined),
            throttleTime(source.scanAfterMs ?? SCAN_AFTER_MS, scheduler, { leading: false, trailing: true }),
            exhaustMap(() => from(scan())),
            filter((r) => r === undefined || r.size > 0),
            tap(want),
          );
    const loads = asked.pipe(throttleTime(opts.debounceMs, scheduler, { leading: true, trailing: true }));
    return merge(loads, scanned).pipe(oneAtATime(() => source.load(take())));
  });
}

/**
 * Per source value, `run()`'s values — one run at a time: values that arrive while one runs are
 * answered by one run after it (so a run is never cut short and nothing asked is left unread).
 */
export function oneAtATime<T>(run: () => Observable<T>): OperatorFunction<unknown, T> {
  return (source) =>
    new Observable<T>((sub) => {
      let running = false;
      let again = false;
      let done = false;
      let inner: Subscription | undefined;
      const start = (): void => {
        running = true;
        again = false;
        inner = run().subscribe({
          next: (v) => {
            sub.next(v);
          },
          error: (e: unknown) => {
            sub.error(e);
          },
          complete: () => {
            running = false;
            if (again) start();
            else if (done) sub.complete();
          },
        });
      };
      const outer = source.subscribe({
        next: () => {
          if (running) again = true;
          else start();
        },
        error: (e: unknown) => {
          sub.error(e);
        },
        complete: () => {
          done = true;
          if (!running) sub.complete();
        },
      });
      return () => {
        outer.unsubscribe();
        inner?.unsubscribe();
      };
    });
}

/** A load of the watched folder; a readable one carries the keyed changes since the previous readable one. */
export type WatchedLoad =
  | Extract<ManifestLoad, { ok: false }>
  | (Extract<ManifestLoad, { ok: true }> & { readonly changes: readonly ObjectChange[] });

/**
 * The manifest directory's content over time: the first load once watching, then a load per burst
 * of changes that changed something, each reading only the reported files (and re-parsing only
 * those whose content changed), with a background scan as the net for changes the watcher dropped.
 * When the directory cannot be watched the stream emits one load's result and completes.
 */
export function watchManifestDir(dir: string, opts: ManifestWatchOptions): Observable<WatchedLoad> {
  const reader = new ManifestReader(dir, opts.maxFileBytes === undefined ? {} : { maxFileBytes: opts.maxFileBytes });
  const load = (paths: LoadRequest) => defer(() => from(paths === undefined ? reader.read() : reader.readPaths(paths)));
  const scan = async (): Promise<LoadRequest> => {
    const r = await reader.scan();
    return r.full ? undefined : new Set(r.paths);
  };
  const events = fileEvents(dir, opts.onWatch === undefined ? {} : { onWatch: opts.onWatch });
  return reloadOnEvents(events, { load, scan }, opts).pipe(
    catchError(() => load(undefined)),
    filter((r) => !r.unchanged),
    map((r): WatchedLoad => (r.load.ok ? { ...r.load, changes: r.changes } : r.load)),
  );
}

/**
 * watchManifestDir for a folder; for one file, the same stream of loads from that file alone
 * (without keyed changes: the pipeline then compares by identity).
 */
export function watchManifests(path: string, opts: ManifestWatchOptions): Observable<WatchedLoad | ManifestLoad> {
  return defer(() => from(stat(path))).pipe(
    switchMap((s) => {
      if (s.isDirectory()) return watchManifestDir(path, opts);
      const load = () => defer(() => from(loadManifestFileOffThread(path, opts.maxFileBytes)));
      return reloadOnEvents(singleFileEvents(path), { load }, opts).pipe(catchError(() => load()));
    }),
    catchError(() => from(loadManifests(path, opts.maxFileBytes))),
  );
}
