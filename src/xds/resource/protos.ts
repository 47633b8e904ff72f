// The real Envoy v3 protos, loaded at runtime from the pinned @grpc/grpc-js-xds package (its deps/
// folder; nothing is copied into this repo), and a strict bridge between proto3 JSON as rendered
// (snake_case names, "@type" in Any, "30s" durations, bare wrapper values) and protobuf bytes.
//
// protobufjs alone is not enough: Type.fromObject silently drops unknown fields, leaves an Any
// empty when its "@type" is not loaded, and expects object forms for Duration and wrappers. The
// walk below checks every field against the schema (throwing on anything unknown) and converts
// the well-known types both ways, packing each nested typed_config as protobufjs's Any wrapper would.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import protobuf from "protobufjs";
import { formatDuration, parseDuration } from "./duration.js";
import {
  jsonFromList,
  jsonFromStruct,
  jsonFromValue,
  listFromJson,
  structFromJson,
  valueFromJson,
  valueKeysOf,
  type ValueKeys,
} from "./struct.js";

export * from "./type-urls.js";

// Files whose transitive imports hold every type the renderer and the ADS server use.
const PROTO_FILES = [
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/matching/common_inputs/network/v3/network_inputs.proto",
  "xds/type/matcher/v3/domain.proto",
  "xds/type/matcher/v3/ip.proto",
  "envoy/service/discovery/v3/ads.proto",
];

const DEPS_DIRS = ["envoy-api", "xds", "googleapis", "protoc-gen-validate"];

let cachedRoot: protobuf.Root | undefined;

/**
 * The Envoy v3 / xDS schema (field names kept in snake_case), loaded on first use: Listener,
 * Cluster, ClusterLoadAssignment, RouteConfiguration, TcpProxy, HttpConnectionManager,
 * TlsInspector, Router and the (Delta)DiscoveryRequest/Response of the ADS service.
 */
export function envoyProtoRoot(): protobuf.Root {
  if (cachedRoot) return cachedRoot;
  const require = createRequire(import.meta.url);
  const deps = path.join(path.dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
  // descriptor.proto is not among protobufjs's bundled common types, but ships in its package.
  const includeDirs = [
    ...DEPS_DIRS.map((d) => path.join(deps, d)),
    path.dirname(require.resolve("protobufjs/package.json")),
  ];
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (path.isAbsolute(target)) return target;
    for (const dir of includeDirs) {
      const candidate = path.join(dir, target);
      if (fs.existsSync(candidate)) return candidate;
    }
    return target;
  };
  root.loadSync(PROTO_FILES, { keepCase: true });
  root.resolveAll();
  cachedRoot = root;
  return root;
}

/** Types found by name: a namespace lookup walks the tree, and every Any of a listener asks again. */
const typesByName = new Map<string, protobuf.Type>();

/** The message type named by a type URL ("type.googleapis.com/pkg.Msg") or a full name ("pkg.Msg"). */
export function messageType(typeUrlOrName: string): protobuf.Type {
  const name = typeUrlOrName.slice(typeUrlOrName.lastIndexOf("/") + 1);
  const known = typesByName.get(name);
  if (known !== undefined) return known;
  const found = envoyProtoRoot().lookup("." + name);
  if (!(found instanceof protobuf.Type)) throw new Error(`unknown message type ${typeUrlOrName}`);
  // Only loaded types are kept, so the map is as bounded as the schema.
  typesByName.set(name, found);
  return found;
}

/** Proto3 JSON (snake_case, "@type" Any) → protobuf bytes; throws on any field the schema lacks. */
export function encodeResource(typeUrl: string, json: object): Uint8Array {
  return encodeMessage(messageType(typeUrl), json);
}

/** encodeResource with the message type in hand (a Listener's chains, encoded one by one). */
export function encodeMessage(type: protobuf.Type, json: object): Uint8Array {
  const object = messageFromJson(type, json, typeName(type));
  return type.encode(type.fromObject(object as Record<string, unknown>)).finish();
}

