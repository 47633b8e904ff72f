// The leader's reconcile pass: the latest snapshot's rendering → applies, deletes, finalizers and
// status writes, counted and timed. A replica that does not lead (any more) skips it; a failure
// is thrown for the pass loop's backoff (src/pipeline/passes.ts).
import type { Outputs } from "../../pipeline/outputs.js";
import type { Observed } from "../../watchers/kube/observed.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { NotLeaderError, type Reconciler } from "../writing/reconcile.js";
import type { OperatorMetrics } from "./metrics.js";

export interface ReconcilePassOptions {
  readonly reconciler: Reconciler;
  readonly render: (observed: Observed) => Outputs;
  readonly latest: () => Observed | undefined;
  readonly isLeader: () => boolean;
  readonly metrics: OperatorMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** One pass over the latest snapshot. */
export async function reconcilePass(o: ReconcilePassOptions): Promise<void> {
  const obs = o.latest();
  if (obs === undefined || !o.isLeader()) return;
  const started = o.clock.now();
  try {
    const r = await o.reconciler.reconcile(obs, o.render(obs));
    o.metrics.inc("oooi_reconcile_total", { result: "ok" });
    const writes = r.applied + r.deleted + r.finalizers + r.statuses;
    if (writes > 0)
      o.logger.info(
        { applied: r.applied, deleted: r.deleted, finalizers: r.finalizers, statuses: r.statuses },
        "reconciled",
      );
  } catch (e) {
    if (e instanceof NotLeaderError) {
      o.metrics.inc("oooi_reconcile_total", { result: "skipped" });
      return;
    }
    o.metrics.inc("oooi_reconcile_total", { result: "error" });
    throw e;
  } finally {
    o.metrics.observe("oooi_reconcile_duration_seconds", (o.clock.now() - started) / 1000);
  }
}
