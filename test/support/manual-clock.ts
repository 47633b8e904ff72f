// A clock that moves only when a test says so: timers fire in order as `advance` passes them.
import type { Clock, TimerHandle } from "../../src/util/clock.js";

/** A clock the test advances by hand; it starts at a fixed date so timestamps it makes are stable. */
export class ManualClock implements Clock {
  #now = Date.parse("2025-01-01T00:00:00Z");
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

  /** Moves time forward, firing due timers in order. */
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

  /** Timers waiting. */
  get pending(): number {
    return this.#timers.length;
  }
}
