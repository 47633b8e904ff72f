// fast-check generators of DnsModels shaped like the model's output.
import fc from "fast-check";
import { cidrContains, formatCidr, formatIPv4, parseCidr } from "../../src/model/ipv4.js";
import type { ARecord, DnsModel, Zone } from "../../src/model/types.js";

const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/);
const domain = fc.array(label, { minLength: 2, maxLength: 4 }).map((ls) => ls.join("."));
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const vlanCidr = fc
  .tuple(u32, fc.integer({ min: 8, max: 30 }))
  .map(([addr, prefix]) => formatCidr({ network: (addr & (0xffffffff << (32 - prefix))) >>> 0, prefix }));

/** Addresses inside `cidr`, as the model would publish them for the VLAN view. */
function inside(cidr: string): fc.Arbitrary<string> {
  const c = parseCidr(cidr);
  if (c === undefined) throw new Error(cidr);
  return fc.integer({ min: c.first, max: c.last }).map(formatIPv4);
}

function zones(origins: string[], address: fc.Arbitrary<string>): fc.Arbitrary<Zone[]> {
  return fc.tuple(
    ...origins.map((o) =>
      fc
        .array(fc.tuple(fc.constantFrom("@", "api", "api-int", "oauth", "*.apps", "x.y"), address), { maxLength: 6 })
        .map((rs): Zone => ({
          origin: o,
          records: rs.map(([l, a]): ARecord => ({ name: l === "@" ? o : `${l}.${o}`, address: a })),
        })),
    ),
  );
}

/** A model whose default view is empty or holds only addresses outside the VLAN. */
export const isolatedModel: fc.Arbitrary<DnsModel> = fc
  .tuple(vlanCidr, fc.uniqueArray(domain, { minLength: 1, maxLength: 4 }), fc.boolean())
  .chain(([cidr, origins, withDefault]) => {
    const c = parseCidr(cidr);
    const outside = u32.filter((n) => c === undefined || !cidrContains(c, n)).map(formatIPv4);
    return fc
      .record({
        vlan: zones(origins, inside(cidr)),
        def: withDefault ? zones(origins.slice(0, 2), outside) : fc.constant([]),
        serverIP: inside(cidr),
        upstreams: fc.oneof(fc.constant("resolv.conf" as const), fc.array(u32.map(formatIPv4), { maxLength: 3 })),
      })
      .map((g): DnsModel => ({
        name: "ns/dns",
        serverIP: g.serverIP,
        views: [
          { name: "vlan", sourceCidr: cidr, zones: g.vlan },
          { name: "default", sourceCidr: undefined, zones: g.def },
        ],
        upstreams: g.upstreams,
        cacheSeconds: 30,
        reloadSeconds: 5,
      }));
  });

// Origins that nest inside one another, as per-name zones do when one cluster domain lies below
// another's published name (api.<d> holding x.api.<d>'s zone), next to unrelated random ones.
const nestingOrigin = fc.constantFrom(
  "example.com",
  "api.example.com",
  "apps.example.com",
  "x.apps.example.com",
  "y.x.apps.example.com",
  "kubernetes",
  "kubernetes.default",
);

/** Any model: nesting and random origins in both views, addresses anywhere, VLAN /9 to /30. */
export const anyModel: fc.Arbitrary<DnsModel> = fc
  .tuple(
    vlanCidr.filter((c) => !c.endsWith("/8")),
    fc.uniqueArray(fc.oneof({ arbitrary: nestingOrigin, weight: 4 }, { arbitrary: domain, weight: 1 }), {
      minLength: 2,
      maxLength: 6,
    }),
  )
  .chain(([cidr, origins]) =>
    fc
      .record({
        vlan: fc.subarray(origins).chain((os) => zones(os, u32.map(formatIPv4))),
        def: fc.subarray(origins).chain((os) => zones(os, u32.map(formatIPv4))),
        serverIP: inside(cidr),
      })
      .map((g): DnsModel => ({
        name: "ns/dns",
        serverIP: g.serverIP,
        views: [
          { name: "vlan", sourceCidr: cidr, zones: g.vlan },
          { name: "default", sourceCidr: undefined, zones: g.def },
        ],
        upstreams: ["127.0.0.1"],
        cacheSeconds: 30,
        reloadSeconds: 5,
      })),
  );
