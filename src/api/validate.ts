// Runtime validation and defaulting of our kinds against the one schema (schema.ts).
import { Value } from "@sinclair/typebox/value";
import type { TObject, TSchema } from "@sinclair/typebox";
import { KINDS, API_VERSION, PATTERN_MEANINGS, type KindDefinition, type Resource } from "./schema.js";

/** One schema violation, with the field path in Kubernetes' dotted form (spec.networkConfig.cidr). */
export interface FieldError {
  field: string;
  message: string;
}

/** Valid objects may still carry `unknown` fields: kept, ignored, and worth a warning (as kubectl's field validation gives). */
export type Decoded<T> = { ok: true; value: T; unknown: FieldError[] } | { ok: false; errors: FieldError[] };

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

function schemaErrors(schema: TObject, value: unknown, prefix: string): FieldError[] {
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

function describe(message: string, schema: unknown, value: unknown): string {
  const s = schema as { pattern?: string; anyOf?: { const?: unknown }[] };
  const given = value === undefined ? "" : `${JSON.stringify(value)}: `;
  if (s.anyOf?.every((m) => m.const !== undefined)) {
    return `${given}must be one of ${s.anyOf.map((m) => JSON.stringify(m.const)).join(", ")}`;
  }
  if (typeof s.pattern === "string" && message.startsWith("Expected string to match")) {
    return `${given}must be ${PATTERN_MEANINGS.get(s.pattern) ?? `a string matching ${s.pattern}`}`;
  }
  if (message === "Expected required property") return "required";
  return given + message.charAt(0).toLowerCase() + message.slice(1);
}

/**
 * Validates the spec of one of our kinds and applies the schema's defaults to a copy.
 * Unknown fields are kept (the API server prunes them; we must not fail on them).
 */
export function decodeResource<Spec>(raw: unknown, expectKind: string): Decoded<Resource<Spec, unknown>> {
  const def = kindDefinition(expectKind);
  if (def === undefined) return { ok: false, errors: [{ field: "kind", message: `unknown kind ${expectKind}` }] };
  if (typeof raw !== "object" || raw === null) return { ok: false, errors: [{ field: "", message: "not an object" }] };
  const r = raw as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (r["apiVersion"] !== API_VERSION) errors.push({ field: "apiVersion", message: `must be ${API_VERSION}` });
  const meta = r["metadata"] as Record<string, unknown> | undefined;
  if (typeof meta?.["name"] !== "string" || meta["name"] === "") errors.push({ field: "metadata.name", message: "required" });
  const spec = structuredClone(r["spec"] ?? {});
  Value.Default(def.spec, spec);
  errors.push(...schemaErrors(def.spec, spec, "/spec"));
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: { ...(structuredClone(r) as unknown as Resource<Spec, unknown>), spec: spec as Spec },
    unknown: unknownFields(def.spec, spec, "spec"),
  };
}

/** Fields the schema does not declare (a typo or a mis-indented line), with their paths. */
export function unknownFields(schema: TSchema, value: unknown, path: string): FieldError[] {
  const s = schema as { type?: string; properties?: Record<string, TSchema>; items?: TSchema; additionalProperties?: unknown };
  if (Array.isArray(value) && s.items !== undefined) {
    const items = s.items;
    return value.flatMap((v, i) => unknownFields(items, v, `${path}[${String(i)}]`));
  }
  if (value === null || typeof value !== "object" || s.properties === undefined) return [];
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(value)) {
    const sub = s.properties[k];
    if (sub === undefined) out.push({ field: `${path}.${k}`, message: "unknown field, ignored" });
    else out.push(...unknownFields(sub, v, `${path}.${k}`));
  }
  return out;
}
