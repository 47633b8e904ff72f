// The one JSON ↔ google.protobuf.Struct codec, checked through real protobuf bytes: what it builds
// for protobufjs's bundled Value (camelCase names) and for proto-loader (both spellings) encodes to
// a Struct that decodes back to the same JSON.
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { jsonFromStruct, LOADER_VALUE_KEYS, structFromJson, valueKeysOf } from "../../../src/xds/resource/struct.js";

const root = protobuf.Root.fromJSON(protobuf.common.get("google/protobuf/struct.proto") ?? {});
const Struct = root.lookupType("google.protobuf.Struct");
const keys = valueKeysOf(root.lookupType("google.protobuf.Value"));

const rows = [
  { name: "scalars", json: { n: 1.5, s: "x", t: true, f: false, z: 0, e: "", nil: null } },
  { name: "nesting", json: { a: { b: [1, "two", { c: [null, [false]] }] }, empty: {}, none: [] } },
  { name: "Kea-like config", json: { Dhcp4: { "valid-lifetime": 3600, subnet4: [{ id: 1, subnet: "10.0.0.0/24" }] } } },
];

describe("JSON ↔ Struct through protobuf bytes", () => {
  it.each(rows)("$name, with the loaded Value's keys", ({ json }) => {
    const bytes = Struct.encode(Struct.fromObject(structFromJson(json, "x", keys))).finish();
    const decoded = Struct.toObject(Struct.decode(bytes), { defaults: false, arrays: true, objects: true });
    expect(jsonFromStruct(decoded, keys)).toEqual(json);
  });

  it.each(rows)("$name, with proto-loader's keys (both spellings)", ({ json }) => {
    const bytes = Struct.encode(Struct.fromObject(structFromJson(json, "x", LOADER_VALUE_KEYS))).finish();
    const decoded = Struct.toObject(Struct.decode(bytes), { defaults: false, arrays: true, objects: true });
    expect(jsonFromStruct(decoded, LOADER_VALUE_KEYS)).toEqual(json);
  });

  it("drops undefined members, as JSON.stringify does", () => {
    expect(jsonFromStruct(structFromJson({ a: undefined, b: 1 }, "x", keys), keys)).toEqual({ b: 1 });
  });

  it.each([
    { json: { a: { b: Number.NaN } }, message: "cfg.a.b: NaN has no JSON form" },
    { json: { a: [1, Infinity] }, message: "cfg.a[1]: Infinity has no JSON form" },
    { json: { f: () => 1 }, message: "cfg.f: a function has no JSON form" },
    { json: "text", message: "cfg: expected an object for google.protobuf.Struct" },
  ])("refuses what has no JSON form, naming the path: $message", ({ json, message }) => {
    expect(() => structFromJson(json, "cfg", keys)).toThrow(message);
  });
});
