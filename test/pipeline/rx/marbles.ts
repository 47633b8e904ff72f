// A TestScheduler whose assertions are vitest's.
import { TestScheduler } from "rxjs/testing";
import { expect } from "vitest";

export function marbles(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}