/** Protobuf bytes → the same proto3 JSON form encodeResource accepts ("@type" in every Any). */
export function decodeResource(typeUrl: string, bytes: Uint8Array): Record<string, unknown> {
  const type = messageType(typeUrl);
  const object: Record<string, unknown> = type.toObject(type.decode(bytes), TO_OBJECT);
  const json = messageToJson(type, object, typeName(type));
  if (!isRecord(json)) throw new Error(`${typeName(type)}: decoded to a non-object`);
  return json;
}

const TO_OBJECT: protobuf.IConversionOptions = {
  json: true, // expands Any into "@type" + fields, NaN/Infinity as strings
  enums: String,
  longs: String,
  bytes: String,
  defaults: false,
  arrays: false,
  objects: false,
  oneofs: false,
};

// ---------------------------------------------------------------- proto3 JSON → protobufjs objects

const ANY = ".google.protobuf.Any";
const DURATION = ".google.protobuf.Duration";
const STRUCT = ".google.protobuf.Struct";
const VALUE = ".google.protobuf.Value";
const LIST_VALUE = ".google.protobuf.ListValue";
// Their JSON forms differ from their fields; not needed by any resource oooi renders.
const UNSUPPORTED = new Set([".google.protobuf.Timestamp", ".google.protobuf.FieldMask"]);

/** Zero value of each wrapper type, as proto3 JSON. */
const WRAPPER_DEFAULTS = new Map<string, unknown>([
  [".google.protobuf.DoubleValue", 0],
  [".google.protobuf.FloatValue", 0],
  [".google.protobuf.Int64Value", "0"],
  [".google.protobuf.UInt64Value", "0"],
  [".google.protobuf.Int32Value", 0],
  [".google.protobuf.UInt32Value", 0],
  [".google.protobuf.BoolValue", false],
  [".google.protobuf.StringValue", ""],
  [".google.protobuf.BytesValue", ""],
]);

/** Well-known types whose JSON form is not an object of their fields. */
function hasSpecialJson(type: protobuf.Type): boolean {
  const n = fullNameOf(type);
  return (
    n === ANY ||
    n === DURATION ||
    n === STRUCT ||
    n === VALUE ||
    n === LIST_VALUE ||
    WRAPPER_DEFAULTS.has(n) ||
    UNSUPPORTED.has(n)
  );
}

/** Full names by type: protobufjs builds `fullName` from the parent chain on every read. */
const fullNames = new WeakMap<protobuf.ReflectionObject, string>();

/** The type's full name with its leading dot (".pkg.Msg"). */
function fullNameOf(type: protobuf.Type): string {
  let name = fullNames.get(type);
  if (name === undefined) {
    name = type.fullName;
    fullNames.set(type, name);
  }
  return name;
}

function typeName(type: protobuf.Type): string {
  return fullNameOf(type).slice(1);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function fail(at: string, message: string): never {
  throw new Error(`${at}: ${message}`);
}

function fieldOf(type: protobuf.Type, key: string): protobuf.Field | undefined {
  return Object.hasOwn(type.fields, key) ? type.fields[key] : undefined;
}

function messageFromJson(type: protobuf.Type, json: unknown, at: string): unknown {
  const name = fullNameOf(type);
  if (UNSUPPORTED.has(name)) fail(at, `${typeName(type)} JSON is not supported`);
  if (name === ANY) return anyFromJson(json, at);
  if (name === DURATION) {
    const d = typeof json === "string" ? parseDuration(json) : undefined;
    if (!d) fail(at, `expected a Duration like "30s", got ${JSON.stringify(json)}`);
    return { ...(d.seconds !== 0 ? { seconds: String(d.seconds) } : {}), ...(d.nanos !== 0 ? { nanos: d.nanos } : {}) };
  }
  if (name === STRUCT) return structFromJson(json, at, valueKeys());
  if (name === VALUE) return valueFromJson(json, at, valueKeys());
  if (name === LIST_VALUE) return listFromJson(json, at, valueKeys());
  const valueField = WRAPPER_DEFAULTS.has(name) ? fieldOf(type, "value") : undefined;
  if (valueField) return { value: scalarFromJson(valueField.type, json, at) };
  if (!isRecord(json)) fail(at, `expected an object for ${typeName(type)}`);
  return fieldsFromJson(type, json, at, false);
}

function fieldsFromJson(
  type: protobuf.Type,
  json: Record<string, unknown>,
  at: string,
  anyPayload: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    if (anyPayload && key === "@type") continue;
    const field = fieldOf(type, key);
    if (!field) fail(`${at}.${key}`, `unknown field of ${typeName(type)}`);
    if (value === null) continue; // proto3 JSON: null means "not set"
    out[key] = fieldFromJson(field, value, `${at}.${key}`);
  }
  for (const oneof of type.oneofsArray) {
    const set = oneof.oneof.filter((n) => n in out);
    if (set.length > 1) fail(at, `${set.join(" and ")} are both set in oneof ${oneof.name}`);
  }
  return out;
}

