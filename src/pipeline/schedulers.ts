// An injected Clock (or the event loop's next turn) → an RxJS scheduler, so the render loop's
// operators run on the same time as the rest of the operator (a ManualClock in tests).
import { Subscription, type SchedulerAction, type SchedulerLike } from "rxjs";
import type { Clock, TimerHandle } from "../util/clock.js";

interface Timers<H> {
  now(): number;
  set(callback: () => void, ms: number): H;
  clear(handle: H): void;
}

/** One scheduled piece of work; rescheduling replaces its timer, as RxJS's own actions do. */
class TimerAction<T, H> extends Subscription implements SchedulerAction<T> {
  readonly #timers: Timers<H>;
  readonly #work: (this: SchedulerAction<T>, state?: T) => void;
  #handle: H | undefined;

  constructor(timers: Timers<H>, work: (this: SchedulerAction<T>, state?: T) => void) {
    super();
    this.#timers = timers;
    this.#work = work;
    this.add(() => {
      this.#cancel();
    });
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.#cancel();
    this.#handle = this.#timers.set(() => {
      this.#handle = undefined;
      this.#work.call(this, state);
      // Work that did not schedule itself again is done: it leaves its parent subscription.
      if (!this.#pending()) this.unsubscribe();
    }, delay);
    return this;
  }

  // A method, so TypeScript does not narrow the field across the work's call.
  #pending(): boolean {
    return this.#handle !== undefined;
  }

  #cancel(): void {
    if (this.#handle !== undefined) this.#timers.clear(this.#handle);
    this.#handle = undefined;
  }
}

function timerScheduler<H>(timers: Timers<H>): SchedulerLike {
  return {
    now: () => timers.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
      return new TimerAction(timers, work).schedule(state, delay);
    },
  };
}

/** Timers of `clock`. */
export function clockScheduler(clock: Clock): SchedulerLike {
  return timerScheduler<TimerHandle>({
    now: () => clock.now(),
    set: (callback, ms) => clock.setTimeout(callback, ms),
    clear: (handle) => {
      clock.clearTimeout(handle);
    },
  });
}

/**
 * Delay 0 runs on setImmediate: after the I/O callbacks of this turn of the event loop (every
 * watch chunk read in it) and before its timers. RxJS's asapScheduler is a microtask, which runs
 * before the rest of the turn's I/O.
 */
export const TURN_SCHEDULER: SchedulerLike = timerScheduler<() => void>({
  now: () => Date.now(),
  set: (callback, ms) => {
    if (ms > 0) {
      const timeout = setTimeout(callback, ms);
      return () => {
        clearTimeout(timeout);
      };
    }
    const immediate = setImmediate(callback);
    return () => {
      clearImmediate(immediate);
    };
  },
  clear: (cancel) => {
    cancel();
  },
});
