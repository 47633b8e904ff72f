// Keyed changes → one batch per turn: every change read in one turn of the event loop (one burst
// of watch chunks) makes one batch, so a burst costs one rendering, not one per object.
import { Observable, type OperatorFunction, type SchedulerLike } from "rxjs";
import { TURN_SCHEDULER } from "./schedulers.js";

/**
 * The values the source emits before `scheduler` next runs (default: the end of this turn, see
 * TURN_SCHEDULER) as one batch, in order. A batch still open when the source completes is emitted first.
 */
export function coalesceTurn<T>(scheduler: SchedulerLike = TURN_SCHEDULER): OperatorFunction<T, readonly T[]> {
  return (source) =>
    new Observable<readonly T[]>((subscriber) => {
      let batch: T[] | undefined;
      const flush = (): void => {
        const done = batch;
        batch = undefined;
        if (done !== undefined) subscriber.next(done);
      };
      const inner = source.subscribe({
        next: (value) => {
          if (batch !== undefined) {
            batch.push(value);
            return;
          }
          batch = [value];
          subscriber.add(scheduler.schedule(flush));
        },
        error: (e: unknown) => {
          subscriber.error(e);
        },
        complete: () => {
          flush();
          subscriber.complete();
        },
      });
      return () => {
        inner.unsubscribe();
      };
    });
}
