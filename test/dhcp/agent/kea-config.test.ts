// The KeaConfig resource: real protobuf bytes out of the cache's encoder, the Struct wire form
// read back field by field, and the agent's decoder restoring the exact rendered JSON.
import { oooiProtoDir } from "../../../src/util/proto-dir.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { renderKea } from "../../../src/dhcp/render/index.js";
import { withLocalPaths } from "../../../src/dhcp/agent/index.js";
import {
  KEA_CONFIG_TYPE_SPEC,
  KEA_CONFIG_TYPE_URL,
  decodeKeaConfig,
  encodeKeaConfig,
  keaConfigResource,
} from "../../../src/dhcp/kea-config-resource.js";
import { keaCache } from "./support.js";
import { openPool, wideDeny } from "../support/models.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");

describe("KeaConfig resource", () => {
  it("round-trips a rendered Kea configuration exactly", () => {
    for (const model of [wideDeny, openPool]) {
      const rendered = renderKea(model);
      const bytes = encodeKeaConfig({ name: model.name, dhcp4: rendered.Dhcp4 });
      const back = decodeKeaConfig(bytes);
      expect(back.name).toBe(model.name);
      expect(back.dhcp4).toEqual(JSON.parse(JSON.stringify(rendered.Dhcp4)));
    }
  });

  it("puts the name in field 1 and a google.protobuf.Struct in field 2", () => {
    const bytes = encodeKeaConfig({
      name: "ns/x-dhcp",
      dhcp4: { "valid-lifetime": 3600, authoritative: true, subnet4: [{ id: 1 }], x: null },
    });
    const reader = protobuf.Reader.create(bytes);
    const fields = new Map<number, Uint8Array>();
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      expect(tag & 7).toBe(2); // both length-delimited
      fields.set(tag >>> 3, reader.bytes());
    }
    expect(Buffer.from(fields.get(1) ?? []).toString()).toBe("ns/x-dhcp");
    const Struct = protobuf.Root.fromJSON(
      protobuf.common.get("google/protobuf/struct.proto") as protobuf.INamespace,
    ).lookupType("google.protobuf.Struct");
    const struct = Struct.toObject(Struct.decode(fields.get(2) ?? new Uint8Array())) as {
      fields: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(struct.fields).sort()).toEqual(["authoritative", "subnet4", "valid-lifetime", "x"]);
    expect(struct.fields["valid-lifetime"]).toEqual({ numberValue: 3600 });
    expect(struct.fields["authoritative"]).toEqual({ boolValue: true });
    expect(struct.fields["x"]).toEqual({ nullValue: 0 });
  });

  it("keeps nulls, nested lists and empty containers; drops undefined members as JSON does", () => {
    const dhcp4 = { a: [1, "two", false, null, [], {}, [{ b: [3.5] }]], c: {}, d: undefined };
    expect(decodeKeaConfig(encodeKeaConfig({ name: "n/n", dhcp4 })).dhcp4).toEqual({
      a: [1, "two", false, null, [], {}, [{ b: [3.5] }]],
      c: {},
    });
  });

  it("refuses what a Struct cannot carry and unknown fields", () => {
    expect(() => encodeKeaConfig({ name: "n/n", dhcp4: { x: Number.NaN } })).toThrow(/KeaConfig\.dhcp4\.x/);
    expect(() => encodeKeaConfig({ name: "n/n", dhcp4: { x: [1, () => 1] } })).toThrow(/KeaConfig\.dhcp4\.x\[1\]/);
    expect(() => encodeKeaConfig({ name: "n/n", Dhcp4: {} })).toThrow(/unknown field/);
    expect(() => encodeKeaConfig({ name: 7 })).toThrow(/name/);
    expect(() => decodeKeaConfig(new Uint8Array([0x0a, 0x09, 0x61]))).toThrow();
    expect(() => decodeKeaConfig(Buffer.from([0, 0x0a, 0x09, 0x61]).subarray(1))).toThrow(); // as gRPC hands it over
  });

  it("is servable from the snapshot cache under its type URL, named as the agent subscribes", () => {
    const cache = keaCache();
    expect(cache.typeSpec(KEA_CONFIG_TYPE_URL)).toBe(KEA_CONFIG_TYPE_SPEC);
    const ok = cache.setSnapshot(
      wideDeny.name,
      new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource(wideDeny.name, renderKea(wideDeny))]]]),
    );
    expect(ok.ok).toBe(true);
    const misnamed = cache.setSnapshot(
      "g",
      new Map([[KEA_CONFIG_TYPE_URL, [{ name: "g", resource: { name: "other", dhcp4: {} } }]]]),
    );
    expect(misnamed.ok).toBe(false);
    // Same content, same version: an unchanged model pushes nothing.
    const again = cache.setSnapshot(
      wideDeny.name,
      new Map([[KEA_CONFIG_TYPE_URL, [keaConfigResource(wideDeny.name, renderKea(wideDeny))]]]),
    );
    expect(again.ok && again.changed).toEqual([]);
  });

  it("finds the repository's proto/ from the running code", () => {
    expect(existsSync(join(oooiProtoDir(), "oooi/dhcp/v1/kea_config.proto"))).toBe(true);
    expect(oooiProtoDir()).toBe(join(ROOT, "proto"));
  });
});

describe("local Kea paths", () => {
  it("replaces the lease file and the hook directory, keeping library names and everything else", () => {
    const { Dhcp4 } = renderKea(wideDeny);
    const out = withLocalPaths(Dhcp4 as unknown as Record<string, unknown>, {
      leaseFile: "/tmp/k/leases.csv",
      hooksDirectory: "/opt/kea/hooks/",
    });
    expect(out["lease-database"]).toEqual({ ...Dhcp4["lease-database"], name: "/tmp/k/leases.csv" });
    expect(out["hooks-libraries"]).toEqual([{ library: "/opt/kea/hooks/libdhcp_lease_cmds.so" }]);
    expect({ ...out, "lease-database": undefined, "hooks-libraries": undefined }).toEqual({
      ...Dhcp4,
      "lease-database": undefined,
      "hooks-libraries": undefined,
    });
    expect(withLocalPaths(Dhcp4 as unknown as Record<string, unknown>, {})).toEqual(Dhcp4);
  });
});
