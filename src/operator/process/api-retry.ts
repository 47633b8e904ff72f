// `oooi operator` before its watches run: each call to the API server retried until it answers,
// with capped exponential backoff and jitter (util/backoff.ts), and one summary line per interval
// instead of one per attempt. A pod whose API server is away waits, not ready, and says so; it does
// not crash-loop (issue 27, finding 3).
import { backoffDelay } from "../../util/backoff.js";
import { SYSTEM_CLOCK, sleep, type Clock } from "../../util/clock.js";

/** Default longest wait between two attempts (`--api-retry-max`), also the summary line's period. */
export const DEFAULT_API_RETRY_MAX_MS = 30_000;
/** The first wait; each next one doubles, up to the cap. */
const FIRST_RETRY_MS = 200;

/** How an ApiRetry waits and reports. */
export interface ApiRetryOptions {
  /** Longest wait between two attempts, and the least time between two summary lines. */
  readonly maxMs?: number;
  readonly clock?: Clock;
  /** In [0, 1): spreads the replicas' attempts (default Math.random). */
  readonly random?: () => number;
  readonly log: { info(msg: string): void; warn(msg: string): void };
  /** Once aborted, the wait ends and until() rejects with the signal's reason (SIGTERM at start). */
  readonly signal?: AbortSignal;
}

/** Retries calls to an API server that may be away, logging one line per interval. */
export class ApiRetry {
  readonly #maxMs: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #o: ApiRetryOptions;

  constructor(options: ApiRetryOptions) {
    this.#o = options;
    this.#maxMs = Math.max(1, options.maxMs ?? DEFAULT_API_RETRY_MAX_MS);
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#random = options.random ?? Math.random;
  }

  /**
   * `attempt` until it resolves. `what` names the call in the lines ("API discovery"). An error
   * `fatal` says is the user's to fix (an unusable Secret), not the network's: it is thrown at once.
   */
  async until<T>(what: string, attempt: () => Promise<T>, fatal: (e: unknown) => boolean = () => false): Promise<T> {
    const { log, signal } = this.#o;
    const started = this.#clock.now();
    let reported = started;
    for (let n = 1; ; n++) {
      if (signal?.aborted === true) throw signal.reason;
      try {
        const value = await attempt();
        if (n > 1)
          log.info(
            `API server answered (${what}) after ${formatSpan(this.#clock.now() - started)}, ${String(n)} attempts`,
          );
        return value;
      } catch (e) {
        if (fatal(e)) throw e;
        const now = this.#clock.now();
        const error = e instanceof Error ? e.message : String(e);
        if (n === 1) {
          log.warn(
            `API server unreachable (${what}): ${error}; retrying with backoff up to every ${formatSpan(this.#maxMs)}, ` +
              `one summary line per ${formatSpan(this.#maxMs)}; not ready meanwhile`,
          );
        } else if (now - reported >= this.#maxMs) {
          reported = now;
          log.warn(
            `API server unreachable for ${formatSpan(now - started)}, ${String(n)} attempts (${what}), last error: ${error}`,
          );
        }
        const delay = backoffDelay(
          n,
          { initialMs: Math.min(FIRST_RETRY_MS, this.#maxMs), maxMs: this.#maxMs, factor: 2, jitter: 0.5 },
          this.#random,
        );
        await sleep(this.#clock, delay, signal);
      }
    }
  }
}

/** "250ms", "45s", "2m", "1m 30s", "1h 5m": a span as a person reads it in a log line. */
export function formatSpan(ms: number): string {
  if (ms < 1000) return `${String(Math.max(0, Math.round(ms)))}ms`;
  const total = Math.round(ms / 1000);
  const parts: [number, string][] = [
    [Math.floor(total / 3600), "h"],
    [Math.floor((total % 3600) / 60), "m"],
    [total % 60, "s"],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${String(n)}${unit}`)
    .join(" ");
}
