// Runtime validation and defaulting of our kinds against the one schema (schema.ts).
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import {
  KINDS,
  GROUP,
  API_VERSION,
  NAMESPACE_SCHEMA,
  WHY,
  PATTERN_MEANINGS,
  type KindDefinition,
  type Resource,
} from "./schema.js";

/** One schema violation, with the field path in Kubernetes' dotted form (spec.networkConfig.cidr). */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * Objects may carry `unknown` fields: kept, ignored, and worth a warning (as kubectl's field
 * validation gives). An invalid object reports them too, so a typo and the "required" it causes
 * are seen in one pass.
 */
export type Decoded<T> =
  { ok: true; value: T; unknown: FieldError[] } | { ok: false; errors: FieldError[]; unknown: FieldError[] };

/** Top-level fields of a Kubernetes object; anything else there is a typo or a mis-indented block. */
const TOP_LEVEL_FIELDS = ["apiVersion", "kind", "metadata", "spec", "status"] as const;

export function kindDefinition(kind: string): KindDefinition | undefined {
  return KINDS.find((k) => k.kind === kind);
}

/** "/spec/networkConfig/dnsServers/0" → "spec.networkConfig.dnsServers[0]". */
export function jsonPointerToField(pointer: string): string {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^[0-9]+$/.test(part) ? `[${part}]` : out === "" ? part : `.${part}`;
  }
  return out;
}

/** A value's errors against a part of the schema, with fields under `field` (a dotted path). */
export function fieldErrors(schema: TSchema, value: unknown, field: string): FieldError[] {
  return schemaErrors(schema, value, `/${field.replaceAll(".", "/")}`);
}

function schemaErrors(schema: TSchema, value: unknown, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of Value.Errors(schema, value)) {
    const field = jsonPointerToField(`${prefix}${e.path}`);
    // TypeBox reports a union failure once per member; one message per field is enough.
    if (seen.has(field)) continue;
    seen.add(field);
    errors.push({ field, message: describe(e.message, e.schema, e.value) });
  }
  return errors;
}

/** A given value longer than this is shown by its start and length: a 300-character name is not read. */
const SHOWN_LENGTH = 64;

function describe(message: string, schema: unknown, value: unknown): string {
  const s = schema as { pattern?: string; anyOf?: { const?: unknown }[] };
  const given =
    value === undefined
      ? ""
      : typeof value === "string" && value.length > SHOWN_LENGTH
        ? `${JSON.stringify(value.slice(0, SHOWN_LENGTH))}… (${String(value.length)} characters): `
        : `${JSON.stringify(value)}: `;
  if (s.anyOf?.every((m) => m.const !== undefined)) {
    return `${given}must be one of ${s.anyOf.map((m) => JSON.stringify(m.const)).join(", ")}`;
  }
  if (typeof s.pattern === "string" && message.startsWith("Expected string to match")) {
    return `${given}must be ${PATTERN_MEANINGS.get(s.pattern) ?? `a string matching ${s.pattern}`}`;
  }
  const max = (schema as { maxLength?: number })["maxLength"];
  if (max !== undefined && message.startsWith("Expected string length less or equal to")) {
    const why = (schema as { [WHY]?: string })[WHY];
    return `${given}must be at most ${String(max)} characters${why === undefined ? "" : `: ${why}`}`;
  }
  if (message === "Expected required property") return "required";
  return given + message.charAt(0).toLowerCase() + message.slice(1);
}

/**
 * metadata.name as the API server checks it for the kind (and, for an Infra, short enough for every
 * name derived from it), and a given namespace as a Namespace's name. The model checks objects
 * with it again: one may come from an API server whose CRD predates the rule.
 */
