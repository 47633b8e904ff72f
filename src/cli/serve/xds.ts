// serve's ADS server (with CSDS, oooi.debug.v1, health and reflection on its port, on a thread of
// its own: src/xds/thread/) and the render loop's xDS branch: every rendering that changed becomes
// the snapshots of its node groups, in the cache here, sent across to the server's thread.
import { packageVersion, processStartMs } from "../package-version.js";
import { map, type Observable, type Subscription } from "rxjs";
import type { Logger } from "pino";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../dhcp/kea-config-resource.js";
import { dialAddress } from "../../envoy/bootstrap.js";
import { checkEnvoySnapshot } from "../../envoy/snapshot.js";
import { attachXdsMetrics, type Metrics } from "../../metrics/index.js";
import { distinctRenderings } from "../../pipeline/distinct-renderings.js";
import type { Outputs } from "../../pipeline/outputs.js";
import { ChangeFeed, type FeedBatch } from "../../pipeline/change-feed.js";
import { SYSTEM_CLOCK } from "../../util/clock.js";
import type { StatusPage } from "../../status-page/index.js";
import { SnapshotCache } from "../../xds/cache/index.js";
import { startXdsServerThread, type ThreadedXdsServer } from "../../xds/thread/index.js";
import { tagListen } from "../listen-error.js";
import type { ObjectRef } from "../../model/types.js";
import type { ChangeSource } from "../../pipeline/change-line.js";
import type { ManifestSources } from "../../watchers/manifest-sources.js";
import type { ManifestLoad } from "../../watchers/manifests.js";
import type { WatchedLoad } from "../../watchers/manifest-watch.js";
import { userPath } from "../problem-report.js";
import type { ServeOptions } from "./options.js";

/** One rendering of the render loop, with the load it came from and the Infras it rebuilt. */
export interface ServeRendering {
  readonly input: { readonly load: WatchedLoad | ManifestLoad };
  readonly outputs: Outputs;
  readonly rebuilt: ReadonlySet<string>;
}

export interface ServeXds {
  /** Fails when the port cannot be bound (`ready` says so; the outputs are still written). */
  readonly server: Promise<ThreadedXdsServer>;
  /** Where each bootstrap.yaml points; false when the server could not bind. */
  readonly address: Promise<{ host: string; port: number } | false>;
  /**
   * The xDS branch: subscribe it to the renderings; each batch's changes are located in the files under
   * `root` for the change feed's log line.
   */
  publish(renderings$: Observable<ServeRendering>, root: string | undefined): Subscription;
}

/** Binds the ADS server at `listen` (--xds-listen); `onClose` collects what close() undoes. */
export function startServeXds(
  opts: ServeOptions,
  listen: string,
  c: { readonly log: Logger; readonly metrics: Metrics; readonly page: StatusPage | undefined },
  onClose: (() => void)[],
): ServeXds {
  const { log } = c;
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const host = hostOf(listen);
  const feed = new ChangeFeed({ cache, log, clock: SYSTEM_CLOCK });
  onClose.push(() => {
    feed.close();
  });
  const started = startXdsServerThread(
    new URL("./xds-thread-worker.js", import.meta.url),
    cache,
    {
      listen,
      ...(opts.xdsTls === undefined ? {} : { tls: opts.xdsTls }),
      requireIdentity: opts.xdsRequireIdentity === true,
      ...(opts.xdsMaxConnections === undefined ? {} : { maxConnections: opts.xdsMaxConnections }),
      ...(opts.xdsMaxNamesPerStream === undefined ? {} : { maxNamesPerStream: opts.xdsMaxNamesPerStream }),
      server: { version: packageVersion(), command: "serve", startedMs: processStartMs() },
    },
    log,
  ).then((server) => {
    feed.attach(server.status);
    onClose.push(attachXdsMetrics(c.metrics, server.status, { cache }));
    if (c.page !== undefined) onClose.push(c.page.watchXds(server.status, cache));
    log.info({ port: server.port }, `xDS (ADS) server listening on ${host}:${String(server.port)}`);
    return server;
  });
  const server = tagListen(started, "--xds-listen", listen);
  const listenHost = host.replace(/^\[(.*)\]$/, "$1");
  const address = server.then(
    (s) => dialAddress({ host: listenHost, port: s.port }),
    () => false as const,
  );
  return {
    server,
    address,
    publish: (renderings$, root) => {
      let summarized = false;
      const batches$ = renderings$.pipe(
        map(({ input: { load }, outputs, rebuilt }) => ({
          infras: outputs.infras,
          byInfra: outputs.byInfra,
          delta: outputs.delta,
          batch: {
            changes: "changes" in load ? load.changes : undefined,
            rebuilt,
            ...(load.ok ? { locate: locateIn(load.sources, root) } : {}),
          } satisfies FeedBatch,
        })),
      );
      return batches$.pipe(distinctRenderings()).subscribe((out) => {
        // Only the groups whose rendering changed since the last publish are handed to the cache.
        feed.publish(out, out.batch);
        if (summarized) return;
        summarized = true;
        void server.then((s) => {
          log.info(startupSummary(nodeGroups(out), `${host}:${String(s.port)}`));
        });
      });
    },
  };
}

/** Where an object of our kinds was read from (file under --manifests as given, line). */
function locateIn(sources: ManifestSources, root: string | undefined): (ref: ObjectRef) => ChangeSource | undefined {
  return (ref) => {
    const at = sources.locate(ref, "");
    return at === undefined ? undefined : { file: userPath(root, at.file), line: at.line };
  };
}

/** The node groups a render serves: each proxy's Envoys and each DHCPServer's dhcp-agents. */
export function nodeGroups(out: Pick<Outputs, "infras">): { envoy: string[]; dhcp: string[] } {
  const envoy: string[] = [];
  const dhcp: string[] = [];
  for (const r of out.infras) {
    if (r.topology.proxy !== undefined && r.envoy !== undefined) envoy.push(r.topology.proxy.node);
    if (r.topology.dhcp !== undefined && r.kea !== undefined) dhcp.push(r.topology.dhcp.name);
  }
  return { envoy, dhcp };
}

/** serve's one startup line: what it serves and how to point an Envoy (or a dhcp-agent) at it. */
export function startupSummary(groups: { envoy: readonly string[]; dhcp: readonly string[] }, xds: string): string {
  if (groups.envoy.length + groups.dhcp.length === 0)
    return `xDS on ${xds} serves no node group yet: no Infra rendered a proxy or a DHCP server`;
  const parts = [];
  if (groups.envoy.length > 0)
    parts.push(
      `Envoy node groups ${groups.envoy.join(", ")} — point an Envoy at ADS ${xds} with node.cluster set to one of them`,
    );
  if (groups.dhcp.length > 0)
    parts.push(`DHCP node groups ${groups.dhcp.join(", ")} — oooi dhcp-agent --xds ${xds} --node <group>`);
  return `serving ${parts.join("; ")}`;
}

function hostOf(listen: string): string {
  return listen.slice(0, listen.lastIndexOf(":"));
}
