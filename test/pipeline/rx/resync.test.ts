// resync: each value goes through at once and again every period while no newer one came.
import { describe, it } from "vitest";
import { resync } from "../../../src/pipeline/resync.js";
import { marbles } from "./marbles.js";

describe("resync", () => {
  it("re-emits the latest value every period of quiet; a new value restarts the period", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      const inputs = hot("a-------b--");
      expectObservable(inputs.pipe(resync(3, scheduler)), "^ 16ms !").toBe("a--a--a-b--b--b--");
    });
  });

  it("a period of 0 disables it", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      expectObservable(hot("a---b").pipe(resync(0, scheduler)), "^ 9ms !").toBe("a---b");
    });
  });
});
