// Counts walks of large collections — iterating a Map, Set or HeldMap holding more than `minSize`
// entries — so a test can say a request costs what it changes, counting work rather than timing
// it. Spies on the prototypes; vi.restoreAllMocks() removes them.
import { vi } from "vitest";
import { HeldMap } from "../../src/xds/server/held-map.js";

export interface WalkCount {
  readonly walks: number;
}

type Method = (this: { size: number }, ...args: unknown[]) => unknown;
type Methods = Record<PropertyKey, Method>;

export function countWalks(minSize: number): WalkCount {
  const counted = { walks: 0 };
  for (const proto of [Map.prototype, Set.prototype, HeldMap.prototype] as unknown as Methods[]) {
    for (const key of [Symbol.iterator, "entries", "keys", "values", "forEach"] as const) {
      const original = proto[key];
      if (original === undefined) continue;
      vi.spyOn(proto, key).mockImplementation(function (this: { size: number }, ...args: unknown[]) {
        if (this.size > minSize) counted.walks += 1;
        return original.apply(this, args);
      });
    }
  }
  return counted;
}
