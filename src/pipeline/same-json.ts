// Whether two values would be written as the same JSON, without writing either: renderAll's
// test of whether a rebuilt Infra's part model changed (sameJson) and the reconciler's of whether
// an object already has its status (sameCanonicalJson, key order ignored). A big VLAN's proxy model
// holds every worker's backends; stringifying it on every change to compare costs CPU and garbage in
// proportion to the VLAN, where this walk allocates nothing and stops at the first difference. Pure.

/**
 * True only if JSON.stringify(a) === JSON.stringify(b) (tested against it): identical values,
 * or plain objects and arrays of the same shape — the same keys in the same order, properties
 * JSON leaves out (undefined) skipped — down to equal primitives. Anything else that is not the
 * same object (a Map, a Date, a class instance, a function) counts as different: unknown to
 * JSON equality, so the caller renders again rather than risk reusing a stale rendering.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return same(a, b, false);
}

/**
 * True only if the two write the same JSON once every object's keys are sorted (the operator's
 * `canonicalJson`, tested against it): as sameJson, with key order ignored. The reconciler's test of
 * whether an object already has the status it computed, once per object per pass — building both
 * texts was most of a pass's garbage.
 */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  return same(a, b, true);
}

function same(a: unknown, b: unknown, anyOrder: boolean): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return writesNull(a) && writesNull(b);
  if (Array.isArray(a))
    return Array.isArray(b) && sameArray(a as readonly unknown[], b as readonly unknown[], anyOrder);
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  return anyOrder ? sameMembers(a, b) : sameObject(a, b);
}

/** JSON writes null, NaN and ±Infinity all as null (and -0 as 0, which `===` already equates). */
function writesNull(v: unknown): boolean {
  return v === null || (typeof v === "number" && !Number.isFinite(v));
}

function sameArray(a: readonly unknown[], b: readonly unknown[], anyOrder: boolean): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) {
    const [x, y] = [a[i], b[i]];
    // An array writes undefined as null too.
    if (x !== y && !((x === undefined || writesNull(x)) && (y === undefined || writesNull(y))) && !same(x, y, anyOrder))
      return false;
  }
  return true;
}

function sameObject(a: object, b: object): boolean {
  const [ka, kb] = [Object.keys(a), Object.keys(b)];
  const [va, vb] = [a as Record<string, unknown>, b as Record<string, unknown>];
  let j = 0;
  for (const k of ka) {
    const x = va[k];
    if (x === undefined) continue;
    while (j < kb.length && vb[kb[j] as string] === undefined) j += 1;
    if (j >= kb.length || kb[j] !== k || !same(x, vb[k], false)) return false;
    j += 1;
  }
  while (j < kb.length && vb[kb[j] as string] === undefined) j += 1;
  return j === kb.length;
}

/** The same defined members, in any order. */
function sameMembers(a: object, b: object): boolean {
  const [va, vb] = [a as Record<string, unknown>, b as Record<string, unknown>];
  let defined = 0;
  for (const k in va) {
    if (!Object.hasOwn(va, k)) continue;
    const x = va[k];
    if (x === undefined) continue;
    defined += 1;
    if (!Object.hasOwn(vb, k) || !same(x, vb[k], true)) return false;
  }
  for (const k in vb) if (Object.hasOwn(vb, k) && vb[k] !== undefined) defined -= 1;
  return defined === 0;
}

/** An object literal (or a null-prototype record) without toJSON: JSON writes exactly its own enumerable keys. */
function isPlain(o: object): boolean {
  const proto = Object.getPrototypeOf(o) as unknown;
  return (proto === Object.prototype || proto === null) && !("toJSON" in o);
}
