// Retry pacing while Kea's control socket is missing: exponential growth with jitter so that many
// agents restarted together do not knock in lockstep. Timers and randomness are injected, so a
// test drives time itself.

/** The timer functions the applier uses; defaults are the global ones. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's real timers. */
export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** Exponential backoff: initialMs · factor^(attempt−1), capped at maxMs, then shortened by up to `jitter` of itself. */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly factor?: number;
  /** Fraction in [0, 1] of the delay that is randomized; 0 = deterministic. */
  readonly jitter?: number;
}

/** Default pacing: Kea's socket appears ~30 ms after start, so begin fast; never wait over 5 s. */
export const DEFAULT_BACKOFF: Required<BackoffOptions> = { initialMs: 50, maxMs: 5_000, factor: 2, jitter: 0.5 };

/** Delay before retry number `attempt` (1-based); `random` returns a number in [0, 1). */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const o = { ...DEFAULT_BACKOFF, ...options };
  const exp = Math.min(o.maxMs, o.initialMs * o.factor ** Math.max(0, attempt - 1));
  const jitter = Math.min(1, Math.max(0, o.jitter));
  return Math.round(exp * (1 - jitter * random()));
}
