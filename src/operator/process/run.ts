// `oooi operator`'s composition root. Cluster watches → the render loop (src/pipeline/render-loop.ts)
// → on every replica, onState (its own xDS cache); on the Lease holder only, the writers: the
// reconcile pass (children, CoreDNS ConfigMap, status) and apps ingress. Probes and metrics on HTTP.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { filter, map, merge, Observable, Subscription, tap } from "rxjs";
import { KubeRest } from "../../kube/rest.js";
import { Metrics } from "../../metrics/index.js";
import { renderLoop } from "../../pipeline/render-loop.js";
import { SYSTEM_CLOCK, type Clock } from "../../util/clock.js";
import type { Observed } from "../../watchers/kube/observed.js";
import { AccessReview } from "./access-review.js";
import { ApiOutage } from "./api-outage.js";
import { serveProbes } from "./http.js";
import { OPERATOR_METRICS, type OperatorMetrics } from "./metrics.js";
import type { RunOperatorOptions, RunningOperator } from "./options.js";
import { boundedSteps } from "./shutdown.js";
import { clusterWatcher } from "./cluster-watch.js";
import { statusViews } from "./status-views.js";
import { makeWriters } from "./writers.js";
import { PoolMetrics } from "./pool-metrics.js";

/** Starts the operator. */
export function runOperator(opts: RunOperatorOptions): RunningOperator {
  const clock = opts.clock ?? SYSTEM_CLOCK;
  const log = opts.logger;
  const metrics = opts.metrics ?? new Metrics().recorder(OPERATOR_METRICS);
  const { rest, outage } = apiClient(opts, metrics, clock);
  const identity = opts.identity ?? `${hostname()}_${randomUUID().slice(0, 8)}`;
  const views = statusViews(opts, { rest, identity, clock, logger: log, outage });
  const { fleet, dataPlane, dnsProbe } = views;
  let stopping = false;
  const watcher = clusterWatcher(opts, { rest, clock, logger: log, metrics, outage });
  let latest: Observed | undefined;
  const { elector, leading$, isLeader, apps, passes, render } = makeWriters(opts, {
    ...{ rest, identity, clock, logger: log, metrics, views, outage },
    latest: () => latest,
    stopping: () => stopping,
  });

  const renderings$ = renderLoop(
    watcher.snapshots$.pipe(
      tap((obs) => {
        latest = obs;
        metrics.inc("oooi_cluster_snapshots_total");
      }),
    ),
    render,
    (e) => {
      log.error({ err: (e as Error).message }, "rendering failed; keeping the last good configuration");
    },
  );
  const pools = new PoolMetrics(metrics);
  const subs = new Subscription();
  // Branches in order: this replica's xDS cache first, then the leader's writers.
  subs.add(
    renderings$.subscribe(({ input, outputs, rebuilt }) => {
      try {
        pools.recordRendering(outputs);
        opts.onState?.(input.state, outputs, { changes: input.changes, rebuilt });
      } catch (e) {
        log.error({ err: (e as Error).message }, "state consumer failed");
      }
    }),
  );
  const statusChanged$ = merge(
    callbacks(dataPlane.subscribe?.bind(dataPlane)),
    callbacks(dnsProbe?.subscribe.bind(dnsProbe)),
  );
  subs.add(
    merge(renderings$, leading$, statusChanged$).subscribe(() => {
      passes.trigger();
    }),
  );
  // Apps ingress follows every rendering while leading, and the latest one when leading starts.
  const appsInput$ = merge(
    renderings$.pipe(
      filter(isLeader),
      map((r) => r.input),
    ),
    leading$.pipe(map(() => latest)),
  );
  subs.add(
    appsInput$.subscribe((obs) => {
      if (obs !== undefined) apps?.sync(obs);
    }),
  );

  watcher.start();
  elector?.start();
  fleet?.start();
  const probe = serveProbes(
    opts.httpListen,
    {
      live: () => !stopping,
      ready: () => watcher.isReady() && !stopping,
      metrics,
      ...(opts.page === undefined ? {} : { page: opts.page }),
      ...(opts.httpAuth === "kubernetes"
        ? { access: new AccessReview({ rest, now: () => clock.now(), logger: log }) }
        : {}),
    },
    log,
  );
  const ready = Promise.all([watcher.ready, probe.started]).then(() => {
    metrics.set("oooi_informers_synced", 1);
  });

  return {
    ready,
    httpAddress: () => probe.current()?.address,
    isLeader,
    fleet,
    observed: () => latest,
    close: async () => {
      if (stopping) return;
      stopping = true;
      // 5 s in all by default; an in-flight write cannot be recalled, but none starts after `stopping`.
      const bounded = boundedSteps(clock, opts.shutdownMs ?? 5_000, log);
      await bounded("stopping writes", 0.2, () => passes.stop());
      await bounded("stopping apps ingress", 0.1, async () => apps?.close());
      await bounded("releasing the Lease", 0.4, (signal) =>
        Promise.all([elector?.stop(true, signal), fleet?.stop(signal)]),
      );
      metrics.set("oooi_leader", 0);
      await bounded("closing xDS streams", 0.2, async () => opts.closeStreams?.());
      subs.unsubscribe();
      dnsProbe?.stop();
      await bounded("stopping watches", 0.1, () => watcher.close());
      await bounded("closing probes", 0.1, () => probe.started.then(() => probe.current()?.close()));
    },
  };
}

/**
 * The API client every part shares, each answer counted; losing the API server while running is one
 * warning, one summary per interval and one line when it is back (ApiOutage), not a line per caller.
 */
function apiClient(
  opts: RunOperatorOptions,
  metrics: OperatorMetrics,
  clock: Clock,
): { rest: KubeRest; outage: ApiOutage } {
  const outage = new ApiOutage({
    clock,
    log: opts.logger,
    ...(opts.apiRetryMaxMs === undefined ? {} : { intervalMs: opts.apiRetryMaxMs }),
  });
  const rest = new KubeRest(opts.kubeConfig, {
    onResponse: (method, _path, code) => {
      metrics.inc("oooi_kube_requests_total", { method, code: String(code) });
      if (code === 0) outage.transportFailed();
      else outage.answered();
    },
  });
  return { rest, outage };
}

/** A listener registration (`subscribe(listener) → unsubscribe`) as a stream; none = never emits. */
function callbacks(subscribe: ((listener: () => void) => () => void) | undefined): Observable<void> {
  return new Observable<void>((subscriber) =>
    subscribe?.(() => {
      subscriber.next();
    }),
  );
}
