// `oooi operator`'s composition root: cluster watches → renderAll → onState (every replica, for its
// own xDS cache) and, on the Lease holder only, reconcile → writes. Probes and metrics on HTTP.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { AddressInfo } from "node:net";
import type { KubeClientConfig } from "../../kube/kubeconfig.js";
import type { Subscription } from "rxjs";
import type { BackoffOptions } from "../../util/backoff.js";
import type { ClusterState } from "../../model/types.js";
import { renderAll, type Outputs } from "../../pipeline/outputs.js";
import { persistedAllocations } from "../inputs/allocations.js";
import { dnsPrevious } from "../inputs/dns-previous.js";
import { ClusterWatcher } from "../../watchers/kube/cluster.js";
import { SYSTEM_CLOCK, type Clock } from "../../util/clock.js";
import type { Observed } from "../../watchers/kube/observed.js";
import { KubeRest } from "../../kube/rest.js";
import type { SnapshotCache } from "../../xds/cache/index.js";
import type { XdsStatusView } from "../../xds/client-status.js";
import { NO_DATA_PLANE, type DataPlaneView } from "../status/dataplane.js";
import { FleetReports, type FleetTiming } from "../status/fleet.js";
import { XdsDataPlane } from "../status/xds-dataplane.js";
import { DnsServingProbe, dnsServingView, type DnsTarget } from "../status/dns-serving.js";
import type { KubeObject } from "../../kube/rest.js";
import type { OperatorSettings } from "../desired/settings.js";
import { startProbeServer, type HttpListen, type PageRoutes, type ProbeServer } from "./http.js";
import { DEFAULT_LEASE_TIMING, LeaderElector, type LeaseTiming } from "./leader.js";
import { OPERATOR_METRICS, type OperatorMetrics } from "./metrics.js";
import { Metrics } from "../../metrics/index.js";
import { NotLeaderError, Reconciler } from "../writing/reconcile.js";
import { runPasses } from "../../pipeline/passes.js";
import { clockScheduler } from "../../pipeline/schedulers.js";
import { AppsIngressController } from "../apps-ingress/controller.js";
import type { OperatorCa } from "../../pki/store.js";
import type { Logger } from "../../util/logger.js";

/** Name of the leader-election Lease in the operator's namespace. */
export const LEASE_NAME = "oooi-operator";
/** runOperator's default reconcileIntervalMs. */
export const RECONCILE_INTERVAL_MS = 500;

/** Everything `oooi operator` passes in. */
export interface RunOperatorOptions {
  readonly kubeConfig: KubeClientConfig;
  /** Operator-wide settings; `settings.namespace` is where the Lease lives. */
  readonly settings: OperatorSettings;
  /**
   * This replica's xDS server: its nodes are reported to the other replicas (src/operator/status/fleet.ts)
   * and the whole fleet's reports become the data-plane view status is written from.
   */
  readonly xds?: { readonly status: XdsStatusView; readonly cache: SnapshotCache };
  /** Replica reports' timing (default DEFAULT_FLEET_TIMING). */
  readonly fleetTiming?: FleetTiming;
  /**
   * dnsReady from real DNS queries through each DNSServer's Service (default on, probing every 3 s
   * while not serving); `target` maps a Service to where it answers (tests: a loopback CoreDNS).
   * false: dnsReady once the ConfigMap carries the current content (no CoreDNS to ask).
   */
  readonly dnsProbe?:
    false | { readonly intervalMs?: number; readonly target?: (service: KubeObject) => DnsTarget | undefined };
  /** A data-plane view given directly (tests); ignored when `xds` is given. Default: nothing ever synced. */
  readonly dataPlane?: DataPlaneView;
  /** Called on every replica with each new state and its rendering (feed the xDS cache from it). Never called with a partial state. */
  readonly onState?: (state: ClusterState, outputs: Outputs) => void;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Probe/metrics listener; undefined = none. */
  readonly httpListen?: HttpListen;
  /** Served on the probe listener in front of the probes (the live status page). */
  readonly page?: PageRoutes;
  /** Default: the catalogue on a fresh prom-client registry. */
  readonly metrics?: OperatorMetrics;
  /** This replica's identity in the Lease (default: hostname plus a random suffix). */
  readonly identity?: string;
  /** false = this replica always writes (single replica, tests). Default true. */
  readonly leaderElection?: boolean;
  readonly leaseName?: string;
  readonly leaseTiming?: LeaseTiming;
  /** Reconcile again this often without a trigger (default 30 s; it writes nothing when converged). */
  readonly resyncMs?: number;
  /**
   * At least this long between the starts of two reconcile passes (default 500 ms). A pass walks every
   * desired and watched object; at 10 watch events a second, one pass per event was half the
   * process's CPU. The xDS push does not wait for a pass (onState runs per snapshot); applies and
   * status writes do, by at most this long.
   */
  readonly reconcileIntervalMs?: number;
  /**
   * Coalescing window of cluster changes (the first change goes out at once). Default 0: none — the
   * changes read in one turn of the event loop make one snapshot (src/watchers/kube/cluster.ts).
   */
  readonly debounceMs?: number;
  readonly watch?: {
    readonly timeoutSeconds?: number;
    readonly watchdogMs?: number;
    readonly discoveryIntervalMs?: number;
  };
  readonly backoff?: BackoffOptions;
  /**
   * Apps-ingress automation (reaching hosted clusters); default on. false: leave
   * status.appsIngressStatus to whoever else writes it (tests on an API server with no hosted cluster).
   */
  readonly appsIngress?: false | { readonly resyncMs?: number; readonly requestTimeoutMs?: number };
  /** close() gives up on what is left after this long (default 5 s). */
  readonly shutdownMs?: number;
  /** The operator's CA: client certificate Secrets for every data-plane child (mTLS on xDS). */
  readonly pki?: OperatorCa;
  /** Called during close() after writes stopped and the Lease was released: close xDS streams here. */
  readonly closeStreams?: () => Promise<void>;
}

