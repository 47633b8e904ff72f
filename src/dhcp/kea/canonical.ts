// Canonical JSON (object keys sorted at every depth) and its digest: two configs that mean the
// same thing to Kea compare equal however their keys were ordered.
import { createHash } from "node:crypto";

/** JSON text with object keys sorted recursively; arrays keep their order (it matters to Kea). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/** sha256 (hex) of the canonical JSON: the identity of a Kea configuration. */
export function configHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const src = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(src).sort()) out[key] = sortKeys(src[key]);
    return out;
  }
  return value;
}
