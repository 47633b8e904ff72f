// Time and randomness the server depends on, injectable so tests can drive stream ages and
// latencies deterministically.

/** Milliseconds clock, one-shot timers and a random source. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Uniform in [0, 1): jitter for stream maximum ages. */
  random(): number;
  /** Runs `fn` after the current I/O callbacks (batches requests and snapshot changes). */
  defer(fn: () => void): void;
}

/** Wall clock with unref'd timers (a pending stream-age timer never keeps the process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => { clearTimeout(handle as NodeJS.Timeout); },
  random: () => Math.random(),
  defer: (fn) => { setImmediate(fn); },
};
