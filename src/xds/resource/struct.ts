// JSON ↔ google.protobuf.Struct as proto-loader objects. protobufjs's bundled struct.proto spells
// Value's fields in camelCase whatever keepCase says (see src/xds/resource/protos.ts), so values are written
// under both spellings (fromObject ignores the unknown one) and read from either.

/** A google.protobuf.Struct as a proto-loader object. */
export interface StructObject {
  fields: Record<string, ValueObject>;
}

/** A google.protobuf.Value as a proto-loader object. */
export type ValueObject = Record<string, unknown>;

/** Proto3 JSON object → Struct. */
export function toStruct(json: object): StructObject {
  const fields: Record<string, ValueObject> = {};
  for (const [k, v] of Object.entries(json)) fields[k] = toValue(v);
  return { fields };
}

function both(snake: string, camel: string, value: unknown): ValueObject {
  return { [snake]: value, [camel]: value };
}

function toValue(v: unknown): ValueObject {
  if (v === null || v === undefined) return both("null_value", "nullValue", "NULL_VALUE");
  if (typeof v === "number") return both("number_value", "numberValue", v);
  if (typeof v === "string") return both("string_value", "stringValue", v);
  if (typeof v === "boolean") return both("bool_value", "boolValue", v);
  if (typeof v === "bigint") return both("string_value", "stringValue", v.toString());
  if (Array.isArray(v)) return both("list_value", "listValue", { values: v.map(toValue) });
  if (typeof v === "object") return both("struct_value", "structValue", toStruct(v));
  return both("null_value", "nullValue", "NULL_VALUE");
}

/** Struct (as decoded by proto-loader) → JSON object. */
export function fromStruct(struct: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = isRecord(struct) ? struct["fields"] : undefined;
  if (isRecord(fields)) for (const [k, v] of Object.entries(fields)) out[k] = fromValue(v);
  return out;
}

function pick(v: Record<string, unknown>, snake: string, camel: string): unknown {
  return v[snake] ?? v[camel];
}

function fromValue(v: unknown): unknown {
  if (!isRecord(v)) return null;
  const struct = pick(v, "struct_value", "structValue");
  if (struct !== undefined && struct !== null) return fromStruct(struct);
  const list = pick(v, "list_value", "listValue");
  if (isRecord(list)) {
    const values = list["values"];
    return Array.isArray(values) ? values.map(fromValue) : [];
  }
  for (const [snake, camel] of [
    ["number_value", "numberValue"],
    ["string_value", "stringValue"],
    ["bool_value", "boolValue"],
  ] as const) {
    const x = pick(v, snake, camel);
    if (x !== undefined && x !== null) return x;
  }
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