export function metadataErrors(def: KindDefinition, metadata: unknown): FieldError[] {
  const meta = (typeof metadata === "object" && metadata !== null ? metadata : {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (typeof meta["name"] !== "string" || meta["name"] === "")
    errors.push({ field: "metadata.name", message: "required" });
  else errors.push(...schemaErrors(def.name, meta["name"], "/metadata/name"));
  // Manifests may leave the namespace out (the loader fills it in); a given one is a Namespace's name.
  if (meta["namespace"] !== undefined && meta["namespace"] !== "")
    errors.push(...schemaErrors(NAMESPACE_SCHEMA, meta["namespace"], "/metadata/namespace"));
  return errors;
}

/**
 * Validates the spec of one of our kinds and applies the schema's defaults to a copy.
 * Unknown fields are kept (the API server prunes them; we must not fail on them).
 */
export function decodeResource<Spec>(raw: unknown, expectKind: string): Decoded<Resource<Spec, unknown>> {
  const def = kindDefinition(expectKind);
  if (def === undefined)
    return { ok: false, errors: [{ field: "kind", message: `unknown kind ${expectKind}` }], unknown: [] };
  if (typeof raw !== "object" || raw === null)
    return { ok: false, errors: [{ field: "", message: "not an object" }], unknown: [] };
  const r = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (r["apiVersion"] !== API_VERSION) errors.push({ field: "apiVersion", message: `must be ${API_VERSION}` });
  errors.push(...metadataErrors(def, r["metadata"]));
  const spec = structuredClone(r["spec"] ?? {});
  Value.Default(def.spec, spec);
  errors.push(...schemaErrors(def.spec, spec, "/spec"));
  const unknown = [
    ...Object.keys(r)
      .filter((k) => !(TOP_LEVEL_FIELDS as readonly string[]).includes(k))
      .map((k) => ({ field: k, message: unknownFieldMessage(k, TOP_LEVEL_FIELDS) })),
    ...unknownFields(def.spec, spec, "spec"),
  ];
  if (errors.length > 0) return { ok: false, errors, unknown };
  return {
    ok: true,
    value: { ...(structuredClone(r) as unknown as Resource<Spec, unknown>), spec: spec as Spec },
    unknown,
  };
}

/** "unknown field — did you mean gateway?" when a declared sibling is a likely intended name. */
export function unknownFieldMessage(name: string, known: readonly string[]): string {
  const guess = nearestName(name, known);
  return guess === undefined ? "unknown field, ignored" : `unknown field — did you mean ${guess}?`;
}

/**
 * Why an object of our group with a kind we do not define is refused, with the kind it probably
 * meant: "Infar is no kind of hostedcluster.densityops.com — did you mean Infra?".
 */
export function unknownKindMessage(kind: string): string {
  const kinds = KINDS.map((k) => k.kind);
  const guess = nearestName(kind, kinds);
  return (
    `${kind} is no kind of ${GROUP}` +
    (guess === undefined ? ` (its kinds: ${kinds.join(", ")})` : ` — did you mean ${guess}?`)
  );
}

/** The known name closest to `name` by edit distance, if close enough to be a typo (≤ a third of its length, at least 1). */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d <= limit && (best === undefined || d < best.distance)) best = { name: k, distance: d };
  }
  return best?.name;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions cost 1. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  const at = (i: number, j: number): number => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = d;
    }
  }
  return at(a.length, b.length);
}

/** Fields the schema does not declare (a typo or a mis-indented line), with their paths. */
export function unknownFields(schema: TSchema, value: unknown, path: string): FieldError[] {
  const s = schema as {
    type?: string;
    properties?: Record<string, TSchema>;
    items?: TSchema;
    additionalProperties?: unknown;
  };
  if (Array.isArray(value) && s.items !== undefined) {
    const items = s.items;
    return value.flatMap((v, i) => unknownFields(items, v, `${path}[${String(i)}]`));
  }
  if (value === null || typeof value !== "object" || s.properties === undefined) return [];
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(value)) {
    const sub = s.properties[k];
    if (sub === undefined)
      out.push({ field: `${path}.${k}`, message: unknownFieldMessage(k, Object.keys(s.properties)) });
    else out.push(...unknownFields(sub, v, `${path}.${k}`));
  }
  return out;
}
