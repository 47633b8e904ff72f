// retryBackoff: a failed pass runs again after 10, 20, 40, 40 … (capped) frames, with the jitter
// the test injects; a success resets the count; `until` turns a wait into the end of the stream.
import { defer, throwError, of, concat } from "rxjs";
import { describe, expect, it } from "vitest";
import { retryBackoff } from "../../../src/pipeline/retry-backoff.js";
import { marbles } from "./marbles.js";

const pacing = { initialMs: 10, maxMs: 40, factor: 2, jitter: 0.5 };

describe("retryBackoff", () => {
  it("waits the capped exponential delay before each attempt, shortened by the injected jitter", () => {
    const scheduler = marbles();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const pass = cold("#");
      const attempts: number[] = [];
      const retried = pass.pipe(
        retryBackoff({
          scheduler,
          backoff: pacing,
          random: () => 0.5, // each delay cut by a quarter: 8, 15, 30, 30
          onError: (_e, attempt) => attempts.push(attempt),
        }),
      );
      expectObservable(retried, "^ 100ms !").toBe("");
      expectSubscriptions(pass.subscriptions).toBe(["(^!)", "8ms (^!)", "23ms (^!)", "53ms (^!)", "83ms (^!)"]);
      scheduler.flush();
      expect(attempts.slice(0, 5)).toEqual([1, 2, 3, 4, 5]);
    });
  });

  it("a success resets the count: the next failure waits the first delay again", () => {
    const scheduler = marbles();
    scheduler.run(({ expectObservable }) => {
      let runs = 0;
      // Fails, fails, emits "a" then fails, then succeeds.
      const pass = defer(() => {
        runs++;
        if (runs === 3)
          return concat(
            of("a"),
            throwError(() => new Error("again")),
          );
        return runs === 4 ? of("b") : throwError(() => new Error("boom"));
      });
      const retried = pass.pipe(retryBackoff({ scheduler, backoff: { ...pacing, jitter: 0 } }));
      // 10 (first), 20 (second); "a" resets it; 10 (first again).
      expectObservable(retried).toBe("30ms a 9ms (b|)");
    });
  });

  it("once `until` has emitted, the wait ends the stream instead of retrying", () => {
    const scheduler = marbles();
    scheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const pass = cold("-#");
      const newer = hot("----n");
      const retried = pass.pipe(retryBackoff({ scheduler, backoff: { ...pacing, jitter: 0 }, until: newer }));
      expectObservable(retried).toBe("----|");
      expectSubscriptions(pass.subscriptions).toBe(["^!"]);
    });
  });
});
