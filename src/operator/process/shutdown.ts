// close()'s steps, each with its own share of a time budget: with the API server away, a step's
// requests are abandoned at its deadline and the next step runs (the Lease expires by itself).
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";

/** Runs `step` for at most `share` of `budgetMs`; a failure or an overrun is logged, never thrown. */
export type BoundedStep = (
  what: string,
  share: number,
  step: (signal: AbortSignal) => Promise<unknown>,
) => Promise<void>;

export function boundedSteps(clock: Clock, budgetMs: number, log: Pick<Logger, "warn">): BoundedStep {
  return async (what, share, step) => {
    const deadline = new AbortController();
    const timer = clock.setTimeout(() => {
      deadline.abort();
    }, budgetMs * share);
    await Promise.race([
      step(deadline.signal).catch((e: unknown) => {
        log.warn({ err: (e as Error).message }, `${what} failed during shutdown`);
      }),
      new Promise<void>((resolve) => {
        deadline.signal.addEventListener("abort", () => {
          log.warn({ step: what }, "shutdown step abandoned at its deadline");
          resolve();
        });
      }),
    ]);
    clock.clearTimeout(timer);
  };
}
