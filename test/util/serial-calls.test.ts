import { describe, expect, it } from "vitest";
import { SerialCalls } from "../../src/util/serial-calls.js";

describe("SerialCalls", () => {
  it("starts each call after the previous one settled, a rejected one included, in the order made", async () => {
    const calls = new SerialCalls();
    const log: string[] = [];
    let release: () => void = () => undefined;
    const first = calls.run(
      () =>
        new Promise<string>((resolve) => {
          log.push("first started");
          release = () => {
            log.push("first done");
            resolve("one");
          };
        }),
    );
    const failing = calls.run(() => {
      log.push("second started");
      return Promise.reject(new Error("refused"));
    });
    const third = calls.run(() => {
      log.push("third started");
      return Promise.resolve(3);
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(["first started"]);
    release();
    expect(await first).toBe("one");
    await expect(failing).rejects.toThrow("refused");
    expect(await third).toBe(3);
    expect(log).toEqual(["first started", "first done", "second started", "third started"]);
  });

  it("a call that throws before returning a promise rejects its own result only, and nothing else", async () => {
    const calls = new SerialCalls();
    const thrown = calls.run((): Promise<number> => {
      throw new Error("at once");
    });
    await expect(thrown).rejects.toThrow("at once");
    // The chain itself holds no rejection: nothing unhandled once the event loop turns.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await calls.run(() => Promise.resolve("next"))).toBe("next");
  });
});
