// A clock that moves only when a test says so, for the responder's TCP deadlines.
import type { Clock, TimerHandle } from "../../../src/util/clock.js";

export class ManualClock implements Clock {
  #now = 0;
  #timers: { at: number; callback: () => void; handle: TimerHandle }[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const handle = {};
    this.#timers.push({ at: this.#now + ms, callback, handle });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.handle !== handle);
  }

  /** Timers waiting now. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing the timers due by then in order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.callback();
    }
    this.#now = end;
  }
}
