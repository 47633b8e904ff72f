// `oooi serve`: the embedded default. The manifest directory stands in for the cluster; every
// change is rendered and pushed to the outputs that are configured.
import { Subscription, from, map, switchMap } from "rxjs";
import type { Logger } from "pino";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { ALLOCATIONS_FILE, AllocationStore, readAllocationFile } from "../pipeline/allocation-store.js";
import { FileSink, OutputWriteError, RetryingFileSink } from "../pipeline/file-sink.js";
import { checkOutputDir } from "../pipeline/output-guard.js";
import { SYSTEM_CLOCK } from "../util/clock.js";
import type { Outputs, RenderedInfra } from "../pipeline/outputs.js";
import { RenderChain, renderLoop } from "../pipeline/render-loop.js";
import { distinctRenderings } from "../pipeline/distinct-renderings.js";
import { formatManifestError, summarizeIgnored, type ManifestError, type ManifestLoad } from "../watchers/manifests.js";
import { noInfraWarning, problemLines, ProblemMemory, type ProblemEntry } from "./problem-report.js";
import { watchManifests, type WatchedLoad, type WatchHealth } from "../watchers/manifest-watch.js";
import type { ApplierEvent } from "../dhcp/applier.js";
import { KeaSync, selectDhcpModel } from "../dhcp/kea/sync.js";
import { startDnsResponder, type DnsResponder } from "../dns/server/index.js";
import type { DnsModel, Topology } from "../model/types.js";
import type { ServerCredentials } from "@grpc/grpc-js";
import { createServer, type Server } from "node:http";
import { SnapshotCache } from "../xds/cache/index.js";
import { addIntrospection } from "../xds/introspect/index.js";
import { Metrics, attachXdsMetrics, metricsHandler } from "../metrics/index.js";
import { hostCheckHandler, probesHandler } from "../metrics/http.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../dhcp/kea-config-resource.js";
import { publishSnapshots } from "../pipeline/snapshots.js";
import { StatusPage } from "../status-page/index.js";
import { tagListen } from "./listen-error.js";
import { startXdsServer, type XdsServer } from "../xds/server/index.js";
import { dialAddress } from "../envoy/bootstrap.js";
import { checkEnvoySnapshot } from "../envoy/snapshot.js";