/** A running operator. */
export interface RunningOperator {
  /** Resolves once every watch has listed (and the probe server listens). */
  readonly ready: Promise<void>;
  /** The probe server's address once listening. */
  httpAddress(): AddressInfo | undefined;
  isLeader(): boolean;
  /** The fleet's replicas and nodes as this replica sees them (undefined without `xds`). */
  readonly fleet: FleetReports | undefined;
  /** The latest snapshot (undefined before ready). */
  observed(): Observed | undefined;
  /** Stop writing, release the Lease, close streams (closeStreams), stop watching. */
  close(): Promise<void>;
}

/** Starts the operator. */
export function runOperator(opts: RunOperatorOptions): RunningOperator {
  const clock = opts.clock ?? SYSTEM_CLOCK;
  const log = opts.logger;
  const metrics = opts.metrics ?? new Metrics().recorder(OPERATOR_METRICS);
  const rest = new KubeRest(opts.kubeConfig, {
    onResponse: (method, _path, code) => {
      metrics.inc("oooi_kube_requests_total", { method, code: String(code) });
    },
  });
  const identity = opts.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
  const fleet =
    opts.xds === undefined
      ? undefined
      : new FleetReports({
          rest,
          namespace: opts.settings.namespace,
          replica: identity,
          status: opts.xds.status,
          clock,
          fieldManager: opts.settings.fieldManager,
          ...(opts.fleetTiming === undefined ? {} : { timing: opts.fleetTiming }),
          ...(opts.watch?.timeoutSeconds === undefined ? {} : { watchTimeoutSeconds: opts.watch.timeoutSeconds }),
          logger: log,
        });
  const dataPlane =
    fleet !== undefined && opts.xds !== undefined
      ? new XdsDataPlane(fleet, opts.xds.cache)
      : (opts.dataPlane ?? NO_DATA_PLANE);
  const dnsProbeOptions = opts.dnsProbe === false ? undefined : (opts.dnsProbe ?? {});
  const dnsProbe =
    dnsProbeOptions === undefined
      ? undefined
      : new DnsServingProbe({
          clock,
          ...(dnsProbeOptions.intervalMs === undefined ? {} : { intervalMs: dnsProbeOptions.intervalMs }),
        });
  const dnsServing = dnsProbe === undefined ? undefined : dnsServingView(dnsProbe, dnsProbeOptions?.target);
  let stopping = false;

  const watcher = new ClusterWatcher({
    rest,
    logger: log,
    clock,
    ...(opts.debounceMs === undefined ? {} : { debounceMs: opts.debounceMs }),
    ...(opts.watch?.timeoutSeconds === undefined ? {} : { watchTimeoutSeconds: opts.watch.timeoutSeconds }),
    ...(opts.watch?.watchdogMs === undefined ? {} : { watchdogMs: opts.watch.watchdogMs }),
    ...(opts.watch?.discoveryIntervalMs === undefined ? {} : { discoveryIntervalMs: opts.watch.discoveryIntervalMs }),
    ...(opts.backoff === undefined ? {} : { backoff: opts.backoff }),
    onRestart: (resource, reason) => {
      metrics.inc("oooi_watch_restarts_total", { resource, reason });
    },
  });

  const elector =
    opts.leaderElection === false
      ? undefined
      : new LeaderElector({
          rest,
          namespace: opts.settings.namespace,
          name: opts.leaseName ?? LEASE_NAME,
          identity,
          timing: opts.leaseTiming ?? DEFAULT_LEASE_TIMING,
          clock,
          logger: log,
          onChange: (leading) => {
            metrics.set("oooi_leader", leading ? 1 : 0);
            metrics.inc("oooi_leader_transitions_total", { to: leading ? "leader" : "follower" });
            if (leading) runner.trigger();
            const obs = latest;
            if (leading && obs !== undefined) apps?.sync(obs);
          },
        });
  const isLeader = (): boolean => !stopping && (elector === undefined || elector.isLeader());

  const apps =
    opts.appsIngress === false
      ? undefined
      : new AppsIngressController({
          rest,
          clock,
          logger: log,
          isLeader,
          ...(opts.backoff === undefined ? {} : { backoff: opts.backoff }),
          ...(opts.appsIngress?.resyncMs === undefined ? {} : { resyncMs: opts.appsIngress.resyncMs }),
          ...(opts.appsIngress?.requestTimeoutMs === undefined
            ? {}
            : { requestTimeoutMs: opts.appsIngress.requestTimeoutMs }),
        });

  const reconciler = new Reconciler({
    rest,
    settings: opts.settings,
    dataPlane,
    ...(dnsServing === undefined ? {} : { dnsServing }),
    clock,
    logger: log,
    metrics,
    isLeader,
    ...(apps === undefined ? {} : { holdsFinalizer: (a) => apps.holds(a) }),
    ...(opts.pki === undefined ? {} : { pki: opts.pki }),
  });

  // Rendering is memoized per snapshot and DNS history, so the reconcile pass reuses onState's.
  // Each rendering continues from the one before: the snapshot right after it carries the keyed
  // changes since (src/watchers/kube/observed.ts), so only the Infras they feed are built again.
  let latest: Observed | undefined;
  // `previous` is undefined while the cluster's DNS ConfigMaps hold what the last rendering rendered.
  let rendered: { seq: number; previous: ReadonlyMap<string, string> | undefined; outputs: Outputs } | undefined;
  const render = (obs: Observed): Outputs => {
    const previous = dnsPrevious(reconciler.dnsFiles(obs), rendered?.outputs);
    if (rendered?.seq === obs.seq && samePrevious(rendered.previous, previous)) return rendered.outputs;
    const changes = rendered?.seq === obs.seq ? [] : rendered?.seq === obs.seq - 1 ? obs.changes : undefined;
    const outputs = renderAll(obs.state, {
      kea: { hooksDirectory: opts.settings.keaHooksDirectory },
      ...(previous === undefined ? {} : { previous }),
      // Durable DHCP state: what the leader last wrote to each DHCPServer's status.
      dhcpAllocations: persistedAllocations(obs.raw.dhcpservers),
      now: clock.now(),
      ...(rendered === undefined
        ? {}
        : {
            reuse: rendered.outputs,
            lastGood: rendered.outputs.lastGood,
            ...(changes === undefined ? {} : { changes }),
          }),
    });
    rendered = { seq: obs.seq, previous, outputs };
    return outputs;
  };

  const runner = runPasses(
    async () => {
      const obs = latest;
      if (obs === undefined || !isLeader()) return;
      const started = clock.now();
      try {
        const r = await reconciler.reconcile(obs, render(obs));
        metrics.inc("oooi_reconcile_total", { result: "ok" });
        const writes = r.applied + r.deleted + r.finalizers + r.statuses;
        if (writes > 0)
          log.info(
            { applied: r.applied, deleted: r.deleted, finalizers: r.finalizers, statuses: r.statuses },
            "reconciled",
          );
      } catch (e) {
        if (e instanceof NotLeaderError) {
          metrics.inc("oooi_reconcile_total", { result: "skipped" });
          return;
        }
        metrics.inc("oooi_reconcile_total", { result: "error" });
        throw e;
      } finally {
        metrics.observe("oooi_reconcile_duration_seconds", (clock.now() - started) / 1000);
      }
    },
    {
      scheduler: clockScheduler(clock),
      resyncMs: opts.resyncMs ?? 30_000,
      minIntervalMs: opts.reconcileIntervalMs ?? RECONCILE_INTERVAL_MS,
      ...(opts.backoff === undefined ? {} : { backoff: opts.backoff }),
      onError: (e, attempt) => {
        log.warn(
          { attempt, err: e instanceof Error ? e.message : String(e) },
          "reconcile failed; retrying with backoff",
        );
      },
    },
  );

  const subscription: Subscription = watcher.snapshots$.subscribe((obs) => {
    latest = obs;
    metrics.inc("oooi_cluster_snapshots_total");
    let outputs: Outputs;
    try {
      outputs = render(obs);
    } catch (e) {
      log.error({ err: (e as Error).message }, "rendering failed; keeping the last good configuration");
      return;
    }
    try {
      opts.onState?.(obs.state, outputs);
    } catch (e) {
      log.error({ err: (e as Error).message }, "state consumer failed");
    }
    runner.trigger();
    if (isLeader()) apps?.sync(obs);
  });
  const unsubscribeDataPlane = dataPlane.subscribe?.(() => {
    runner.trigger();
  });
  const unsubscribeDns = dnsProbe?.subscribe(() => {
    runner.trigger();
  });

  watcher.start();
  elector?.start();
  fleet?.start();
  let probe: ProbeServer | undefined;
  const probeStarted =
    opts.httpListen === undefined
      ? Promise.resolve()
      : startProbeServer(opts.httpListen, {
          live: () => !stopping,
          ready: () => watcher.isReady() && !stopping,
          metrics,
          ...(opts.page === undefined ? {} : { page: opts.page }),
        }).then((p) => {
          probe = p;
          log.info({ host: p.address.address, port: p.address.port }, "probes and metrics listening");
        });
  const ready = Promise.all([watcher.ready, probeStarted]).then(() => {
    metrics.set("oooi_informers_synced", 1);
  });

  return {
    ready,
    httpAddress: () => probe?.address,
    isLeader,
    fleet,
    observed: () => latest,
    close: async () => {
      if (stopping) return;
      stopping = true;
      // Every step has its own bound (5 s in all by default): with the API server away, its requests
      // are abandoned and the Lease expires by itself (a successor takes over within its duration).
      // An in-flight write cannot be recalled, but none starts after `stopping`.
      const budget = opts.shutdownMs ?? 5_000;
      const bounded = async (what: string, share: number, step: (signal: AbortSignal) => Promise<unknown>) => {
        const deadline = new AbortController();
        const timer = clock.setTimeout(() => {
          deadline.abort();
        }, budget * share);
        await Promise.race([
          step(deadline.signal).catch((e: unknown) => {
            log.warn({ err: (e as Error).message }, `${what} failed during shutdown`);
          }),
          new Promise<void>((resolve) => {
            deadline.signal.addEventListener("abort", () => {
              log.warn({ step: what }, "shutdown step abandoned at its deadline");
              resolve();
            });
          }),
        ]);
        clock.clearTimeout(timer);
      };
      await bounded("stopping writes", 0.2, () => runner.stop());
      await bounded("stopping apps ingress", 0.1, async () => apps?.close());
      await bounded("releasing the Lease", 0.4, (signal) =>
        Promise.all([elector?.stop(true, signal), fleet?.stop(signal)]),
      );
      metrics.set("oooi_leader", 0);
      await bounded("closing xDS streams", 0.2, async () => opts.closeStreams?.());
      unsubscribeDataPlane?.();
      unsubscribeDns?.();
      dnsProbe?.stop();
      subscription.unsubscribe();
      await bounded("stopping watches", 0.1, () => watcher.close());
      await bounded("closing probes", 0.1, () => probeStarted.then(() => probe?.close()));
    },
  };
}

function samePrevious(a: ReadonlyMap<string, string> | undefined, b: ReadonlyMap<string, string> | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