function fieldFromJson(field: protobuf.Field, value: unknown, at: string): unknown {
  if (field instanceof protobuf.MapField) {
    if (!isRecord(value)) fail(at, "expected an object for a map field");
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = singleFromJson(field, v, `${at}[${JSON.stringify(k)}]`);
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) fail(at, "expected an array for a repeated field");
    return value.map((v: unknown, i) => singleFromJson(field, v, `${at}[${i}]`));
  }
  return singleFromJson(field, value, at);
}

function singleFromJson(field: protobuf.Field, value: unknown, at: string): unknown {
  const rt = field.resolvedType;
  if (rt instanceof protobuf.Type) return messageFromJson(rt, value, at);
  if (rt instanceof protobuf.Enum) {
    if (typeof value === "string" && Object.hasOwn(rt.values, value)) return value;
    if (typeof value === "number" && Number.isInteger(value)) return value;
    return fail(at, `${JSON.stringify(value)} is not a value of enum ${rt.name}`);
  }
  return scalarFromJson(field.type, value, at);
}

const INT32 = new Set(["int32", "sint32", "sfixed32"]);
const UINT32 = new Set(["uint32", "fixed32"]);
const INT64 = new Set(["int64", "sint64", "sfixed64", "uint64", "fixed64"]);

function scalarFromJson(scalar: string, value: unknown, at: string): unknown {
  const bad = (): never => fail(at, `${JSON.stringify(value)} is not a valid ${scalar}`);
  if (scalar === "string") return typeof value === "string" ? value : bad();
  if (scalar === "bool") return typeof value === "boolean" ? value : bad();
  if (scalar === "bytes") return typeof value === "string" && /^[A-Za-z0-9+/_-]*={0,2}$/.test(value) ? value : bad();
  if (scalar === "double" || scalar === "float") {
    if (typeof value === "number" || value === "NaN" || value === "Infinity" || value === "-Infinity") return value;
    return bad();
  }
  const n = typeof value === "string" && /^-?[0-9]+$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n)) return bad();
  if (INT32.has(scalar)) return n >= -(2 ** 31) && n < 2 ** 31 ? n : bad();
  if (UINT32.has(scalar)) return n >= 0 && n < 2 ** 32 ? n : bad();
  if (INT64.has(scalar)) {
    if (scalar.startsWith("u") || scalar.startsWith("f")) {
      if (n < 0) return bad();
    }
    return typeof value === "string" ? value : String(value);
  }
  return fail(at, `unsupported scalar type ${scalar}`);
}

