// The operator's writers and what decides who writes: the Lease (leader election), the reconcile
// pass (children, the CoreDNS ConfigMap, status) on the pass loop, and apps ingress. The rendering
// is made here too: it reads the DNS ConfigMaps the reconciler sees, and the pass reuses it.
import { Subject, type Observable } from "rxjs";
import type { KubeRest } from "../../kube/rest.js";
import type { Outputs } from "../../pipeline/outputs.js";
import { runPasses, type Passes } from "../../pipeline/passes.js";
import { clockScheduler } from "../../pipeline/schedulers.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Observed } from "../../watchers/kube/observed.js";
import { AppsIngressController } from "../apps-ingress/controller.js";
import { OperatorRendering } from "../inputs/rendering.js";
import { Reconciler } from "../writing/reconcile.js";
import { DEFAULT_LEASE_TIMING, LeaderElector } from "./leader.js";
import type { ApiOutage } from "./api-outage.js";
import type { OperatorMetrics } from "./metrics.js";
import type { RunOperatorOptions } from "./options.js";
import { reconcilePass } from "./reconcile-pass.js";
import type { StatusViews } from "./status-views.js";

/** Name of the leader-election Lease in the operator's namespace. */
export const LEASE_NAME = "oooi-operator";
/** runOperator's default reconcileIntervalMs. */
export const RECONCILE_INTERVAL_MS = 500;

export interface Writers {
  readonly elector: LeaderElector | undefined;
  /** Emits each time this replica becomes the leader. */
  readonly leading$: Observable<void>;
  readonly isLeader: () => boolean;
  readonly apps: AppsIngressController | undefined;
  readonly passes: Passes;
  /** A snapshot's rendering (the render loop's and the pass's). */
  readonly render: (observed: Observed) => Outputs;
}

export interface WritersContext {
  readonly rest: KubeRest;
  readonly identity: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
  readonly views: StatusViews;
  readonly outage: ApiOutage;
  readonly latest: () => Observed | undefined;
  /** True once close() began: nothing new is written. */
  readonly stopping: () => boolean;
}

export function makeWriters(opts: RunOperatorOptions, c: WritersContext): Writers {
  const { rest, clock, logger, metrics } = c;
  const leading$ = new Subject<void>();
  const elector =
    opts.leaderElection === false
      ? undefined
      : new LeaderElector({
          ...{ rest, namespace: opts.settings.namespace, name: opts.leaseName ?? LEASE_NAME, identity: c.identity },
          ...{ clock, logger, timing: opts.leaseTiming ?? DEFAULT_LEASE_TIMING },
          unreachable: (what, e) => c.outage.unreachable(what, e),
          onChange: (leading) => {
            metrics.set("oooi_leader", leading ? 1 : 0);
            metrics.inc("oooi_leader_transitions_total", { to: leading ? "leader" : "follower" });
            if (leading) leading$.next();
          },
        });
  const isLeader = (): boolean => !c.stopping() && (elector === undefined || elector.isLeader());
  const appsOptions = opts.appsIngress === false ? undefined : (opts.appsIngress ?? {});
  const backoff = opts.backoff === undefined ? {} : { backoff: opts.backoff };
  const apps =
    appsOptions === undefined
      ? undefined
      : new AppsIngressController({
          ...{ rest, clock, logger, isLeader, ...backoff },
          ...(appsOptions.resyncMs === undefined ? {} : { resyncMs: appsOptions.resyncMs }),
          ...(appsOptions.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: appsOptions.requestTimeoutMs }),
        });
  const { dataPlane, dnsServing } = c.views;
  const reconciler = new Reconciler({
    ...{ rest, settings: opts.settings, dataPlane, clock, logger, metrics, isLeader },
    ...(dnsServing === undefined ? {} : { dnsServing }),
    ...(apps === undefined ? {} : { holdsFinalizer: (a) => apps.holds(a) }),
    ...(opts.pki === undefined ? {} : { pki: opts.pki }),
  });
  const rendering = new OperatorRendering({
    kea: { hooksDirectory: opts.settings.keaHooksDirectory },
    ...(opts.envoy === undefined ? {} : { envoy: opts.envoy }),
    dnsFiles: (obs) => reconciler.dnsFiles(obs),
    clock,
  });
  const render = (obs: Observed): Outputs => rendering.render(obs);
  const passes = runPasses(
    () => reconcilePass({ reconciler, render, latest: c.latest, isLeader, metrics, logger, clock }),
    {
      scheduler: clockScheduler(clock),
      resyncMs: opts.resyncMs ?? 30_000,
      minIntervalMs: opts.reconcileIntervalMs ?? RECONCILE_INTERVAL_MS,
      ...backoff,
      onError: (e, attempt) => {
        if (c.outage.unreachable("reconcile", e)) return;
        logger.warn(
          { attempt, err: e instanceof Error ? e.message : String(e) },
          "reconcile failed; retrying with backoff",
        );
      },
    },
  );
  return { elector, leading$, isLeader, apps, passes, render };
}
