// runPasses (the writers' loop: resync → minInterval → serial → retryBackoff): one run at a time,
// triggers during a run make one more, runs at most once per minimum interval (the reconcile pass's
// spacing), retries with backoff, resyncs after quiet — on a manual clock.
import { describe, expect, it } from "vitest";
import { runPasses, type PassesOptions } from "../../src/pipeline/passes.js";
import { clockScheduler } from "../../src/pipeline/schedulers.js";
import { ManualClock } from "../support/manual-clock.js";

/** A task whose runs the test finishes by hand; `starts` records the clock at each start. */
function gatedTask(clock: ManualClock) {
  const starts: number[] = [];
  let finish: ((error?: Error) => void) | undefined;
  const task = () =>
    new Promise<void>((resolve, reject) => {
      starts.push(clock.now());
      finish = (error) => {
        finish = undefined;
        if (error === undefined) resolve();
        else reject(error);
      };
    });
  /** Ends the current run and lets the runner react. */
  const end = async (error?: Error): Promise<void> => {
    expect(finish, "a run is in progress").toBeDefined();
    finish?.(error);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { task, starts, end, running: () => finish !== undefined };
}

const passes = (task: () => Promise<void>, clock: ManualClock, o: Omit<PassesOptions, "scheduler">) =>
  runPasses(task, { scheduler: clockScheduler(clock), ...o });

describe("runPasses", () => {
  it("triggers during a run make exactly one more run after it", async () => {
    const clock = new ManualClock();
    const t = gatedTask(clock);
    const runner = passes(t.task, clock, { resyncMs: 0, onError: () => undefined });
    runner.trigger();
    runner.trigger();
    runner.trigger();
    expect(t.starts).toHaveLength(1);
    await t.end();
    expect(t.starts).toHaveLength(2);
    await t.end();
    expect(t.running()).toBe(false);
    expect(t.starts).toHaveLength(2);
    await runner.stop();
  });

  it("with a minimum interval, a trigger soon after a run waits for the interval's end; all triggers meanwhile make one run", async () => {
    const clock = new ManualClock();
    const t = gatedTask(clock);
    const runner = passes(t.task, clock, { resyncMs: 0, minIntervalMs: 500, onError: () => undefined });
    const t0 = clock.now();
    runner.trigger(); // after a quiet spell: at once
    expect(t.starts).toEqual([t0]);
    clock.advance(100);
    await t.end();
    runner.trigger();
    clock.advance(200);
    runner.trigger();
    runner.trigger();
    expect(t.starts).toHaveLength(1);
    clock.advance(199);
    expect(t.starts).toHaveLength(1);
    clock.advance(1);
    expect(t.starts).toEqual([t0, t0 + 500]);
    await t.end();
    expect(t.running()).toBe(false);
    // Triggers during a run: the next one starts an interval after this one started, not at once.
    clock.advance(600);
    runner.trigger();
    expect(t.starts).toHaveLength(3);
    runner.trigger();
    clock.advance(50);
    await t.end();
    expect(t.starts).toHaveLength(3);
    clock.advance(450);
    expect(t.starts).toHaveLength(4);
    expect(t.starts[3]).toBe((t.starts[2] ?? 0) + 500);
    await t.end();
    await runner.stop();
    expect(clock.pending).toBe(0);
  });

  it("a failed run is retried after its backoff, and stop() cancels what is due", async () => {
    const clock = new ManualClock();
    const t = gatedTask(clock);
    const errors: number[] = [];
    const runner = passes(t.task, clock, {
      resyncMs: 0,
      minIntervalMs: 100,
      backoff: { initialMs: 1_000, maxMs: 1_000, jitter: 0 },
      onError: (_e, attempt) => errors.push(attempt),
    });
    runner.trigger();
    await t.end(new Error("boom"));
    expect(errors).toEqual([1]);
    clock.advance(999);
    expect(t.starts).toHaveLength(1);
    clock.advance(1);
    expect(t.starts).toHaveLength(2);
    await t.end();
    runner.trigger(); // the interval since the last trigger has passed: at once
    expect(t.starts).toHaveLength(3);
    runner.trigger();
    await t.end(new Error("again"));
    // A newer trigger waits: it runs (at the interval's end) instead of the retry.
    expect(errors).toEqual([1, 1]);
    clock.advance(100);
    expect(t.starts).toHaveLength(4);
    await t.end(new Error("and again"));
    expect(clock.pending).toBeGreaterThan(0); // the retry
    await runner.stop();
    expect(clock.pending).toBe(0);
    clock.advance(1_000);
    expect(t.starts).toHaveLength(4);
  });

  it("without triggers, the last pass runs again every resync period", async () => {
    const clock = new ManualClock();
    const t = gatedTask(clock);
    const runner = passes(t.task, clock, { resyncMs: 1_000, onError: () => undefined });
    runner.trigger();
    await t.end();
    clock.advance(999);
    expect(t.starts).toHaveLength(1);
    clock.advance(1);
    expect(t.starts).toHaveLength(2);
    await t.end();
    await runner.stop();
    expect(clock.pending).toBe(0);
  });
});
