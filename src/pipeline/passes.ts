// Triggers → passes of a writer (the reconcile pass, the apps-ingress pass): the render loop's
// operators composed for a task that walks everything and writes what differs.
import { defer, Subject, type SchedulerLike } from "rxjs";
import { minInterval } from "./min-interval.js";
import { resync } from "./resync.js";
import { retryBackoff } from "./retry-backoff.js";
import { serial } from "./serial.js";
import type { BackoffOptions } from "../util/backoff.js";

export interface PassesOptions {
  readonly scheduler: SchedulerLike;
  /** Run again after this long without a trigger (it writes nothing when converged); 0 disables. */
  readonly resyncMs: number;
  /** At least this long between two passes (default 0): triggers meanwhile make one pass at its end. */
  readonly minIntervalMs?: number;
  readonly backoff?: BackoffOptions;
  readonly onError: (error: unknown, attempt: number) => void;
}

/** A running pass loop. */
export interface Passes {
  /** Asks for a pass: at once when idle and the interval allows, else one more after the current one. */
  trigger(): void;
  /** No more passes; waits for the current one. */
  stop(): Promise<void>;
}

/**
 * One pass at a time (serial); a failed pass is retried with backoff until it succeeds or a newer
 * trigger waits (which then runs instead).
 */
export function runPasses(task: () => Promise<void>, o: PassesOptions): Passes {
  const triggers = new Subject<void>();
  let current: Promise<void> | undefined;
  const subscription = triggers
    .pipe(
      resync(o.resyncMs, o.scheduler),
      (o.minIntervalMs ?? 0) > 0 ? minInterval(o.minIntervalMs ?? 0, o.scheduler) : (s) => s,
      serial((_: unknown, superseded) =>
        defer(() => (current = task())).pipe(
          retryBackoff({
            scheduler: o.scheduler,
            ...(o.backoff === undefined ? {} : { backoff: o.backoff }),
            onError: o.onError,
            until: superseded,
          }),
        ),
      ),
    )
    .subscribe();
  return {
    trigger: () => {
      triggers.next();
    },
    stop: async () => {
      subscription.unsubscribe();
      await current?.catch(() => undefined);
    },
  };
}
