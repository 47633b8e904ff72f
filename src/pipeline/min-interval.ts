// Passes → passes at least an interval apart: a pass that walks everything (the reconcile pass)
// then costs its share of the CPU at most once per interval, however fast events come.
import { throttleTime, type MonoTypeOperatorFunction, type SchedulerLike } from "rxjs";

/**
 * The first value at once; after each emission, values for `ms` are held and the latest of them is
 * emitted at the interval's end, which starts the next interval. Nothing is dropped for good: the
 * last value of a burst always goes out.
 */
export function minInterval<T>(ms: number, scheduler: SchedulerLike): MonoTypeOperatorFunction<T> {
  return throttleTime(ms, scheduler, { leading: true, trailing: true });
}
