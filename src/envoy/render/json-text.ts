// JSON text of rendered resources, as JSON.stringify(value, null, 2) writes it, with the text of
// each resource and filter chain kept per object: a big VLAN's envoy.json (thousands of chains)
// is written on every change, and all but a chain or two are the same objects as before
// (rendered resources are immutable). Pure.

/** The same text as JSON.stringify(value, null, 2) for JSON data (objects, arrays, strings, numbers, booleans, null). */
export function prettyJson(value: unknown): string {
  return write(value, "", 0) ?? "undefined";
}

/** Objects are kept down to this depth: resources (2) and their chains (4), not every CIDR range below. */
const KEPT_DEPTH = 4;

/** Text per object and the indentation it was written at. */
const texts = new WeakMap<object, { readonly indent: string; readonly text: string }>();

/** The value's text at `indent`; undefined where JSON.stringify leaves a property out. */
function write(value: unknown, indent: string, depth: number): string | undefined {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (depth > KEPT_DEPTH) return JSON.stringify(value, null, 2).replaceAll("\n", `\n${indent}`);
  const kept = texts.get(value);
  if (kept?.indent === indent) return kept.text;
  const inner = `${indent}  `;
  let text: string;
  if (Array.isArray(value)) {
    const items = (value as unknown[]).map((v) => write(v, inner, depth + 1) ?? "null");
    text = items.length === 0 ? "[]" : `[\n${inner}${joined(items, `,\n${inner}`)}\n${indent}]`;
  } else if (typeof (value as { toJSON?: unknown }).toJSON === "function") {
    text = JSON.stringify(value, null, 2).replaceAll("\n", `\n${indent}`);
  } else {
    const fields: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      const t = write(v, inner, depth + 1);
      if (t !== undefined) fields.push(`${JSON.stringify(k)}: ${t}`);
    }
    text = fields.length === 0 ? "{}" : `{\n${inner}${joined(fields, `,\n${inner}`)}\n${indent}}`;
  }
  texts.set(value, { indent, text });
  return text;
}

/**
 * items.join(separator) by concatenation: V8 keeps a concatenation as a rope of its parts (no
 * copy), where join copies every kept chain's text into each enclosing object's text again (a
 * listener, its array, the file: four copies of the whole file per change). The file is flattened once,
 * when it is written.
 */
function joined(items: readonly string[], separator: string): string {
  let out = items[0] ?? "";
  for (let i = 1; i < items.length; i += 1) out = out + separator + (items[i] ?? "");
  return out;
}
