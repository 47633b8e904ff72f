// The manifest directory as a stream: a load at subscription, then a reload after file changes.
// chokidar rather than Node's recursive fs.watch: on Linux the latter watches the inode a name had
// when watching began, so a file replaced by rename (sed -i, an editor's atomic save, git checkout)
// went silent for good. chokidar watches directories and re-attaches to the new file.
import { stat } from "node:fs/promises";
import { basename, dirname, relative, resolve } from "node:path";
import { watch } from "chokidar";
import {
  asyncScheduler,
  catchError,
  concat,
  defer,
  from,
  map,
  mergeMap,
  Observable,
  of,
  scan,
  switchMap,
  throttleTime,
  timer,
  type SchedulerLike,
} from "rxjs";
import type { ObjectChange } from "../model/feeds.js";
import { ManifestReader, manifestChanges, type ManifestRead } from "./manifest-cache.js";
import { loadManifests, type ManifestLoad } from "./manifests.js";

/** Options of watchManifestDir. */
export interface ManifestWatchOptions {
  /** Window in which a burst of file events (an editor save, a ConfigMap swap) is coalesced into one reload. */
  readonly debounceMs: number;
  /** Clock of the coalescing window (a TestScheduler in marble tests). */
  readonly scheduler?: SchedulerLike;
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

/** Every change under dir (recursively), `path` relative to dir, after one "ready"; errors when dir cannot be watched. */
export function fileEvents(dir: string): Observable<WatchEvent> {
  return new Observable<WatchEvent>((sub) => {
    const watcher = watch(dir, { ignoreInitial: true, ignored: (path: string) => isScratchPath(path) });
    watcher.on("ready", () => {
      sub.next({ type: "ready" });
    });
    watcher.on("all", (_event, path) => {
      sub.next({ type: "change", path: relative(dir, path) });
    });
    watcher.on("error", (e) => {
      sub.error(e);
    });
    return () => {
      void watcher.close();
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
      void watcher.close();
    };
  });
}

/**
 * chokidar reports a file's change at most once per 50 ms and drops the others without a trailing
 * event, so writeFile's truncate may be reported and its write not: every reported change is echoed
 * once after this gap, and the load it causes reads whatever the dropped events wrote.
 */
export const CHANGE_ECHO_MS = 60;

/**
 * Loads once the watcher is ready (so no change falls between the first read and the watch), then
 * per burst of changes: at once at the first change, and once at the end of its window for the
 * rest (throttle with leading and trailing edge). A newer load supersedes one still running.
 */
export function reloadOnEvents<T>(
  events: Observable<WatchEvent>,
  load: () => Observable<T>,
  opts: ManifestWatchOptions,
): Observable<T> {
  const scheduler = opts.scheduler ?? asyncScheduler;
  const echo = () => timer(CHANGE_ECHO_MS, scheduler).pipe(map(() => undefined));
  return events.pipe(
    mergeMap((e) => (e.type === "ready" ? of(undefined) : concat(of(undefined), echo()))),
    throttleTime(opts.debounceMs, scheduler, { leading: true, trailing: true }),
    switchMap(load),
  );
}

/** A load of the watched folder; a readable one carries the keyed changes since the previous readable one. */
export type WatchedLoad =
  | Extract<ManifestLoad, { ok: false }>
  | (Extract<ManifestLoad, { ok: true }> & { readonly changes: readonly ObjectChange[] });

/**
 * The manifest directory's content over time: the first load once watching, then loads per burst
 * of changes, each re-parsing only the files whose content changed. When the directory cannot be
 * watched the stream emits one load's result and completes.
 */
export function watchManifestDir(dir: string, opts: ManifestWatchOptions): Observable<WatchedLoad> {
  // Every file's stat is checked per load, not only the reported paths: chokidar drops a file's
  // second change within 50 ms (CHANGE_ECHO_MS), so a path list can miss the write that matters.
  const reader = new ManifestReader(dir);
  const read = () => defer(() => from(reader.read()));
  return reloadOnEvents(fileEvents(dir), read, opts).pipe(
    catchError(() => read()),
    withChanges(),
  );
}

/** Each readable load with its keyed changes since the previous readable one (the first: every object added). */
export function withChanges() {
  return (reads: Observable<ManifestRead>): Observable<WatchedLoad> =>
    reads.pipe(
      scan<ManifestRead, { parsed: ManifestRead["parsed"]; out: WatchedLoad | undefined }>(
        (acc, r) =>
          r.load.ok
            ? { parsed: r.parsed, out: { ...r.load, changes: manifestChanges(acc.parsed, r.parsed) } }
            : { parsed: acc.parsed, out: r.load },
        { parsed: new Map(), out: undefined },
      ),
      map((s) => s.out as WatchedLoad),
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
      const load = () => defer(() => from(loadManifests(path)));
      return reloadOnEvents(singleFileEvents(path), load, opts).pipe(catchError(() => load()));
    }),
    catchError(() => from(loadManifests(path))),
  );
}
