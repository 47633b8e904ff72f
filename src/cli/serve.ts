// `oooi serve`: the embedded default. The manifest directory stands in for the cluster; every
// change is rendered and pushed to the outputs that are configured.
import { EMPTY, Subscription, catchError, concatMap, from, map, scan, share } from "rxjs";
import type { Logger } from "pino";
import { FileSink } from "../pipeline/file-sink.js";
import { renderAll, type Outputs } from "../pipeline/outputs.js";
import { formatManifestError, summarizeIgnored, type ManifestLoad } from "../watchers/manifests.js";
import { watchManifestDir } from "../watchers/manifest-watch.js";

export interface ServeOptions {
  readonly manifests: string;
  readonly out?: string;
  readonly debounceMs: number;
}

export interface Served {
  close(): Promise<void>;
}

/** Renders on every change of the manifest directory; unreadable input keeps the last good outputs. */
export function serve(opts: ServeOptions, log: Logger): Served {
  const loads$ = watchManifestDir(opts.manifests, { debounceMs: opts.debounceMs });
  const outputs$ = loads$.pipe(
    scan<ManifestLoad, { last: Outputs | undefined; next: Outputs | undefined }>((acc, load) => {
      if (!load.ok) {
        log.error({ file: load.error.file, line: load.error.line }, `manifests unreadable, keeping the last good configuration: ${formatManifestError(load.error)}`);
        return { last: acc.last, next: undefined };
      }
      const ignored = summarizeIgnored(load.ignored);
      if (ignored !== "") log.debug(`ignored ${ignored}`);
      const next = renderAll(load.state, acc.last === undefined ? {} : { previous: acc.last.files });
      return { last: next, next };
    }, { last: undefined, next: undefined }),
    map((s) => s.next),
    share(),
  );

  const subs = new Subscription();
  subs.add(outputs$.subscribe((out) => {
    if (out === undefined) return;
    for (const s of out.status) {
      const c = s.status.conditions[0];
      if (c !== undefined && c.status !== "True") log.warn({ object: `${s.kind} ${s.namespace}/${s.name}`, reason: c.reason }, c.message);
    }
    log.info({ infras: out.infras.length, problems: out.model.problems.length }, "rendered");
  }));

  if (opts.out !== undefined) {
    const sink = new FileSink(opts.out);
    const dir = opts.out;
    subs.add(outputs$.pipe(
      concatMap((out) => out === undefined ? EMPTY : from(sink.sync(out.files)).pipe(
        catchError((e: unknown) => {
          log.error({ dir }, `cannot write outputs: ${(e as Error).message}`);
          return EMPTY;
        }),
      )),
    ).subscribe((r) => {
      if (r.written.length + r.removed.length > 0) log.info({ dir, written: r.written.length, removed: r.removed.length }, "outputs updated");
    }));
  }

  return {
    close: () => {
      subs.unsubscribe();
      return Promise.resolve();
    },
  };
}