export interface ServeOptions {
  readonly manifests: string;
  readonly out?: string;
  readonly debounceMs: number;
  /** Per-file size limit of the manifests (--max-manifest-bytes); default DEFAULT_MAX_MANIFEST_BYTES. */
  readonly maxManifestBytes?: number;
  /** Drive a local kea-dhcp4 through this control socket. */
  readonly keaSocket?: string;
  /** Interface the local Kea serves on, replacing the DHCPServer's. */
  readonly dhcpInterface?: string;
  /** DHCPServer ("namespace/name") the local Kea serves; default the first with DHCP enabled. */
  readonly dhcpServer?: string;
  readonly keaHooksDir?: string;
  readonly keaLeaseFile?: string;
  /** Answer DNS here (host:port) with the split-horizon views; undefined = no responder. */
  readonly dnsListen?: { readonly host: string; readonly port: number };
  /** DNSServer ("namespace/name") the responder serves; default the first with DNS enabled. */
  readonly dnsServer?: string;
  /** Serve ADS here ("host:port", port 0 picks one); undefined = no xDS server. */
  readonly xdsListen?: string;
  readonly xdsCredentials?: ServerCredentials;
  /** Authorize xDS calls by the client certificate's identity (with mTLS credentials). */
  readonly xdsRequireIdentity?: boolean;
  /** --xds-max-connections and --xds-max-names-per-stream (the server's defaults when absent). */
  readonly xdsMaxConnections?: number;
  readonly xdsMaxNamesPerStream?: number;
  /** --dns-max-tcp-connections (the responder's default when absent). */
  readonly dnsMaxTcpConnections?: number;
  /** Serve /metrics (Prometheus) here; undefined = none. */
  readonly httpListen?: { readonly host: string; readonly port: number };
  /** Host names the HTTP port answers besides IP literals and localhost (DNS-rebinding defence). */
  readonly httpAllowHosts?: readonly string[];
  /** Live status pages served at once (default DEFAULT_MAX_EVENT_CLIENTS). */
  readonly httpMaxEventClients?: number;
}

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
  let xds: Promise<XdsServer> | undefined;
  let cache: SnapshotCache | undefined;
  if (opts.xdsListen !== undefined) {
    const snapshots = new SnapshotCache({ check: checkEnvoySnapshot });
    snapshots.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
    cache = snapshots;
    const started = startXdsServer({
      cache: snapshots,
      listen: opts.xdsListen,
      logger: log,
      ...(opts.xdsCredentials === undefined ? {} : { credentials: opts.xdsCredentials }),
      requireIdentity: opts.xdsRequireIdentity === true,
      ...(opts.xdsMaxConnections === undefined ? {} : { maxConnections: opts.xdsMaxConnections }),
      ...(opts.xdsMaxNamesPerStream === undefined ? {} : { maxNamesPerStream: opts.xdsMaxNamesPerStream }),
    }).then((server) => {
      // CSDS, oooi.debug.v1, health and reflection share the ADS port (`oooi debug nodes`).
      const introspection = addIntrospection(server.grpcServer, { status: server.status, cache: snapshots });
      onClose.push(() => {
        introspection.setServing(false);
      });
      onClose.push(attachXdsMetrics(metrics, server.status, { cache: snapshots }));
      if (page !== undefined) onClose.push(page.watchXds(server.status));
      log.info(
        { port: server.port },
        `xDS (ADS) server listening on ${hostOf(opts.xdsListen ?? "")}:${String(server.port)}`,
      );
      return server;
    });
    xds = tagListen(started, "--xds-listen", opts.xdsListen);
  }
  const listenHost = opts.xdsListen === undefined ? undefined : hostOf(opts.xdsListen).replace(/^\[(.*)\]$/, "$1");
  // A server that cannot bind fails `ready`; the outputs are still written, without bootstraps.
  const xdsAddress: Promise<{ host: string; port: number } | false> =
    xds === undefined || listenHost === undefined
      ? Promise.resolve(false)
      : xds.then(
          (server) => dialAddress({ host: listenHost, port: server.port }),
          () => false as const,
        );
  const report = new LoadReport(log, opts.manifests);
  // Why the folder is not watched right now (/readyz says it: changes are not seen meanwhile).
  let watchDown: string | undefined;
  const loads$ = watchManifests(opts.manifests, {
    debounceMs: opts.debounceMs,
    ...(opts.maxManifestBytes === undefined ? {} : { maxFileBytes: opts.maxManifestBytes }),
    onWatch: (h) => {
      watchDown = h.type === "down" ? h.reason : h.type === "up" ? undefined : watchDown;
      report.watch(h);
    },
  });
  // An object whose new version is refused keeps being served as it was last accepted. After the
  // first rendering, only the Infras the load's keyed changes feed are built and rendered (the
  // files continue from the previous rendering's own).
  const chain = new RenderChain();
  const outputs$ = renderLoop(
    from(xdsAddress).pipe(switchMap((address) => loads$.pipe(map((load) => ({ load, address }))))),
    ({ load, address }: { load: WatchedLoad | ManifestLoad; address: { host: string; port: number } | false }) => {
      if (!load.ok) {
        report.unreadable(load.error);
        return undefined;
      }
      const options = { dhcpAllocations: allocations.tables, now: SYSTEM_CLOCK.now(), xdsAddress: address };
      const next = chain.render(load.state, "changes" in load ? load.changes : undefined, options);
      allocations.update(next);
      return next;
    },
    (e) => {
      log.error({ err: (e as Error).message }, "rendering failed; keeping the last good configuration");
    },
  );
  const rendered$ = outputs$.pipe(map((r) => r.outputs));

  const subs = new Subscription();
  // The xDS cache hears of a rendering first: what Envoys wait for goes out before the rest.
  if (xds !== undefined && cache !== undefined) {
    const bound = xds;
    const snapshots = cache;
    let summarized = false;
    let published: Outputs | undefined;
    subs.add(
      rendered$.pipe(distinctRenderings()).subscribe((out) => {
        // Only the groups whose rendering changed since the last publish are handed to the cache.
        publishSnapshots(snapshots, out, log, published);
        published = out;
        if (summarized) return;
        summarized = true;
        void bound.then((server) => {
          log.info(startupSummary(nodeGroups(out), `${hostOf(opts.xdsListen ?? "")}:${String(server.port)}`));
        });
      }),
    );
  }

  // Reading and reporting run even when no output is configured; the report (log lines) after
  // the push, in a task of its own.
  subs.add(
    outputs$.subscribe(({ input, outputs }) => {
      const load = input.load;
      if (load.ok)
        setImmediate(() => {
          report.rendered(load, outputs);
        });
    }),
  );
  // /readyz: ready once the manifests rendered (the first readable load) and every listener is bound.
  let rendered = false;
  let bound = false;
  let closing = false;
  subs.add(
    rendered$.subscribe(() => {
      rendered = true;
    }),
  );
  if (opts.out !== undefined) {
    // Continues from the previous run's index: what it wrote and no longer renders is removed.
    // A failed write (a full disk) keeps the last complete set and is retried with backoff.
    const dir = opts.out;
    const writer = new RetryingFileSink(FileSink.open(dir), {
      synced: (r) => {
        if (r.written.length + r.removed.length > 0)
          log.info({ dir, written: r.written.length, removed: r.removed.length }, "outputs updated");
      },
      failed: (e, attempt, retryInMs) => {
        log.error(
          { dir, attempt, retryInMs, ...(e instanceof OutputWriteError ? { file: e.file, code: e.code } : {}) },
          `cannot write outputs: ${e.message}; ${dir} keeps its last complete set, retrying in ${String(retryInMs)} ms`,
        );
      },
    });
    onClose.push(() => {
      writer.close();
    });
    subs.add(
      rendered$.subscribe((out) => {
        writer.submit(new Map([...out.files, [ALLOCATIONS_FILE, allocations.encode()]]));
      }),
    );
  }

  let kea: KeaSync | undefined;
  if (opts.keaSocket !== undefined) {
    const socket = opts.keaSocket;
    const sync = new KeaSync({
      socketPath: socket,
      ...(opts.dhcpInterface === undefined ? {} : { interface: opts.dhcpInterface }),
      ...(opts.keaHooksDir === undefined ? {} : { hooksDirectory: opts.keaHooksDir }),
      ...(opts.keaLeaseFile === undefined ? {} : { leaseFile: opts.keaLeaseFile }),
      applier: {
        onEvent: (e) => {
          logKeaEvent(log, socket, e);
        },
      },
    });
    kea = sync;
    subs.add(
      rendered$.subscribe((out) => {
        // The applier coalesces: a burst of models ends with the newest one applied.
        void sync.update(selectDhcpModel(out.model.topologies, opts.dhcpServer));
      }),
    );
  }

  let http: Promise<Server> | undefined;
  if (page !== undefined) {
    subs.add(
      rendered$.subscribe((out) => {
        page.setModel(out.model);
      }),
    );
  }
  if (opts.httpListen !== undefined && page !== undefined) {
    const { host, port } = opts.httpListen;
    const listening = new Promise<Server>((resolve, reject) => {
      const probes = {
        live: () => !closing,
        notReady: () =>
          !bound
            ? "listeners starting"
            : !rendered
              ? "manifests not rendered yet"
              : watchDown !== undefined
                ? `manifest folder not watched (${watchDown}): changes are not seen until the watch is back`
                : undefined,
      };
      // The listen address, when it is a name, is one the user means to be reached by.
      const allowed = [...(opts.httpAllowHosts ?? []), host];
      const server = createServer(
        hostCheckHandler(allowed, probesHandler(probes, page.handler(metricsHandler(metrics)))),
      );
      server.once("error", reject);
      server.listen(port, host, () => {
        const address = server.address();
        const url = `http://${host}:${String(typeof address === "object" && address !== null ? address.port : port)}`;
        log.info(`status page on ${url}/, metrics on ${url}/metrics (probes: /healthz, /readyz)`);
        resolve(server);
      });
    });
    http = tagListen(listening, "--http-listen", `${host}:${String(port)}`);
  }

  let dns: Promise<DnsResponder> | undefined;
  if (opts.dnsListen !== undefined) {
    const listen = opts.dnsListen;
    const started = startDnsResponder(undefined, {
      host: listen.host,
      port: listen.port,
      ...(opts.dnsMaxTcpConnections === undefined ? {} : { maxTcpConnections: opts.dnsMaxTcpConnections }),
      logger: (m) => {
        log.debug(m);
      },
    }).then((r) => {
      log.info(
        { udp: r.address.udpPort, tcp: r.address.tcpPort, host: r.address.host },
        `DNS responder listening on ${r.address.host}:${String(r.address.udpPort)}`,
      );
      return r;
    });
    dns = tagListen(started, "--dns-listen", `${listen.host}:${String(listen.port)}`);
    const responder = dns;
    subs.add(
      rendered$.subscribe((out) => {
        const model = selectDnsModel(out.model.topologies, opts.dnsServer);
        void responder.then((r) => {
          r.update(model);
        });
      }),
    );
  }

  return {
    ready: Promise.all([dns, xds, http]).then(() => {
      bound = true;
    }),
    close: async () => {
      closing = true;
      subs.unsubscribe();
      for (const f of onClose) f();
      if (http !== undefined) {
        const server = await http;
        // Open event streams would hold close() forever.
        page?.close();
        await new Promise((r) => {
          server.close(r);
          server.closeAllConnections();
        });
      }
      kea?.close();
      if (dns !== undefined) await (await dns).close();
      if (xds !== undefined) await (await xds).close();
    },
  };
}

