// The server's time: the shared clock (src/util/clock.ts) plus what stream scheduling needs,
// injectable so tests drive stream ages and latencies deterministically.
import { SYSTEM_CLOCK, type Clock as BaseClock } from "../../util/clock.js";

/** Milliseconds clock and one-shot timers, a random source, and a deferral point. */
export interface Clock extends BaseClock {
  /** Uniform in [0, 1): jitter for stream maximum ages. */
  random(): number;
  /** Runs `fn` after the current I/O callbacks (batches requests and snapshot changes). */
  defer(fn: () => void): void;
}

/** Wall clock with unref'd timers (a pending stream-age timer never keeps the process alive). */
export const systemClock: Clock = {
  ...SYSTEM_CLOCK,
  random: () => Math.random(),
  defer: (fn) => {
    setImmediate(fn);
  },
};
