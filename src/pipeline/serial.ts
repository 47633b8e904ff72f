// Inputs → one pass at a time: an input that arrives while a pass runs waits, and only the latest
// waiting input runs when the pass ends (exhaustMap with a trailing run). Writers use it: two
// passes never race, and a burst during a long pass costs one more pass, not one per input.
import { from, Observable, ReplaySubject, type ObservableInput, type OperatorFunction, type Subscription } from "rxjs";

/**
 * `pass(value, superseded)` for each value, one at a time; `superseded` emits (and replays) once a
 * newer value waits, so a pass waiting to retry can give way (retryBackoff's `until`). The result
 * completes when the source has and no pass runs or waits.
 */
export function serial<T, R>(
  pass: (value: T, superseded: Observable<void>) => ObservableInput<R>,
): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let busy = false;
      let current: Subscription | undefined;
      let superseded: ReplaySubject<void> | undefined;
      let waiting: { readonly value: T } | undefined;
      let sourceDone = false;
      // A call, so TypeScript does not narrow `busy` across the pass's subscription.
      const isBusy = (): boolean => busy;
      const start = (value: T): void => {
        busy = true;
        const mine = new ReplaySubject<void>(1);
        superseded = mine;
        const sub = from(pass(value, mine)).subscribe({
          next: (r) => {
            subscriber.next(r);
          },
          error: (e: unknown) => {
            subscriber.error(e);
          },
          complete: () => {
            busy = false;
            const next = waiting;
            waiting = undefined;
            if (next !== undefined) start(next.value);
            else if (sourceDone) subscriber.complete();
          },
        });
        // Still running (it did not end synchronously, nor start the next pass).
        if (superseded === mine && isBusy()) current = sub;
      };
      const inner = source.subscribe({
        next: (value) => {
          if (!busy) {
            start(value);
            return;
          }
          waiting = { value };
          superseded?.next();
        },
        error: (e: unknown) => {
          subscriber.error(e);
        },
        complete: () => {
          sourceDone = true;
          if (!busy) subscriber.complete();
        },
      });
      return () => {
        inner.unsubscribe();
        current?.unsubscribe();
      };
    });
}
