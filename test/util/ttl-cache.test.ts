// TtlCache: an entry lives ttlMs after it was set, the map never holds more than max entries, and
// what is read stays while what is not read goes first.
import { describe, expect, it } from "vitest";
import { TtlCache } from "../../src/util/ttl-cache.js";
import { ManualClock } from "../support/manual-clock.js";

describe("TtlCache", () => {
  it("forgets an entry ttlMs after it was set, reading it does not extend it", () => {
    const clock = new ManualClock();
    const cache = new TtlCache<string, number>(10, 1_000, () => clock.now());
    cache.set("a", 1);
    clock.advance(999);
    expect(cache.get("a")).toBe(1);
    clock.advance(1);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.set("a", 2);
    expect(cache.get("a")).toBe(2);
  });

  it("holds at most max entries, forgetting the least recently used first", () => {
    const clock = new ManualClock();
    const cache = new TtlCache<string, number>(3, 1_000, () => clock.now());
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect(cache.get("a")).toBe(1); // now b is the least recently used
    cache.set("d", 4);
    expect(cache.size).toBe(3);
    expect([cache.get("a"), cache.get("b"), cache.get("c"), cache.get("d")]).toEqual([1, undefined, 3, 4]);
  });

  it("a flood of new keys stays bounded", () => {
    const clock = new ManualClock();
    const cache = new TtlCache<number, number>(1_000, 10_000, () => clock.now());
    for (let i = 0; i < 50_000; i++) cache.set(i, i);
    expect(cache.size).toBe(1_000);
    expect(cache.get(49_999)).toBe(49_999);
    expect(cache.get(0)).toBeUndefined();
  });
});
