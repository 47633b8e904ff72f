// Defensive readers for resources in proto3 JSON form, which may be hand-built or decoded.

/** A JSON object, or undefined for anything else. */
export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** A JSON array's items; [] for anything else (proto3 JSON omits empty repeated fields). */
export function asArray(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? (v as unknown[]) : [];
}

/** A string field; undefined when absent or of another type. */
export function asString(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A numeric field (proto3 JSON may carry integers as strings); undefined otherwise. */
export function asNumber(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && /^-?[0-9]+$/.test(v)) return Number(v);
  return undefined;
}

/** Nested lookup: get(obj, "a", "b") is obj.a.b, or undefined along any missing step. */
export function get(v: unknown, ...keys: readonly string[]): unknown {
  let cur = v;
  for (const k of keys) {
    const rec = asRecord(cur);
    if (!rec || !Object.hasOwn(rec, k)) return undefined;
    cur = rec[k];
  }
  return cur;
}

/** Code-point order, independent of locale: the one order every rendered list uses. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts resources by their "name" (or another string key) without mutating the input. */
export function sortByKey<T extends object>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => compareText(key(a), key(b)));
}
