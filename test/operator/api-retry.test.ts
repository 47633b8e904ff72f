// The operator's start-up against an API server that is away: attempts back off exponentially up to
// the cap, and the log gets one line at the first failure, then one summary per cap ("unreachable
// for 2m, 12 attempts, last error …") instead of a warning per attempt (issue 27, finding 3). Time is
// a ManualClock; jitter is pinned by the injected random.
import { describe, expect, it } from "vitest";
import { ApiRetry, formatSpan } from "../../src/operator/process/api-retry.js";
import { ManualClock } from "../support/manual-clock.js";

/** Lets the retry loop run up to its next timer. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function rig(maxMs: number, random = () => 0) {
  const clock = new ManualClock();
  const lines: { level: "info" | "warn"; msg: string }[] = [];
  const log = {
    info: (msg: string) => lines.push({ level: "info", msg }),
    warn: (msg: string) => lines.push({ level: "warn", msg }),
  };
  const attempts: number[] = [];
  let answerAt = Infinity;
  const attempt = () => {
    attempts.push(clock.now());
    return attempts.length >= answerAt
      ? Promise.resolve("answered")
      : Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6443"));
  };
  const controller = new AbortController();
  const retry = new ApiRetry({ maxMs, clock, random, log, signal: controller.signal });
  return {
    clock,
    lines,
    attempts,
    controller,
    answerOn: (n: number) => (answerAt = n),
    run: () => retry.until("API discovery", attempt),
    waits: () => attempts.slice(1).map((t, i) => t - (attempts[i] ?? 0)),
    retry,
  };
}

async function advance(clock: ManualClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    await settle();
  }
}

describe("ApiRetry", () => {
  it("waits twice as long after each failure, never more than the cap", async () => {
    const r = rig(1_000);
    r.answerOn(8);
    const done = r.run();
    await settle();
    await advance(r.clock, 10_000);
    await expect(done).resolves.toBe("answered");
    expect(r.waits()).toEqual([200, 400, 800, 1_000, 1_000, 1_000, 1_000]);
  });

  it("jitter only shortens a wait, by at most half", async () => {
    const r = rig(1_000, () => 0.999);
    r.answerOn(6);
    const done = r.run();
    await settle();
    await advance(r.clock, 10_000, 10);
    await done;
    for (const [i, wait] of r.waits().entries()) {
      const full = Math.min(1_000, 200 * 2 ** i);
      expect(wait).toBeGreaterThanOrEqual(full / 2);
      expect(wait).toBeLessThanOrEqual(full);
    }
  });

  it("logs the first failure, then one summary per cap, then that it answered", async () => {
    const r = rig(30_000);
    r.answerOn(12);
    const done = r.run();
    await settle();
    await advance(r.clock, 300_000, 1_000);
    await done;
    // Attempts at 0, 0.2, 0.6, 1.4, 3, 6.2, 12.6, 25.4 s, then every 30 s: 55.4, 85.4, 115.4, 145.4 (answered).
    expect(r.lines.map((l) => l.level)).toEqual(["warn", "warn", "warn", "warn", "info"]);
    expect(r.lines[0]?.msg).toBe(
      "API server unreachable (API discovery): connect ECONNREFUSED 127.0.0.1:6443; retrying with backoff up to " +
        "every 30s, one summary line per 30s; not ready meanwhile",
    );
    expect(r.lines.slice(1, -1).map((l) => l.msg)).toEqual([
      "API server unreachable for 55s, 9 attempts (API discovery), last error: connect ECONNREFUSED 127.0.0.1:6443",
      "API server unreachable for 1m 25s, 10 attempts (API discovery), last error: connect ECONNREFUSED 127.0.0.1:6443",
      "API server unreachable for 1m 55s, 11 attempts (API discovery), last error: connect ECONNREFUSED 127.0.0.1:6443",
    ]);
    expect(r.lines.at(-1)?.msg).toBe("API server answered (API discovery) after 2m 25s, 12 attempts");
  });

  it("an error the user must fix is thrown at once, not retried", async () => {
    const r = rig(1_000);
    const unusable = new Error("the CA Secret holds no tls.key");
    await expect(
      r.retry.until(
        "the CA Secret",
        () => Promise.reject(unusable),
        (e) => e === unusable,
      ),
    ).rejects.toBe(unusable);
    expect(r.lines).toEqual([]);
  });

  it("stops waiting when aborted (SIGTERM during start-up)", async () => {
    const r = rig(30_000);
    const done = r.run();
    await settle();
    r.controller.abort(new Error("stopping"));
    await expect(done).rejects.toThrow("stopping");
    expect(r.attempts).toHaveLength(1);
  });

  it.each([
    [250, "250ms"],
    [45_000, "45s"],
    [120_000, "2m"],
    [90_000, "1m 30s"],
    [3_900_000, "1h 5m"],
  ])("formatSpan(%d) = %s", (ms, text) => {
    expect(formatSpan(ms)).toBe(text);
  });
});
