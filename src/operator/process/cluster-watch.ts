// runOperator's options → the cluster watcher (every watched resource as one stream of snapshots),
// its restarts counted.
import type { KubeRest } from "../../kube/rest.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { ClusterWatcher } from "../../watchers/kube/cluster.js";
import type { ApiOutage } from "./api-outage.js";
import type { OperatorMetrics } from "./metrics.js";
import type { RunOperatorOptions } from "./options.js";

export function clusterWatcher(
  opts: Pick<RunOperatorOptions, "debounceMs" | "watch" | "backoff">,
  c: {
    readonly rest: KubeRest;
    readonly clock: Clock;
    readonly logger: Logger;
    readonly metrics: OperatorMetrics;
    readonly outage: ApiOutage;
  },
): ClusterWatcher {
  const { watch, backoff } = opts;
  return new ClusterWatcher({
    ...{ rest: c.rest, logger: c.logger, clock: c.clock },
    ...(opts.debounceMs === undefined ? {} : { debounceMs: opts.debounceMs }),
    ...(watch?.timeoutSeconds === undefined ? {} : { watchTimeoutSeconds: watch.timeoutSeconds }),
    ...(watch?.watchdogMs === undefined ? {} : { watchdogMs: watch.watchdogMs }),
    ...(watch?.discoveryIntervalMs === undefined ? {} : { discoveryIntervalMs: watch.discoveryIntervalMs }),
    ...(backoff === undefined ? {} : { backoff }),
    onRestart: (resource, reason) => {
      c.metrics.inc("oooi_watch_restarts_total", { resource, reason });
    },
    unreachable: (what, e) => c.outage.unreachable(what, e),
  });
}