function anyFromJson(json: unknown, at: string): Record<string, unknown> {
  if (!isRecord(json)) fail(at, "expected an object for google.protobuf.Any");
  const url = json["@type"];
  if (typeof url !== "string") fail(at, 'an Any needs "@type"');
  let inner: protobuf.Type;
  try {
    inner = messageType(url);
  } catch {
    return fail(at, `"@type" ${url} is not a loaded message type`);
  }
  const innerAt = `${at}<${typeName(inner)}>`;
  if (fullNameOf(inner) === ANY) fail(innerAt, "an Any inside an Any is not supported");
  if (hasSpecialJson(inner)) {
    const extra = Object.keys(json).filter((k) => k !== "@type" && k !== "value");
    if (extra.length > 0) fail(`${innerAt}.${extra[0] ?? ""}`, "unknown field");
    return packAny(url, inner, messageFromJson(inner, json["value"], `${innerAt}.value`));
  }
  return packAny(url, inner, fieldsFromJson(inner, json, innerAt, true));
}

/**
 * The Any as protobufjs's own Any wrapper would pack it from "@type" (the URL without a leading
 * ".", with a "/" before a bare name), packed here with the type already found: the wrapper would
 * look the type up again by name for every Any.
 */
function packAny(url: string, inner: protobuf.Type, fields: unknown): Record<string, unknown> {
  const bare = url.startsWith(".") ? url.slice(1) : url;
  return {
    type_url: bare.includes("/") ? bare : `/${bare}`,
    value: inner.encode(inner.fromObject(fields as Record<string, unknown>)).finish(),
  };
}

let loadedValueKeys: ValueKeys | undefined;

/** What the loaded google.protobuf.Value calls its fields (camelCase in protobufjs's bundled copy). */
function valueKeys(): ValueKeys {
  return (loadedValueKeys ??= valueKeysOf(messageType("google.protobuf.Value")));
}

// ---------------------------------------------------------------- protobufjs objects → proto3 JSON

function messageToJson(type: protobuf.Type, object: unknown, at: string): unknown {
  const name = fullNameOf(type);
  if (!isRecord(object)) return fail(at, `decoded ${typeName(type)} is not an object`);
  if (name === ANY) return anyToJson(object, at);
  if (name === DURATION) return formatDuration(Number(object["seconds"] ?? 0), Number(object["nanos"] ?? 0));
  if (name === STRUCT) return jsonFromStruct(object, valueKeys());
  if (name === VALUE) return jsonFromValue(object, valueKeys());
  if (name === LIST_VALUE) return jsonFromList(object, valueKeys());
  if (WRAPPER_DEFAULTS.has(name)) return object["value"] ?? WRAPPER_DEFAULTS.get(name);
  if (UNSUPPORTED.has(name)) fail(at, `${typeName(type)} JSON is not supported`);
  return fieldsToJson(type, object, at);
}

function fieldsToJson(type: protobuf.Type, object: Record<string, unknown>, at: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const field = fieldOf(type, key);
    if (!field) fail(`${at}.${key}`, `unexpected field of ${typeName(type)}`);
    out[key] = fieldToJson(field, value, `${at}.${key}`);
  }
  return out;
}

function fieldToJson(field: protobuf.Field, value: unknown, at: string): unknown {
  if (field instanceof protobuf.MapField && isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = singleToJson(field, v, `${at}[${JSON.stringify(k)}]`);
    return out;
  }
  if (field.repeated && Array.isArray(value))
    return value.map((v: unknown, i) => singleToJson(field, v, `${at}[${i}]`));
  return singleToJson(field, value, at);
}

function singleToJson(field: protobuf.Field, value: unknown, at: string): unknown {
  const rt = field.resolvedType;
  return rt instanceof protobuf.Type ? messageToJson(rt, value, at) : value;
}

function anyToJson(object: Record<string, unknown>, at: string): Record<string, unknown> {
  const url = object["@type"];
  // protobufjs leaves {type_url, value} when it could not find the packed type.
  if (typeof url !== "string") return fail(at, `Any of unknown type ${JSON.stringify(object["type_url"])}`);
  const inner = messageType(url);
  const innerAt = `${at}<${typeName(inner)}>`;
  const rest = Object.fromEntries(Object.entries(object).filter(([k]) => k !== "@type"));
  if (hasSpecialJson(inner)) return { "@type": url, value: messageToJson(inner, rest, innerAt) };
  return { "@type": url, ...fieldsToJson(inner, rest, innerAt) };
}
