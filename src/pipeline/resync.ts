// Inputs → inputs, plus the latest one again after each quiet period: the periodic resync that
// re-runs a pass (which writes nothing when converged) even when no watch event came.
import {
  concat,
  identity,
  interval,
  map,
  of,
  switchMap,
  type MonoTypeOperatorFunction,
  type SchedulerLike,
} from "rxjs";

/** Each value at once, then again every `periodMs` until a newer one arrives; periodMs ≤ 0 disables. */
export function resync<T>(periodMs: number, scheduler: SchedulerLike): MonoTypeOperatorFunction<T> {
  if (periodMs <= 0) return identity;
  return switchMap((value: T) => concat(of(value), interval(periodMs, scheduler).pipe(map(() => value))));
}
