// Reading proto3 JSON without trusting its shape: a missing or mistyped field reads as undefined.

/** The value at `path` below `value`, or undefined. */
export function at(value: unknown, ...path: readonly string[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The array at `path`, or []. */
export function list(value: unknown, ...path: readonly string[]): unknown[] {
  const v = at(value, ...path);
  return Array.isArray(v) ? (v as unknown[]) : [];
}

/** The string at `path`, or undefined. */
export function text(value: unknown, ...path: readonly string[]): string | undefined {
  const v = at(value, ...path);
  return typeof v === "string" ? v : undefined;
}

/** The number at `path`, or undefined. */
export function num(value: unknown, ...path: readonly string[]): number | undefined {
  const v = at(value, ...path);
  return typeof v === "number" ? v : undefined;
}
