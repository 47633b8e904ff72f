// `oooi serve`: the embedded default. The manifest directory stands in for the cluster; every
// readable load goes through the render loop (src/pipeline/render-loop.ts) to the branches that
// are configured: xDS snapshots, files (--out), the DNS responder, Kea, the status page, the log.
import { Subscription, from, map, switchMap } from "rxjs";
import type { Logger } from "pino";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { ALLOCATIONS_FILE, AllocationStore, readAllocationFile } from "../pipeline/allocation-store.js";
import { checkOutputDir } from "../pipeline/output-guard.js";
import { RenderChain, renderLoop } from "../pipeline/render-loop.js";
import { SYSTEM_CLOCK } from "../util/clock.js";
import type { ManifestLoad } from "../watchers/manifests.js";
import { watchManifests, type WatchedLoad } from "../watchers/manifest-watch.js";
import { Metrics } from "../metrics/index.js";
import { StatusPage } from "../status-page/index.js";
import { startServeDns } from "./serve/dns.js";
import { writeOutputs } from "./serve/files.js";
import { startServeHttp, stopServeHttp } from "./serve/http.js";
import { driveKea } from "./serve/kea.js";
import { LoadReport } from "./serve/load-report.js";
import { manifestsRoot } from "./problem-report.js";
import type { ServeOptions } from "./serve/options.js";
import { ServeReadiness } from "./serve/readiness.js";
import { startServeXds } from "./serve/xds.js";

export interface Served {
  /** Resolves once every listener is bound (their addresses are logged). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Why serve cannot start with these folders (exit 2), or undefined: the manifests folder (or file)
 * must exist — a typo'd path would otherwise serve nothing forever — and --out must not touch it.
 */
export async function checkServeFolders(opts: Pick<ServeOptions, "manifests" | "out">): Promise<string | undefined> {
  if (opts.manifests === "-")
    return "--manifests - (standard input) is for `oooi render`; serve watches a folder or a file for changes";
  try {
    const s = await stat(opts.manifests);
    if (!s.isDirectory() && !s.isFile()) return `--manifests ${opts.manifests} is neither a folder nor a file`;
  } catch (e) {
    return `--manifests ${opts.manifests} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
  }
  if (opts.out === undefined) return undefined;
  // serve writes only the files it indexes, so a non-empty folder (`npm start`'s .oooi-out from
  // before the index existed) is fine; the manifests folder is not.
  const guard = await checkOutputDir(opts.out, opts.manifests, { requireOwned: false });
  return guard.ok ? undefined : guard.message;
}

/** Renders on every change of the manifest directory; unreadable input keeps the last good outputs. */
export function serve(opts: ServeOptions, log: Logger): Served {
  // Durable DHCP allocations: read back from --out (throws on an unusable file), written with the outputs.
  const allocations = new AllocationStore(
    opts.out === undefined ? new Map() : readAllocationFile(join(opts.out, ALLOCATIONS_FILE)),
  );
  const metrics = new Metrics({ processMetrics: true });
  const onClose: (() => void)[] = [];
  // The live status page (/, /events) shares the metrics port.
  const page =
    opts.httpListen === undefined
      ? undefined
      : new StatusPage({
          title: "oooi serve",
          ...(opts.httpMaxEventClients === undefined ? {} : { maxEventClients: opts.httpMaxEventClients }),
        });
  // The xDS server binds first: each bootstrap.yaml names the port it got (--xds-listen may say 0).
  const xds =
    opts.xdsListen === undefined ? undefined : startServeXds(opts, opts.xdsListen, { log, metrics, page }, onClose);
  // Files of a folder are named under it as given; one file is named as given already.
  const root = manifestsRoot(opts.manifests);
  const report = new LoadReport(log, opts.manifests, root);
  const readiness = new ServeReadiness();
  const loads$ = watchManifests(opts.manifests, {
    debounceMs: opts.debounceMs,
    ...(opts.maxManifestBytes === undefined ? {} : { maxFileBytes: opts.maxManifestBytes }),
    onWatch: (h) => {
      readiness.watchDown = h.type === "down" ? h.reason : h.type === "up" ? undefined : readiness.watchDown;
      report.watch(h);
    },
  });
  // An object whose new version is refused keeps being served as it was last accepted. After the
  // first rendering, only the Infras the load's keyed changes feed are built and rendered.
  const chain = new RenderChain();
  type Input = { load: WatchedLoad | ManifestLoad; address: { host: string; port: number } | false };
  const address = xds?.address ?? Promise.resolve(false as const);
  const outputs$ = renderLoop(
    from(address).pipe(switchMap((a) => loads$.pipe(map((load): Input => ({ load, address: a }))))),
    ({ load, address: xdsAddress }: Input) => {
      if (!load.ok) {
        report.unreadable(load.error);
        return undefined;
      }
      const options = {
        dhcpAllocations: allocations.tables,
        now: SYSTEM_CLOCK.now(),
        xdsAddress,
        envoy: { filterChainMatcher: opts.filterChainMatcher === true },
      };
      const changes = "changes" in load ? load.changes : undefined;
      log.debug({ changes: changes?.length ?? "all" }, "rendering");
      const next = chain.render(load.state, changes, options);
      allocations.update(next);
      return next;
    },
    (e) => {
      log.error({ err: (e as Error).message }, "rendering failed; keeping the last good configuration");
    },
  );
  const rendered$ = outputs$.pipe(map((r) => r.outputs));
  // Branches in order: the xDS cache first (what Envoys wait for goes out before the rest); the
  // report (log lines) runs even when no output is configured, after the push, in a task of its own.
  const subs = new Subscription();
  if (xds !== undefined) subs.add(xds.publish(outputs$, root));
  subs.add(
    outputs$.subscribe(({ input: { load }, outputs }) => {
      if (load.ok)
        setImmediate(() => {
          report.rendered(load, outputs);
        });
    }),
  );
  subs.add(
    rendered$.subscribe(() => {
      readiness.rendered = true;
    }),
  );
  for (const branch of [
    opts.out === undefined ? undefined : writeOutputs(opts.out, rendered$, allocations, log),
    opts.keaSocket === undefined ? undefined : driveKea({ ...opts, keaSocket: opts.keaSocket }, rendered$, log),
  ]) {
    if (branch === undefined) continue;
    subs.add(branch.subscription);
    onClose.push(() => {
      branch.close();
    });
  }
  if (page !== undefined)
    subs.add(
      rendered$.subscribe((out) => {
        page.setModel(out.model);
      }),
    );
  const http =
    opts.httpListen === undefined || page === undefined
      ? undefined
      : startServeHttp({ ...opts, httpListen: opts.httpListen }, { page, metrics, probes: readiness, log });
  const dns =
    opts.dnsListen === undefined ? undefined : startServeDns({ ...opts, dnsListen: opts.dnsListen }, rendered$, log);
  if (dns !== undefined) subs.add(dns.subscription);

  return {
    ready: Promise.all([dns?.responder, xds?.server, http]).then(() => {
      readiness.bound = true;
    }),
    close: async () => {
      readiness.closing = true;
      subs.unsubscribe();
      for (const f of onClose) f();
      if (http !== undefined && page !== undefined) await stopServeHttp(http, page);
      if (dns !== undefined) await (await dns.responder).close();
      if (xds !== undefined) await (await xds.server).close();
    },
  };
}
