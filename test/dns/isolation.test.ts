// Properties over generated models: pods never see VLAN addresses through the rendering, the
// structure rules always hold, and no input makes the renderer throw.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_VIEW_NS_ADDRESS, defaultViewNsAddress, renderCoreDns } from "../../src/dns/render/index.js";
import { cidrContains, parseCidr, parseIPv4 } from "../../src/model/ipv4.js";
import { isolatedModel } from "./arbitraries.js";
import { invariantsHold } from "./invariants.js";

describe("isolation", () => {
  it("never writes a VLAN address into a default-view zone file", () => {
    fc.assert(
      fc.property(isolatedModel, (m) => {
        const cidr = parseCidr(m.views[0].sourceCidr ?? "");
        const files = renderCoreDns(m).files;
        for (const [key, text] of Object.entries(files)) {
          if (!key.startsWith("db.default.")) continue;
          for (const ip of text.match(/\b\d{1,3}(?:\.\d{1,3}){3}\b/g) ?? []) {
            const n = parseIPv4(ip);
            expect(n !== undefined && cidr !== undefined && cidrContains(cidr, n), `${key}: ${ip}`).toBe(false);
          }
        }
        const defaultZones = m.views[1].zones.length;
        expect(Object.keys(files).filter((k) => k.startsWith("db.default."))).toHaveLength(defaultZones);
      }),
      { seed: 2051377487, numRuns: 200 },
    );
  });

  it("keeps the glue out of a VLAN that is itself on loopback", () => {
    expect(defaultViewNsAddress(["127.0.0.0/8"])).toBe("192.0.0.8");
    expect(defaultViewNsAddress(["127.0.8.0/24"])).toBe(DEFAULT_VIEW_NS_ADDRESS);
  });

  it("uses loopback, never a VLAN address, for the default view's NS glue", () => {
    const c = parseCidr("192.0.2.0/24");
    const n = parseIPv4(DEFAULT_VIEW_NS_ADDRESS);
    expect(c !== undefined && n !== undefined && cidrContains(c, n)).toBe(false);
  });

  it("keeps the Corefile rules for any model", () => {
    fc.assert(
      fc.property(isolatedModel, (m) => {
        invariantsHold(renderCoreDns(m).files);
      }),
      { seed: 17 },
    );
  });

  it("never throws on arbitrary strings and numbers", () => {
    const text = fc.string({ maxLength: 20 });
    const anyZone = fc.record({
      origin: text,
      records: fc.array(fc.record({ name: text, address: text }), { maxLength: 3 }),
    });
    const anyModel = fc.record({
      name: text,
      serverIP: text,
      views: fc.tuple(
        fc.record({
          name: fc.constant("vlan" as const),
          sourceCidr: fc.option(text, { nil: undefined }),
          zones: fc.array(anyZone, { maxLength: 3 }),
        }),
        fc.record({
          name: fc.constant("default" as const),
          sourceCidr: fc.constant(undefined),
          zones: fc.array(anyZone, { maxLength: 3 }),
        }),
      ),
      upstreams: fc.oneof(fc.constant("resolv.conf" as const), fc.array(text, { maxLength: 3 })),
      cacheSeconds: fc.double(),
      reloadSeconds: fc.double(),
    });
    fc.assert(
      fc.property(anyModel, fc.dictionary(text, text), text, (m, previous, mountDir) => {
        invariantsHold(renderCoreDns(m, { previous }).files);
        expect(() => renderCoreDns(m, { previous, mountDir })).not.toThrow();
      }),
      { seed: 23 },
    );
  });
});
