// sameJson is renderAll's test of whether a rebuilt Infra's part model changed: it must never say
// "same" where JSON.stringify writes different text (a stale rendering would be served), and it
// should say "same" for JSON-equal data it walks, so an unchanged part keeps its rendering.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/operator/desired/objects.js";
import { sameCanonicalJson, sameJson } from "../../src/pipeline/same-json.js";

/** JSON-like data with what JSON treats specially: undefined properties, null, non-finite numbers. */
const value = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(undefined, null, true, false, 0, -0, 1, NaN, Infinity, "", "a", "b"),
    fc.integer({ min: -3, max: 3 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom("a", "b", "c", "d"), tie("value"), { maxKeys: 4 }),
  ),
})).value;

/** A copy made of new objects: what a rebuild of an unchanged model gives. */
const copy = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(copy)
    : typeof v === "object" && v !== null
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]))
      : v;

/** One edit somewhere inside: a value replaced (by undefined: a key dropped), a key added, an item appended. */
const edited = (v: unknown, path: readonly number[], leaf: unknown): unknown => {
  const [step, ...rest] = path;
  if (Array.isArray(v)) {
    const items = v as readonly unknown[];
    if (items.length === 0 || step === undefined) return [...items, leaf];
    const i = step % items.length;
    return items.map((x, j) => (j === i ? edited(x, rest, leaf) : x));
  }
  if (typeof v === "object" && v !== null) {
    const keys = Object.keys(v);
    if (keys.length === 0 || step === undefined) return { ...v, e: leaf };
    const k = keys[step % keys.length] as string;
    return { ...v, [k]: edited((v as Record<string, unknown>)[k], rest, leaf) };
  }
  return leaf;
};

describe("sameJson", () => {
  it("is true only where JSON.stringify writes the same text, on random data and random edits", () => {
    fc.assert(
      fc.property(value, fc.array(fc.nat(7), { maxLength: 5 }), value, (v, path, leaf) => {
        const w = edited(v, path, leaf);
        const same = JSON.stringify(v) === JSON.stringify(w);
        // Never "same" for different text; for plain data that differs it must find the difference.
        expect(sameJson(v, w)).toBe(same);
        expect(sameJson(w, v)).toBe(same);
      }),
      { numRuns: 2000 },
    );
  });

  it("a copy made of new objects is the same (a rebuilt, unchanged model keeps its rendering)", () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(sameJson(v, copy(v))).toBe(true);
      }),
    );
  });

  it("keys in another order are different: a renderer may write them in that order", () => {
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson({ a: 1, b: 2 }, { a: 1, b: 2 })).toBe(true);
  });

  it("undefined properties are left out as JSON leaves them out; in arrays they are null", () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ x: undefined, a: 1 }, { a: 1, y: undefined })).toBe(true);
    expect(sameJson({ a: undefined }, { a: null })).toBe(false);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson([1, 2], [1, 2, undefined])).toBe(false);
  });

  it("what JSON equality does not know is different unless it is the same object", () => {
    // JSON.stringify writes every Map as {}: these would compare equal as text, wrongly.
    const m = new Map([["k", 1]]);
    expect(sameJson(m, new Map([["k", 2]]))).toBe(false);
    expect(sameJson(m, m)).toBe(true);
    expect(sameJson({ m }, { m })).toBe(true);
    expect(sameJson(new Date(0), new Date(0))).toBe(false);
    expect(sameJson({ toJSON: () => 1 }, { toJSON: () => 1 })).toBe(false);
    class Box {
      constructor(readonly v: number) {}
    }
    expect(sameJson(new Box(1), new Box(1))).toBe(false);
    expect(sameJson({}, [])).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson(Object.create(null) as object, {})).toBe(true);
  });

  it("numbers as JSON writes them: non-finite ones are all null, -0 is 0, strings are not numbers", () => {
    expect(sameJson(NaN, Infinity)).toBe(true);
    expect(sameJson(-0, 0)).toBe(true);
    expect(sameJson(1, "1")).toBe(false);
    expect(sameJson(NaN, null)).toBe(true);
    expect(sameJson(null, undefined)).toBe(false);
  });
});

/** The same data with every object's keys in a random order (another writer's order). */
const shuffled = (v: unknown, seed: number): unknown => {
  if (Array.isArray(v)) return v.map((x, i) => shuffled(x, seed + i));
  if (typeof v !== "object" || v === null) return v;
  const entries = Object.entries(v).map(([k, x], i) => [k, shuffled(x, seed * 31 + i)] as const);
  const order = entries.map((e, i) => ({ e, rank: (seed * 7919 + i * 104729) % 97 })).sort((p, q) => p.rank - q.rank);
  return Object.fromEntries(order.map(({ e }) => e));
};

// The reconciler's "already has this status" test: it must agree with comparing canonicalJson texts
// (a wrong "same" leaves a stale status unwritten, a wrong "different" writes every pass).
describe("sameCanonicalJson", () => {
  it("is true exactly where canonicalJson writes the same text, on random data, edits and key orders", () => {
    fc.assert(
      fc.property(value, fc.array(fc.nat(7), { maxLength: 5 }), value, fc.nat(), (v, path, leaf, seed) => {
        const w = shuffled(edited(v, path, leaf), seed);
        const same = canonicalJson(v) === canonicalJson(w);
        expect(sameCanonicalJson(v, w)).toBe(same);
        expect(sameCanonicalJson(w, v)).toBe(same);
      }),
      { numRuns: 2000 },
    );
  });

  it("keys in another order are the same; a member more or less is not", () => {
    expect(sameCanonicalJson({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toBe(true);
    expect(sameCanonicalJson({ a: 1, b: undefined }, { b: undefined, a: 1, c: undefined })).toBe(true);
    expect(sameCanonicalJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameCanonicalJson({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameCanonicalJson({ a: null }, {})).toBe(false);
    expect(sameCanonicalJson([{ a: 1 }, { b: 2 }], [{ b: 2 }, { a: 1 }])).toBe(false);
  });

  it("an inherited member is not a member", () => {
    const base = { a: 1 };
    expect(sameCanonicalJson(Object.assign(Object.create(null) as object, { a: 1 }), base)).toBe(true);
    expect(sameCanonicalJson({ constructor: 1 }, {})).toBe(false);
    expect(sameCanonicalJson({}, { constructor: 1 })).toBe(false);
  });
});
