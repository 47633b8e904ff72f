// Time as the watchers, the operator and the xDS server see it: injectable, so tests drive leases,
// backoff, watchdogs and stream ages without sleeping.

/** Opaque timer handle of a Clock. */
export type TimerHandle = object;

/** Wall-clock milliseconds and one-shot timers. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock; timers never keep the process alive on their own. */
export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const t = setTimeout(callback, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** Resolves after `ms` on `clock`, or at once when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    const done = (): void => {
      clock.clearTimeout(handle);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const handle = clock.setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** RFC 3339 seconds precision, as metav1.Time serializes ("2024-01-02T03:04:05Z"). */
export function metaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** RFC 3339 with microseconds, as metav1.MicroTime serializes (Lease renewTime). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}
