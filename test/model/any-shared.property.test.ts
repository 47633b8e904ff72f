// Whether two attachments of an Infra report one worker address (src/model/attachments.ts
// anyShared), counted by the difference from the Infra's previous call: on random sequences of
// calls, with lists kept, replaced, added and dropped, it answers what a count of the whole set does.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { InfraClusterAttachment } from "../../src/api/schema.js";
import { anyShared } from "../../src/model/attachments.js";
import { attachment } from "../support/fixtures.js";

const ATTACHMENTS: InfraClusterAttachment[] = ["a", "b", "c", "d"].map((n) => attachment(n));

/** Per attachment: undefined = not in the call, -1 = the list of the previous call, else a new list. */
const call = fc.array(fc.option(fc.oneof(fc.constant(-1), fc.nat(15)), { nil: undefined }), {
  minLength: ATTACHMENTS.length,
  maxLength: ATTACHMENTS.length,
});

/** A new list of distinct addresses from a seed: a few of 8, so lists often overlap. */
function listOf(seed: number): number[] {
  return [0, 1, 2, 3, 4, 5, 6, 7].filter((bit) => (seed >> (bit % 4)) & 1 && (bit < 4 || seed % 3 === 0));
}

function bruteForce(lists: ReadonlyMap<InfraClusterAttachment, readonly number[]>): boolean {
  const seen = new Set<number>();
  for (const addrs of lists.values())
    for (const addr of addrs)
      if (seen.has(addr)) return true;
      else seen.add(addr);
  return false;
}

describe("anyShared", () => {
  it("answers what a count of the whole set answers, after any sequence of calls on one Infra", () => {
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 12 }), (calls) => {
        const key = {};
        let previous = new Map<InfraClusterAttachment, readonly number[]>();
        for (const c of calls) {
          const lists = new Map<InfraClusterAttachment, readonly number[]>();
          c.forEach((v, i) => {
            const a = ATTACHMENTS[i];
            if (a === undefined || v === undefined) return;
            lists.set(a, v === -1 ? (previous.get(a) ?? []) : listOf(v));
          });
          expect(anyShared(key, lists)).toBe(bruteForce(lists));
          previous = lists;
        }
      }),
      { numRuns: 500 },
    );
  });

  it("two Infras are counted apart", () => {
    const [a, b] = [ATTACHMENTS[0], ATTACHMENTS[1]] as [InfraClusterAttachment, InfraClusterAttachment];
    const [one, two] = [{}, {}];
    expect(anyShared(one, new Map([[a, [1, 2]]]))).toBe(false);
    expect(anyShared(two, new Map([[b, [2, 3]]]))).toBe(false);
    expect(
      anyShared(
        one,
        new Map([
          [a, [1, 2]],
          [b, [2]],
        ]),
      ),
    ).toBe(true);
    expect(anyShared(two, new Map([[b, [2, 3]]]))).toBe(false);
  });
});
