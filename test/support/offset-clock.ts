// A clock that runs with real time and can also jump ahead (days of certificate lifetime in a
// test): timers fire once clock time passes their due time, whether time passed or jumped. Unlike
// ManualClock, periodic timers (leases, resyncs) keep working without being stepped by hand.
import type { Clock, TimerHandle } from "../../src/util/clock.js";

export class OffsetClock implements Clock {
  #offset: number;
  #timers: { at: number; callback: () => void; handle: TimerHandle }[] = [];
  readonly #tick: ReturnType<typeof setInterval>;

  /** `offsetMs`: where the clock starts relative to real time (negative: in the past). */
  constructor(offsetMs = 0, tickMs = 10) {
    this.#offset = offsetMs;
    this.#tick = setInterval(() => {
      this.#fire();
    }, tickMs);
    this.#tick.unref();
  }

  now(): number {
    return Date.now() + this.#offset;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const handle = {};
    this.#timers.push({ at: this.now() + ms, callback, handle });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.handle !== handle);
  }

  /** Moves the clock forward by `ms`; timers now due fire on the next tick. */
  jump(ms: number): void {
    this.#offset += ms;
  }

  stop(): void {
    clearInterval(this.#tick);
  }

  #fire(): void {
    const now = this.now();
    const due = this.#timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
    this.#timers = this.#timers.filter((t) => t.at > now);
    for (const t of due) t.callback();
  }
}
