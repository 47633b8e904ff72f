// renderCoreDns continuing from its own rendering writes again only the origins whose zones came or
// went (by identity). Differential: every step's files must be the files of a rendering from
// scratch that continues from the same texts (a copy of them, which the renderer does not know as
// its own), key order included. Sequences of models share most Zone objects from one step to the
// next, as src/model/dns.ts keeps an unchanged attachment's.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderCoreDns } from "../../src/dns/render/index.js";
import type { DnsModel, Zone } from "../../src/model/types.js";

const origin = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      "example.com",
      "api.example.com",
      "apps.example.com",
      "x.apps.example.com",
      "kubernetes",
      "kubernetes.default",
      "API.Example.com.",
    ),
    weight: 4,
  },
  { arbitrary: fc.stringMatching(/^[a-z][a-z0-9]{0,3}\.(com|org)$/), weight: 3 },
  // Unusable origins: left out by the renderer, on either path.
  { arbitrary: fc.constantFrom("bad..name", "-x.com", ""), weight: 1 },
);
const address = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 40 }).map((n) => `192.0.2.${String(n)}`), weight: 6 },
  { arbitrary: fc.constantFrom(" 10.0.0.1 ", "999.1.1.1", "10.0.0.01"), weight: 1 },
);
const zone: fc.Arbitrary<Zone> = fc
  .tuple(
    origin,
    fc.array(fc.tuple(fc.constantFrom("@", "api", "*.apps", "ns", "a.b", "*.x.y"), address), { maxLength: 4 }),
  )
  .map(([o, rs]) => ({ origin: o, records: rs.map(([l, a]) => ({ name: l === "@" ? o : `${l}.${o}`, address: a })) }));

/** One step: per view, which zones stay (by position), which come, whether to sort; sometimes a new shape. */
const step = fc.record({
  keep: fc.tuple(fc.array(fc.boolean(), { maxLength: 60 }), fc.array(fc.boolean(), { maxLength: 60 })),
  add: fc.tuple(fc.array(zone, { maxLength: 12 }), fc.array(zone, { maxLength: 12 })),
  sorted: fc.boolean(),
  shape: fc.option(
    fc.record({
      cacheSeconds: fc.constantFrom(0, 30, 60),
      upstreams: fc.constantFrom("resolv.conf" as const, ["198.51.100.53"]),
      cidr: fc.constantFrom("192.0.2.0/24", "192.0.2.0/25", "not-a-cidr"),
      defaultView: fc.boolean(),
    }),
    { freq: 6 },
  ),
});

type Shape = { cacheSeconds: number; upstreams: DnsModel["upstreams"]; cidr: string; defaultView: boolean };

function modelOf(zones: readonly [readonly Zone[], readonly Zone[]], s: Shape): DnsModel {
  return {
    name: "ns/dns",
    serverIP: "192.0.2.3",
    views: [
      { name: "vlan", sourceCidr: s.cidr, zones: zones[0] },
      // Renamed to an invalid view name, the default view is not written at all.
      { name: s.defaultView ? "default" : ("Default!" as "default"), sourceCidr: undefined, zones: zones[1] },
    ],
    upstreams: s.upstreams,
    cacheSeconds: s.cacheSeconds,
    reloadSeconds: 5,
  };
}

const byOrigin = (a: Zone, b: Zone): number => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0);

describe("renderCoreDns continuing from its own rendering", () => {
  it("writes what a rendering from scratch writes, from the same texts", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        let zones: [readonly Zone[], readonly Zone[]] = [[], []];
        let shape: Shape = { cacheSeconds: 30, upstreams: "resolv.conf", cidr: "192.0.2.0/24", defaultView: true };
        let files: Readonly<Record<string, string>> | undefined;
        for (const s of steps) {
          const next = ([0, 1] as const).map((v) => {
            const kept = zones[v].filter((_, i) => s.keep[v][i] ?? true);
            const all = [...kept, ...s.add[v]];
            return s.sorted ? all.sort(byOrigin) : all;
          });
          zones = [next[0] ?? [], next[1] ?? []];
          if (s.shape !== null) shape = s.shape;
          const model = modelOf(zones, shape);
          const previous = files;
          const incremental = renderCoreDns(model, previous === undefined ? {} : { previous }).files;
          const copy = previous === undefined ? {} : { previous: { ...previous } };
          const fresh = renderCoreDns(model, copy).files;
          expect(Object.keys(incremental)).toEqual(Object.keys(fresh));
          expect(incremental).toEqual(fresh);
          // The same model with every Zone a new object: every origin written again, the same files.
          const cloned = renderCoreDns(structuredClone(model), previous === undefined ? {} : { previous }).files;
          expect(cloned).toEqual(fresh);
          files = incremental;
        }
      }),
      { numRuns: 300 },
    );
  });

  it("patches long lists of origins and zone files by a few changes at a time", () => {
    // Few changes against hundreds of origins: the sorted keys are patched in place, not sorted again.
    const few = fc.record({
      remove: fc.array(fc.nat(), { maxLength: 3 }),
      add: fc.array(zone, { maxLength: 3 }),
      view: fc.constantFrom(0, 1),
    });
    fc.assert(
      fc.property(
        fc.array(zone, { minLength: 100, maxLength: 400 }),
        fc.array(few, { minLength: 1, maxLength: 6 }),
        (start, steps) => {
          const shape: Shape = { cacheSeconds: 30, upstreams: "resolv.conf", cidr: "192.0.2.0/24", defaultView: true };
          let zones: [readonly Zone[], readonly Zone[]] = [start, start.slice(0, 50)];
          let files = renderCoreDns(modelOf(zones, shape)).files;
          for (const s of steps) {
            const gone = new Set(s.remove.map((i) => i % Math.max(1, zones[s.view].length)));
            const next = [...zones[s.view].filter((_, i) => !gone.has(i)), ...s.add];
            zones = s.view === 0 ? [next, zones[1]] : [zones[0], next];
            const model = modelOf(zones, shape);
            const incremental = renderCoreDns(model, { previous: files }).files;
            const fresh = renderCoreDns(model, { previous: { ...files } }).files;
            expect(Object.keys(incremental)).toEqual(Object.keys(fresh));
            expect(incremental).toEqual(fresh);
            files = incremental;
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("keeps every unchanged zone file's text, the same string, when one zone changes", () => {
    const zones: Zone[] = Array.from({ length: 200 }, (_, i) => ({
      origin: `c${String(i)}.example.com`,
      records: [{ name: `c${String(i)}.example.com`, address: "192.0.2.10" }],
    }));
    const shape: Shape = { cacheSeconds: 30, upstreams: "resolv.conf", cidr: "192.0.2.0/24", defaultView: true };
    const first = renderCoreDns(modelOf([zones, zones], shape)).files;
    const changed = zones.map((z, i) =>
      i === 7 ? { origin: z.origin, records: [{ name: z.origin, address: "192.0.2.11" }] } : z,
    );
    const second = renderCoreDns(modelOf([changed, zones], shape), { previous: first }).files;
    const differing = Object.keys(second).filter((k) => second[k] !== first[k]);
    expect(differing).toEqual(["db.vlan.c7.example.com"]);
    expect(second["db.vlan.c7.example.com"]).toMatch(/ 2 7200 3600 /);
    expect(second["Corefile"]).toBe(first["Corefile"]);
  });
});
