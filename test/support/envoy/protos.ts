// The stand-in's own view of the wire: Envoy's v3 protos loaded from the @grpc/grpc-js-xds package
// (its deps/ folder, found with require.resolve; nothing copied, nothing shared with src/), and
// protobuf bytes → proto3 JSON with field names as in the .proto files, following the JSON mapping
// (https://protobuf.dev/programming-guides/json/): an Any becomes "@type" plus the packed message's
// fields, a Duration "1.500s", a wrapper its bare value, 64-bit integers strings, enums names.
// A packed type the stand-in does not know is an error, as an Envoy without that extension
// rejects the resource.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";
import protobuf from "protobufjs";

/** Type URLs of the xDS resources and extensions an Envoy on oooi's listeners uses. */
export const TYPE_URLS = {
  listener: "type.googleapis.com/envoy.config.listener.v3.Listener",
  cluster: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  endpoint: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  route: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  tcpProxy: "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
  httpConnectionManager:
    "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
} as const;

// The files whose imports bring in every type above, the extensions Envoy links in that oooi
// configures (TLS inspector, router), and the ADS service.
const FILES = [
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

let root: protobuf.Root | undefined;

function loadRoot(): protobuf.Root {
  if (root) return root;
  const require = createRequire(import.meta.url);
  const deps = join(dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
  // google/protobuf/descriptor.proto ships with protobufjs, not in deps/.
  const include = [
    ...["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => join(deps, d)),
    dirname(require.resolve("protobufjs/package.json")),
  ];
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => {
    if (isAbsolute(target)) return target;
    return include.map((dir) => join(dir, target)).find((p) => existsSync(p)) ?? target;
  };
  r.loadSync(FILES, { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

/** The message type of a type URL or full name; throws when the stand-in does not know it. */
export function typeOf(typeUrlOrName: string): protobuf.Type {
  const found = loadRoot().lookup("." + typeUrlOrName.slice(typeUrlOrName.lastIndexOf("/") + 1));
  if (!(found instanceof protobuf.Type)) throw new Error(`unknown type ${typeUrlOrName}`);
  return found;
}

/** Encodes a plain object (snake_case, no well-known-type JSON forms) as message `name`. */
export function encodeMessage(name: string, object: object): Buffer {
  const type = typeOf(name);
  return Buffer.from(type.encode(type.fromObject(object as Record<string, unknown>)).finish());
}

/** Protobuf bytes of a `typeUrl` message → proto3 JSON. */
export function decodeToJson(typeUrl: string, bytes: Uint8Array): Record<string, unknown> {
  const type = typeOf(typeUrl);
  const object = type.toObject(type.decode(bytes), { longs: String, enums: String, bytes: String });
  return messageJson(type, object);
}

function messageJson(type: protobuf.Type, object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const field = type.fields[key];
    if (field === undefined) throw new Error(`${type.fullName}: no field ${key}`);
    out[key] = fieldJson(field, value);
  }
  return out;
}

function fieldJson(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (!(resolved instanceof protobuf.Type)) return value;
  if (field instanceof protobuf.MapField) {
    return Object.fromEntries(
      Object.entries(value as Record<string, Record<string, unknown>>).map(([k, v]) => [k, valueJson(resolved, v)]),
    );
  }
  if (field.repeated) return (value as Record<string, unknown>[]).map((v) => valueJson(resolved, v));
  return valueJson(resolved, value as Record<string, unknown>);
}

const WRAPPERS = new Set(
  ["Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes"].map(
    (w) => `.google.protobuf.${w}Value`,
  ),
);

function valueJson(type: protobuf.Type, object: Record<string, unknown>): unknown {
  const name = type.fullName;
  if (name === ".google.protobuf.Any") {
    const url = asText(object["type_url"]);
    const inner = decodeToJson(url, Buffer.from(asText(object["value"]), "base64"));
    return { "@type": url, ...inner };
  }
  if (name === ".google.protobuf.Duration")
    return durationText(asText(object["seconds"]) || "0", Number(object["nanos"] ?? 0));
  if (WRAPPERS.has(name)) return object["value"] ?? type.fields["value"]?.defaultValue;
  if (
    name === ".google.protobuf.Struct" ||
    name === ".google.protobuf.Value" ||
    name === ".google.protobuf.ListValue"
  ) {
    return structJson(name, object);
  }
  return messageJson(type, object);
}

/** A string or number field as text ("" when unset). */
function asText(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

/** Duration JSON: seconds with 0, 3, 6 or 9 fractional digits and an "s". */
function durationText(seconds: string, nanos: number): string {
  const negative = seconds.startsWith("-") || nanos < 0;
  const whole = seconds.replace(/^-/, "");
  let digits = String(Math.abs(nanos)).padStart(9, "0");
  while (digits.length > 0 && digits.endsWith("000")) digits = digits.slice(0, -3);
  return `${negative ? "-" : ""}${whole}${digits === "" ? "" : `.${digits}`}s`;
}

function structJson(name: string, object: Record<string, unknown>): unknown {
  if (name === ".google.protobuf.Struct") {
    const fields = (object["fields"] ?? {}) as Record<string, Record<string, unknown>>;
    return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, structJson(".google.protobuf.Value", v)]));
  }
  if (name === ".google.protobuf.ListValue") {
    return ((object["values"] ?? []) as Record<string, unknown>[]).map((v) => structJson(".google.protobuf.Value", v));
  }
  if ("struct_value" in object)
    return structJson(".google.protobuf.Struct", object["struct_value"] as Record<string, unknown>);
  if ("list_value" in object)
    return structJson(".google.protobuf.ListValue", object["list_value"] as Record<string, unknown>);
  if ("null_value" in object) return null;
  return object["number_value"] ?? object["string_value"] ?? object["bool_value"];
}
