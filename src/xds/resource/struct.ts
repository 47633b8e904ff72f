// JSON ↔ google.protobuf.Struct, the one codec for every representation oooi builds: protobufjs
// objects of a loaded Value type (Envoy's typed configs, KeaConfig) and proto-loader objects (the
// debug service). They differ only in what Value's fields are called — protobufjs's bundled
// struct.proto spells them in camelCase whatever keepCase says — so the names are a parameter.
import type protobuf from "protobufjs";

/** Every key a representation writes each google.protobuf.Value field under (read: the first present). */
export interface ValueKeys {
  readonly null: readonly string[];
  readonly number: readonly string[];
  readonly string: readonly string[];
  readonly bool: readonly string[];
  readonly struct: readonly string[];
  readonly list: readonly string[];
}

/** Keys for proto-loader objects: both spellings (fromObject ignores the one it does not know). */
export const LOADER_VALUE_KEYS: ValueKeys = {
  null: ["null_value", "nullValue"],
  number: ["number_value", "numberValue"],
  string: ["string_value", "stringValue"],
  bool: ["bool_value", "boolValue"],
  struct: ["struct_value", "structValue"],
  list: ["list_value", "listValue"],
};

/** The keys of a loaded google.protobuf.Value type, looked up by field number (struct.proto). */
export function valueKeysOf(value: protobuf.Type): ValueKeys {
  const byId = (id: number): readonly string[] => {
    const field = value.fieldsById[id];
    if (!field) throw new Error(`google.protobuf.Value has no field ${String(id)}`);
    return [field.name];
  };
  return { null: byId(1), number: byId(2), string: byId(3), bool: byId(4), struct: byId(5), list: byId(6) };
}

/** A google.protobuf.Struct as an object of either representation. */
export interface StructObject {
  fields: Record<string, unknown>;
}

/** A Struct object from a JSON object; throws `<at>: …` on what a Struct cannot hold. */
export function structFromJson(json: unknown, at: string, keys: ValueKeys): StructObject {
  if (!isRecord(json)) throw new Error(`${at}: expected an object for google.protobuf.Struct`);
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) {
    // JSON.stringify drops undefined members; so does the Struct.
    if (v !== undefined) fields[k] = valueFromJson(v, `${at}.${k}`, keys);
  }
  return { fields };
}

/** A Value object from any JSON value. */
export function valueFromJson(json: unknown, at: string, keys: ValueKeys): Record<string, unknown> {
  if (json === null || json === undefined) return under(keys.null, "NULL_VALUE");
  if (typeof json === "number") {
    if (!Number.isFinite(json)) throw new Error(`${at}: ${String(json)} has no JSON form`);
    return under(keys.number, json);
  }
  if (typeof json === "string") return under(keys.string, json);
  if (typeof json === "boolean") return under(keys.bool, json);
  if (typeof json === "bigint") return under(keys.string, json.toString());
  if (Array.isArray(json)) return under(keys.list, listFromJson(json, at, keys));
  if (isRecord(json)) return under(keys.struct, structFromJson(json, at, keys));
  throw new Error(`${at}: a ${typeof json} has no JSON form`);
}

/** A ListValue object from a JSON array. */
export function listFromJson(json: unknown, at: string, keys: ValueKeys): { values: Record<string, unknown>[] } {
  if (!Array.isArray(json)) throw new Error(`${at}: expected an array for google.protobuf.ListValue`);
  return { values: json.map((v: unknown, i) => valueFromJson(v, `${at}[${String(i)}]`, keys)) };
}

/** A Struct object (decoded) → its JSON object; what is not a Struct reads as {}. */
export function jsonFromStruct(object: unknown, keys: ValueKeys): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = isRecord(object) ? object["fields"] : undefined;
  if (isRecord(fields)) for (const [k, v] of Object.entries(fields)) out[k] = jsonFromValue(v, keys);
  return out;
}

/** A Value object (decoded) → its JSON value; an unset Value reads as null. */
export function jsonFromValue(object: unknown, keys: ValueKeys): unknown {
  if (!isRecord(object)) return null;
  const struct = read(object, keys.struct);
  if (struct !== undefined) return jsonFromStruct(struct, keys);
  const list = read(object, keys.list);
  if (list !== undefined) return jsonFromList(list, keys);
  for (const kind of [keys.number, keys.string, keys.bool]) {
    const v = read(object, kind);
    if (v !== undefined) return v;
  }
  return null;
}

/** A ListValue object (decoded) → its JSON array. */
export function jsonFromList(object: unknown, keys: ValueKeys): unknown[] {
  const values = isRecord(object) ? object["values"] : undefined;
  return Array.isArray(values) ? values.map((v: unknown) => jsonFromValue(v, keys)) : [];
}

function under(names: readonly string[], value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = value;
  return out;
}

function read(object: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) {
    const v = object[name];
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}