/**
 * serve's log of what it read: each problem once, when it appears (warn, with file:line:column),
 * and once when it goes (info) — a reload that changes nothing logs nothing.
 */
class LoadReport {
  readonly #log: Logger;
  readonly #dir: string;
  readonly #problems = new ProblemMemory();
  #unreadable: string | undefined;
  /** The files (and objects) of the last load that could not be applied, as logged. */
  #fileProblems = new Set<string>();
  #watchDown = false;
  #notice: string | undefined;
  #infras: readonly RenderedInfra[] | undefined;

  constructor(log: Logger, dir: string) {
    this.#log = log;
    this.#dir = dir;
  }

  unreadable(error: ManifestError): void {
    const text = formatManifestError(error);
    if (text !== this.#unreadable) {
      const at = { file: error.file, line: error.line, column: error.column };
      this.#log.warn(
        at,
        `${text} — manifests unreadable, keeping the last good configuration${this.#infras === undefined ? " (none yet)" : ""}`,
      );
    }
    this.#unreadable = text;
  }

  watch(h: WatchHealth): void {
    if (h.type === "path") {
      this.#log.warn({ file: h.path }, `${h.path}: cannot be watched: ${h.reason}; the rest of the folder is watched`);
    } else if (h.type === "down") {
      if (!this.#watchDown)
        this.#log.error(`cannot watch ${this.#dir}: ${h.reason}; changes are not seen, retrying (not ready meanwhile)`);
      this.#watchDown = true;
    } else {
      this.#log.info(`watching ${this.#dir} again; reading it whole`);
      this.#watchDown = false;
    }
  }

  rendered(load: Extract<ManifestLoad, { ok: true }>, out: Outputs): void {
    if (this.#unreadable !== undefined) this.#log.info(`manifests readable again: ${this.#unreadable} is resolved`);
    this.#unreadable = undefined;
    // One file that cannot be applied holds back only what it defines: said once, and once resolved.
    const problems = new Set<string>();
    for (const p of load.problems) {
      const text = formatManifestError(p);
      problems.add(text);
      if (!this.#fileProblems.has(text))
        this.#log.warn(
          { file: p.file, line: p.line, column: p.column },
          `${text} — not applied: its last good version, if any, is still served; the other files are applied`,
        );
    }
    for (const text of this.#fileProblems) if (!problems.has(text)) this.#log.info(`resolved: ${text}`);
    this.#fileProblems = problems;
    const ignored = summarizeIgnored(load.ignored);
    if (ignored !== "") this.#log.debug(`ignored ${ignored}`);
    const notice = noInfraWarning(this.#dir, load);
    if (notice !== undefined && notice !== this.#notice) this.#log.warn(notice);
    this.#notice = notice;
    const { added, resolved } = this.#problems.update(problemLines(problemEntries(out), load.sources));
    for (const p of added) {
      this.#log.warn(
        { object: p.object, field: p.field, reason: p.reason, severity: p.severity, ...p.position },
        p.text,
      );
    }
    for (const text of resolved) this.#log.info(`resolved: ${text}`);
    if (this.#infras === undefined || !sameItems(this.#infras, out.infras)) {
      this.#log.info({ infras: out.infras.length, problems: out.model.problems.length }, "rendered");
    }
    this.#infras = out.infras;
  }
}

/**
 * The objects with problems and their problems, as status entries hold them: the model's, and the
 * children's (a refused rendering). Read from the model and each Infra's rendering, not from
 * every object's status, so a change costs the problems, not the objects.
 */
export function problemEntries(out: Pick<Outputs, "model" | "infras">): ProblemEntry[] {
  const entries: ProblemEntry[] = [];
  for (const p of out.model.problems) entries.push({ ...p.object, problems: [p] });
  for (const r of out.infras) for (const c of r.childStatus) if (c.problems.length > 0) entries.push(c);
  return entries;
}

/** Whether two renderings hold the same Infra renderings (a kept Infra keeps its object). */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function logKeaEvent(log: Logger, socket: string, e: ApplierEvent): void {
  if (e.type === "waiting") {
    // Logged at the first attempt and then rarely: a missing socket is expected while Kea starts.
    if (e.attempt === 1 || e.attempt % 20 === 0)
      log.warn({ socket, attempt: e.attempt }, `Kea not reachable yet, retrying: ${e.error}`);
    return;
  }
  if (e.type === "learned") {
    log.info({ socket, interfaces: e.interfaces }, "Kea control socket reached");
    return;
  }
  const r = e.result;
  if (r.status === "applied")
    log.info(
      { socket, hash: r.hash, persisted: r.persisted },
      r.persisted ? "Kea configuration applied" : `Kea configuration applied but not written: ${r.text ?? ""}`,
    );
  else if (r.status === "rejected")
    log.error(
      { socket, hash: r.hash, command: r.command },
      `Kea rejected the configuration and keeps the previous one: ${r.text}`,
    );
}

/** The DNS model of DNSServer `name` ("namespace/name"), or the first Infra's with DNS enabled. */
export function selectDnsModel(topologies: readonly Topology[], name?: string): DnsModel | undefined {
  return topologies.find((t) => t.dns !== undefined && (name === undefined || t.dns.name === name))?.dns;
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
