// minInterval: the first pass at once, then at most one per interval; the last value of a burst
// always goes out, at the interval's end.
import { describe, it } from "vitest";
import { minInterval } from "../../../src/pipeline/min-interval.js";
import { marbles } from "./marbles.js";

describe("minInterval", () => {
  it("after a quiet spell a value goes out at once; a burst inside the interval makes one more at its end, the latest", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      const inputs = hot("a-bc------d---------e");
      expectObservable(inputs.pipe(minInterval(5, scheduler))).toBe("a----c----d---------e");
    });
  });

  it("the value at the interval's end starts the next interval", () => {
    const scheduler = marbles();
    scheduler.run(({ hot, expectObservable }) => {
      const inputs = hot("ab--c---d");
      expectObservable(inputs.pipe(minInterval(5, scheduler))).toBe("a----c----d");
    });
  });
});
