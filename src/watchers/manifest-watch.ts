// The manifest directory as a stream: a load at subscription, then a reload after file changes.
import { watch } from "node:fs";
import { asyncScheduler, catchError, defer, from, Observable, startWith, switchMap, throttleTime } from "rxjs";
import { loadManifestDir, type ManifestLoad } from "./manifests.js";

/** Options of watchManifestDir. */
export interface ManifestWatchOptions {
  /** Window in which a burst of file events (an editor save, a ConfigMap swap) is coalesced into one reload. */
  debounceMs: number;
}

/** Emits every change notification under dir (recursively); errors when dir cannot be watched. */
function fileEvents(dir: string): Observable<void> {
  return new Observable<void>((sub) => {
    let watcher: ReturnType<typeof watch>;
    try {
      watcher = watch(dir, { recursive: true }, () => { sub.next(); });
    } catch (e) {
      sub.error(e);
      return undefined;
    }
    watcher.on("error", (e) => { sub.error(e); });
    return () => { watcher.close(); };
  });
}

/**
 * The manifest directory's content over time: the first load at once, then one reload per burst of
 * changes (the first change of a burst reloads at once, later ones are coalesced into one reload at
 * the end of the window). A newer load supersedes one still running. When the directory cannot be
 * watched (missing, removed) the stream emits that load's result and completes.
 */
export function watchManifestDir(dir: string, opts: ManifestWatchOptions): Observable<ManifestLoad> {
  const load = () => defer(() => from(loadManifestDir(dir)));
  return fileEvents(dir).pipe(
    throttleTime(opts.debounceMs, asyncScheduler, { leading: true, trailing: true }),
    startWith(undefined),
    switchMap(load),
    catchError(() => load()),
  );
}
