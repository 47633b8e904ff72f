// A ChunkedList (src/util/chunked-list.ts) is a list: `toEqual` compares it with an array or with
// another ChunkedList by its elements in order, however either is split into chunks.
import { expect } from "vitest";
import { ChunkedList } from "../../src/util/chunked-list.js";

expect.addEqualityTesters([
  function sameElements(a: unknown, b: unknown, testers) {
    const list = (x: unknown): unknown[] | undefined =>
      x instanceof ChunkedList ? [...(x as ChunkedList<unknown>)] : Array.isArray(x) ? x : undefined;
    if (!(a instanceof ChunkedList) && !(b instanceof ChunkedList)) return undefined;
    const [x, y] = [list(a), list(b)];
    return x !== undefined && y !== undefined && this.equals(x, y, testers);
  },
]);
