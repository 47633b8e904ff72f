// A failed pass → the same pass again after a capped exponential backoff (src/util/backoff.ts),
// until it succeeds or a newer input makes it moot.
import { retry, takeUntil, timer, type MonoTypeOperatorFunction, type Observable, type SchedulerLike } from "rxjs";
import { backoffDelay, type BackoffOptions } from "../util/backoff.js";

export interface RetryBackoffOptions {
  readonly scheduler: SchedulerLike;
  /** Default: 200 ms doubling up to 30 s, half of it jittered. */
  readonly backoff?: BackoffOptions;
  /** The jitter's randomness (a number in [0, 1)); injected so a test fixes it. */
  readonly random?: () => number;
  /** Told before each wait; `attempt` counts the failures in a row (1-based). */
  readonly onError?: (error: unknown, attempt: number) => void;
  /** Once this emits (a newer input waits, see serial()), a wait ends the stream instead of retrying. */
  readonly until?: Observable<unknown>;
}

/** Resubscribes the source after each error, waiting backoffDelay(attempt); a success resets the count. */
export function retryBackoff<T>(o: RetryBackoffOptions): MonoTypeOperatorFunction<T> {
  const pacing = o.backoff ?? { initialMs: 200, maxMs: 30_000 };
  return retry({
    resetOnSuccess: true,
    delay: (error: unknown, attempt: number) => {
      o.onError?.(error, attempt);
      const wait = timer(backoffDelay(attempt, pacing, o.random), o.scheduler);
      // A wait cut short completes without emitting: retry() then completes the stream.
      return o.until === undefined ? wait : wait.pipe(takeUntil(o.until));
    },
  });
}
