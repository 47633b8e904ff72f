// oooi.dhcp.v1.KeaConfig: our own xDS resource type, a DHCPServer's whole kea-dhcp4 configuration
// carried as a google.protobuf.Struct. The schema is read from proto/ at runtime (the same path
// from src/xds under vitest and from dist/xds after the build); JSON ↔ Struct is converted here
// because protobufjs has no proto3 JSON mapping for Struct.
import { oooiProtoDir } from "../util/proto-dir.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";

import type { ResourceTypeSpec } from "../xds/resource/specs.js";
import { type ResourceInput } from "../xds/resource/specs.js";

/** Type URL of the KeaConfig resource on ADS. */
export const KEA_CONFIG_TYPE_URL = "type.googleapis.com/oooi.dhcp.v1.KeaConfig";

/** A KeaConfig in proto3 JSON: the resource name and the value of kea-dhcp4's top-level "Dhcp4". */
export interface KeaConfigJson {
  /** "<namespace>/<DHCPServer name>": also the ADS resource name and the agent's node group. */
  readonly name: string;
  readonly dhcp4: Readonly<Record<string, unknown>>;
}

const PROTO_FILE = "oooi/dhcp/v1/kea_config.proto";

let cached: { config: protobuf.Type; valueFields: ValueFields } | undefined;

/** protobufjs's bundled Value may name its fields in camelCase: look them up by number. */
interface ValueFields {
  readonly null: string;
  readonly number: string;
  readonly string: string;
  readonly bool: string;
  readonly struct: string;
  readonly list: string;
}

function schema(): NonNullable<typeof cached> {
  if (cached) return cached;
  const dir = oooiProtoDir();
  if (!existsSync(join(dir, PROTO_FILE))) throw new Error(`cannot find ${PROTO_FILE} under ${dir}`);
  const root = new protobuf.Root();
  // google/protobuf/struct.proto is bundled with protobufjs; only our own file is read from disk.
  root.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : join(dir, target));
  root.loadSync(PROTO_FILE, { keepCase: true });
  root.resolveAll();
  const config = root.lookupType("oooi.dhcp.v1.KeaConfig");
  const value = root.lookupType("google.protobuf.Value");
  const byId = (id: number): string => {
    const f = value.fieldsById[id];
    if (!f) throw new Error(`google.protobuf.Value has no field ${String(id)}`);
    return f.name;
  };
  cached = {
    config,
    valueFields: { null: byId(1), number: byId(2), string: byId(3), bool: byId(4), struct: byId(5), list: byId(6) },
  };
  return cached;
}

/** The loaded oooi.dhcp.v1.KeaConfig message type. */
export function keaConfigType(): protobuf.Type {
  return schema().config;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** KeaConfig proto3 JSON ({name, dhcp4}) → protobuf bytes; throws on anything a Struct cannot hold. */
export function encodeKeaConfig(json: object): Uint8Array {
  const { config, valueFields } = schema();
  const r = json as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (key !== "name" && key !== "dhcp4") throw new Error(`KeaConfig.${key}: unknown field`);
  }
  const name = r["name"] ?? "";
  if (typeof name !== "string") throw new Error("KeaConfig.name: expected a string");
  const dhcp4 = r["dhcp4"];
  if (dhcp4 !== undefined && dhcp4 !== null && !isRecord(dhcp4)) throw new Error("KeaConfig.dhcp4: expected an object");
  const object = { name, ...(isRecord(dhcp4) ? { dhcp4: structOf(dhcp4, "KeaConfig.dhcp4", valueFields) } : {}) };
  return config.encode(config.fromObject(object)).finish();
}

/** Protobuf bytes → KeaConfig proto3 JSON (an absent dhcp4 decodes as {}); throws on malformed bytes. */
export function decodeKeaConfig(bytes: Uint8Array): KeaConfigJson {
  const { config, valueFields } = schema();
  // A plain view: protobufjs's Buffer reader clamps truncated strings instead of failing.
  const plain = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const object = config.toObject(config.decode(plain), { defaults: false, arrays: true, objects: true }) as {
    name?: unknown;
    dhcp4?: unknown;
  };
  return {
    name: typeof object.name === "string" ? object.name : "",
    dhcp4: isRecord(object.dhcp4) ? jsonOfStruct(object.dhcp4, valueFields) : {},
  };
}

/** How the snapshot cache encodes and names KeaConfig resources (agents subscribe by name). */
export const KEA_CONFIG_TYPE_SPEC: ResourceTypeSpec = {
  encode: encodeKeaConfig,
  nameOf: (resource) => {
    const name = (resource as { name?: unknown }).name;
    return typeof name === "string" ? name : undefined;
  },
  legacyWildcard: false,
};

/** The cache input for one DHCPServer: a KeaConfig named `name` holding `config.Dhcp4`. */
export function keaConfigResource(name: string, config: { readonly Dhcp4: object }): ResourceInput {
  const resource: KeaConfigJson = { name, dhcp4: config.Dhcp4 as Record<string, unknown> };
  return { name, resource };
}

// ---------------------------------------------------------------- JSON ↔ google.protobuf.Struct

function structOf(json: Record<string, unknown>, at: string, f: ValueFields): { fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) {
    // JSON.stringify drops undefined members; so does the Struct.
    if (v !== undefined) fields[k] = valueOf(v, `${at}.${k}`, f);
  }
  return { fields };
}

function valueOf(json: unknown, at: string, f: ValueFields): Record<string, unknown> {
  if (json === null) return { [f.null]: 0 };
  if (typeof json === "number") {
    if (!Number.isFinite(json)) throw new Error(`${at}: ${String(json)} has no JSON form`);
    return { [f.number]: json };
  }
  if (typeof json === "string") return { [f.string]: json };
  if (typeof json === "boolean") return { [f.bool]: json };
  if (Array.isArray(json))
    return { [f.list]: { values: json.map((v: unknown, i) => valueOf(v ?? null, `${at}[${String(i)}]`, f)) } };
  if (isRecord(json)) return { [f.struct]: structOf(json, at, f) };
  throw new Error(`${at}: a ${typeof json} has no JSON form`);
}

function jsonOfStruct(object: Record<string, unknown>, f: ValueFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = object["fields"];
  if (isRecord(fields)) for (const [k, v] of Object.entries(fields)) out[k] = jsonOfValue(v, f);
  return out;
}

function jsonOfValue(object: unknown, f: ValueFields): unknown {
  if (!isRecord(object)) return null;
  const struct = object[f.struct];
  if (struct !== undefined) return jsonOfStruct(isRecord(struct) ? struct : {}, f);
  const list = object[f.list];
  if (list !== undefined) {
    const values = isRecord(list) ? list["values"] : undefined;
    return Array.isArray(values) ? values.map((v: unknown) => jsonOfValue(v, f)) : [];
  }
  for (const key of [f.number, f.string, f.bool]) {
    const v = object[key];
    if (v !== undefined) return v;
  }
  return null;
}
