// clockScheduler: RxJS time is the injected clock's — a ManualClock's advance fires the timers,
// periodic work reschedules itself, and unsubscribing leaves no timer behind.
import { interval, timer } from "rxjs";
import { describe, expect, it } from "vitest";
import { clockScheduler } from "../../../src/pipeline/schedulers.js";
import { ManualClock } from "../../support/manual-clock.js";

describe("clockScheduler", () => {
  it("fires timers when the clock passes them, and periodic ones every period", () => {
    const clock = new ManualClock();
    const scheduler = clockScheduler(clock);
    const seen: number[] = [];
    const t0 = clock.now();
    const once = timer(100, scheduler).subscribe(() => seen.push(clock.now() - t0));
    const every = interval(40, scheduler).subscribe((n) => seen.push(-n));
    expect(scheduler.now()).toBe(t0);
    clock.advance(99);
    expect(seen).toEqual([-0, -1]);
    clock.advance(1);
    expect(seen).toEqual([-0, -1, 100]);
    expect(once.closed).toBe(true);
    every.unsubscribe();
    expect(clock.pending).toBe(0);
    clock.advance(1_000);
    expect(seen).toHaveLength(3);
  });
});
