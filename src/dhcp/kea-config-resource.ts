// oooi.dhcp.v1.KeaConfig: our own xDS resource type, a DHCPServer's whole kea-dhcp4 configuration
// carried as a google.protobuf.Struct (src/xds/resource/struct.ts converts it: protobufjs has no
// proto3 JSON mapping for Struct). The schema is read from proto/ at runtime.
import { oooiProtoDir } from "../util/proto-dir.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";

import type { ResourceInput, ResourceTypeSpec } from "../xds/resource/specs.js";
import { jsonFromStruct, structFromJson, valueKeysOf, type ValueKeys } from "../xds/resource/struct.js";

/** Type URL of the KeaConfig resource on ADS. */
export const KEA_CONFIG_TYPE_URL = "type.googleapis.com/oooi.dhcp.v1.KeaConfig";

/** A KeaConfig in proto3 JSON: the resource name and the value of kea-dhcp4's top-level "Dhcp4". */
export interface KeaConfigJson {
  /** "<namespace>/<DHCPServer name>": also the ADS resource name and the agent's node group. */
  readonly name: string;
  readonly dhcp4: Readonly<Record<string, unknown>>;
}

const PROTO_FILE = "oooi/dhcp/v1/kea_config.proto";

let cached: { config: protobuf.Type; valueKeys: ValueKeys } | undefined;

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
  cached = { config, valueKeys: valueKeysOf(root.lookupType("google.protobuf.Value")) };
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
  const { config, valueKeys } = schema();
  const r = json as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (key !== "name" && key !== "dhcp4") throw new Error(`KeaConfig.${key}: unknown field`);
  }
  const name = r["name"] ?? "";
  if (typeof name !== "string") throw new Error("KeaConfig.name: expected a string");
  const dhcp4 = r["dhcp4"];
  if (dhcp4 !== undefined && dhcp4 !== null && !isRecord(dhcp4)) throw new Error("KeaConfig.dhcp4: expected an object");
  const object = { name, ...(isRecord(dhcp4) ? { dhcp4: structFromJson(dhcp4, "KeaConfig.dhcp4", valueKeys) } : {}) };
  return config.encode(config.fromObject(object)).finish();
}

/** Protobuf bytes → KeaConfig proto3 JSON (an absent dhcp4 decodes as {}); throws on malformed bytes. */
export function decodeKeaConfig(bytes: Uint8Array): KeaConfigJson {
  const { config, valueKeys } = schema();
  // A plain view: protobufjs's Buffer reader clamps truncated strings instead of failing.
  const plain = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const object = config.toObject(config.decode(plain), { defaults: false, arrays: true, objects: true }) as {
    name?: unknown;
    dhcp4?: unknown;
  };
  return {
    name: typeof object.name === "string" ? object.name : "",
    dhcp4: isRecord(object.dhcp4) ? jsonFromStruct(object.dhcp4, valueKeys) : {},
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
