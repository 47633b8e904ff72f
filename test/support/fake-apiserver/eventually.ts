// Polling helper for asynchronous effects (informer callbacks, reconciles): no wall-clock assertions.
import { setTimeout as sleep } from "node:timers/promises";

/** Re-runs `check` until it stops throwing or returns true; rethrows the last failure after `timeoutMs`. */
export async function eventually(check: () => unknown, timeoutMs = 10_000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await check();
      if (r !== false) return;
      if (Date.now() > deadline) throw new Error("condition still false");
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await sleep(intervalMs);
  }
}
