// The Infra's extra DHCP options checked one value at a time (src/model/dhcp-options.ts): what each
// known option accepts, its Kea data, and the message when it refuses. The hex of option 121 is
// worked out by hand from RFC 3442 (prefix length, significant destination octets, router).
import { describe, expect, test } from "vitest";
import { resolveDhcpOptions } from "../../src/model/dhcp-options.js";
import { Problems } from "../../src/model/problems.js";
import type { ObjectRef } from "../../src/model/types.js";

const infra: ObjectRef = { kind: "Infra", namespace: "ns", name: "vlan" };
const FIELD = "spec.infraComponents.dhcp.options";

function one(code: number, value: string) {
  const problems = new Problems();
  const options = resolveDhcpOptions(infra, FIELD, [{ code, value }], problems);
  return { options, problems: problems.sorted().map((p) => `${p.field} ${p.reason}: ${p.message}`) };
}

describe("a value each option accepts becomes its Kea data", () => {
  test.each([
    [26, "68", "68", true],
    [26, "65535", "65535", true],
    [26, " 1500 ", "1500", true],
    [26, "09000", "9000", true],
    [42, "192.0.2.1", "192.0.2.1", true],
    [42, "192.0.2.1,,198.51.100.1 ", "192.0.2.1, 198.51.100.1", true],
    [119, "example.com", "example.com", true],
    [119, "example.com,, corp.example.com.", "example.com, corp.example.com.", true],
    [121, "0.0.0.0/0 - 192.0.2.1", "00C0000201", false],
    [121, "10.0.0.0/8-192.0.2.1", "080AC0000201", false],
    [121, "10.1.2.3/32 -192.0.2.1", "200A010203C0000201", false],
    [121, "172.16.0.0/12- 192.0.2.1, 198.51.100.0/24 - 192.0.2.254", "0CAC10C000020118C63364C00002FE", false],
  ])("option %i %j → %j", (code, value, data, csv) => {
    const r = one(code, value);
    expect(r.problems).toEqual([]);
    expect(r.options.map((o) => [o.code, o.value, o.data, o.csvFormat])).toEqual([[code, value, data, csv]]);
  });
});

describe("a value an option refuses is an error on the entry's value, and the option is not sent", () => {
  const mtu = "an MTU from 68 to 65535";
  const addresses = "comma-separated IPv4 addresses";
  const names = "comma-separated domain names";
  const routes = '"destination/prefix - router" pairs, comma-separated';
  test.each([
    [26, "67", mtu],
    [26, "65536", mtu],
    [26, "1e3", mtu],
    [26, "0x44", mtu],
    [26, "", mtu],
    [42, "", addresses],
    [42, " , ", addresses],
    [42, "192.0.2.1, ntp.example.com", addresses],
    [119, "", names],
    [119, "example.com, -bad.example.com", names],
    [121, "", routes],
    [121, "x10.0.0.0/8 - 192.0.2.1", routes],
    [121, "10.0.0.0/8 - 192.0.2.1x", routes],
    [121, "10.0.0.0/33 - 192.0.2.1", routes],
    [121, "300.0.0.0/8 - 192.0.2.1", routes],
    [121, "10.0.0.0/8 - 192.0.2", routes],
    [121, "10.0.0.0/8 - 192.0.2.1, 10.0.0.0/8", routes],
  ])("option %i %j: not %s", (code, value, reason) => {
    const r = one(code, value);
    expect(r.options).toEqual([]);
    expect(r.problems).toEqual([
      `${FIELD}[0].value InvalidSpec: ${JSON.stringify(value)} is not ${reason} (option ${String(code)}); the option is not sent`,
    ]);
  });
});
