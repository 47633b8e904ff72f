// The answer table against a direct reading of RFC 1034 §4.3.2 and RFC 4592, written here without
// the table's wire-name walk: random nested zones in two views, wildcards, random names and client
// addresses at the edges of the VLAN view's range. Answers are read back with dns2's codec.
import { Packet } from "dns2";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Forwarder } from "../../../src/dns/server/forward.js";
import { QueryHandler } from "../../../src/dns/server/handler.js";
import { buildServing } from "../../../src/dns/server/serving.js";
import type { DnsModel, DnsView } from "../../../src/model/types.js";
import { encodeQuery } from "./helpers.js";

type Zone = DnsView["zones"][number];

const ORIGINS = ["ex", "a.ex", "b.a.ex", "other"] as const;
const LABELS = ["a", "b", "c"] as const;
// The VLAN view is 10.0.0.0/24: probes sit on and beside both ends of the range.
const FIRST = (10 << 24) >>> 0;
const LAST = FIRST + 255;
const PROBES = [FIRST - 1, FIRST, FIRST + 7, LAST, LAST + 1, undefined] as const;

const above = (name: string, origin: string): boolean => name === origin || name.endsWith(`.${origin}`);
const parent = (name: string): string => name.slice(name.indexOf(".") + 1);

/** A reply reduced to what the RFCs decide: rcode, answers, and the owner/type of the other sections. */
interface Reply {
  readonly rcode: number;
  readonly answers: readonly string[];
  readonly authority: readonly string[];
  readonly additional: readonly string[];
}

const A = 1;
const NS = 2;
const SOA = 6;
const TXT = 16;

/**
 * The expected reply to (name, type) from a client of views[viewIndex], read from the zones of both
 * views; each zone also holds its SOA and one NS (`ns.<origin>`, with glue) at its apex. As CoreDNS's
 * file plugin answers: a positive answer carries the apex NS as authority (an NS answer carries the
 * glue instead); NODATA and NXDOMAIN carry the SOA.
 */
function oracle(views: readonly DnsView[], viewIndex: number, name: string, type: number): Reply | "forwarded" {
  const origins = views.flatMap((v) => v.zones.map((z) => z.origin));
  const deepest = (n: string): string | undefined =>
    origins.filter((o) => above(n, o)).sort((x, y) => y.length - x.length)[0];
  const origin = deepest(name);
  if (origin === undefined) return "forwarded";
  const zone = views[viewIndex]?.zones.find((z) => z.origin === origin);
  if (zone === undefined) return "forwarded";
  // The zone's own names: owners it serves (not below a deeper apex) and their ancestors up to the apex.
  const owners = zone.records.filter((r) => deepest(r.name) === origin);
  const existing = new Set<string>([origin]);
  for (const r of owners) for (let n = r.name; n !== origin; n = parent(n)) existing.add(n);
  const negative = (rcode: number): Reply => ({ rcode, answers: [], authority: [`SOA ${origin}`], additional: [] });
  const answer = (owner: string): Reply => {
    if (type === NS && owner === origin)
      return { rcode: 0, answers: [`NS ns.${origin}`], authority: [], additional: [`A ns.${origin}`] };
    if (type === SOA && owner === origin)
      return { rcode: 0, answers: [`SOA ${origin}`], authority: [`NS ${origin}`], additional: [] };
    const addresses = type === A ? owners.filter((r) => r.name === owner).map((r) => `A ${r.address}`) : [];
    if (addresses.length === 0) return negative(0);
    return { rcode: 0, answers: addresses.sort(), authority: [`NS ${origin}`], additional: [] };
  };
  if (existing.has(name)) return answer(name);
  let encloser = parent(name);
  while (!existing.has(encloser)) encloser = parent(encloser);
  const source = `*.${encloser}`;
  // A wildcard owns only A records here: its NS or SOA is NODATA, never the apex's.
  if (!owners.some((r) => r.name === source)) return negative(3);
  return type === A ? answer(source) : negative(0);
}

function reduce(p: Packet): Reply {
  const show = (r: { type: number; name: string; address?: string; ns?: string }, answer: boolean): string => {
    if (r.type === A) return answer ? `A ${r.address ?? ""}` : `A ${r.name}`;
    if (r.type === NS) return answer ? `NS ${r.ns ?? ""}` : `NS ${r.name}`;
    return `${r.type === SOA ? "SOA" : String(r.type)} ${r.name}`;
  };
  return {
    rcode: p.header.rcode,
    answers: p.answers.map((r) => show(r, true)).sort(),
    authority: p.authorities.map((r) => show(r, false)),
    additional: p.additionals.map((r) => show(r, false)),
  };
}

const nameBelow = (origin: string): fc.Arbitrary<string> =>
  fc
    .tuple(fc.array(fc.constantFrom(...LABELS), { maxLength: 2 }), fc.boolean())
    .map(([labels, wild]) => [...(wild ? ["*"] : []), ...labels, origin].join("."));

const zoneArb = (origin: string, net: number): fc.Arbitrary<Zone> =>
  fc.array(nameBelow(origin), { maxLength: 6 }).map((names) => ({
    origin,
    records: names.map((name, i) => ({ name, address: `10.${net}.${ORIGINS.indexOf(origin as never)}.${i + 1}` })),
  }));

const viewZones = (net: number): fc.Arbitrary<Zone[]> =>
  fc
    .subarray([...ORIGINS], { minLength: 1 })
    .chain((origins) => fc.tuple(...origins.map((o) => zoneArb(o, net))))
    .map((zones) => [...zones]);

const queryName: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(fc.constantFrom(...LABELS, "*", "z"), { maxLength: 3 }),
    fc.constantFrom(...ORIGINS, "ex.", "nowhere"),
  )
  .map(([labels, origin]) => [...labels, origin.replace(/\.$/, "")].join("."));

function handlerFor(views: readonly [DnsView, DnsView]): QueryHandler {
  const model: DnsModel = {
    name: "t/dns",
    serverIP: "10.0.0.3",
    views,
    upstreams: [],
    cacheSeconds: 30,
    reloadSeconds: 5,
  };
  const handler = new QueryHandler(new Forwarder([], { timeoutMs: 10, maxInFlight: 1 }), () => undefined);
  handler.table = buildServing(model, undefined, { resolvConf: [], port: 53, self: [] }).table;
  return handler;
}

async function ask(h: QueryHandler, name: string, type: number, ip: number | undefined): Promise<Packet> {
  const result = h.handle(encodeQuery({ id: 9, rd: true, name, type, qclass: 1, edns: undefined }), ip, 4096);
  const reply = result instanceof Promise ? await result : result;
  if (reply === undefined) throw new Error(`no reply for ${name}`);
  return Packet.parse(reply);
}

describe("answer table against RFC 1034 §4.3.2 / RFC 4592", () => {
  it("answers every name and type as the RFC reading does, from the view the client's address selects", async () => {
    const seen = { wildcard: 0, nxdomain: 0, nodata: 0, exact: 0, forwarded: 0, vlan: 0, pods: 0 };
    await fc.assert(
      fc.asyncProperty(
        viewZones(1),
        viewZones(2),
        fc.array(fc.tuple(queryName, fc.constantFrom(A, A, NS, SOA, TXT)), { minLength: 1, maxLength: 12 }),
        async (vlan, pods, queries) => {
          const views: [DnsView, DnsView] = [
            { name: "vlan", sourceCidr: "10.0.0.0/24", zones: vlan },
            { name: "default", sourceCidr: undefined, zones: pods },
          ];
          const h = handlerFor(views);
          for (const [name, type] of queries)
            for (const ip of PROBES) {
              const inVlan = ip !== undefined && ip >= FIRST && ip <= LAST;
              const view = views[inVlan ? 0 : 1];
              const expected = oracle(views, inVlan ? 0 : 1, name, type);
              const got = await ask(h, name, type, ip);
              seen[inVlan ? "vlan" : "pods"]++;
              const query = `${name} type ${String(type)} from ${ip === undefined ? "IPv6" : String(ip)}`;
              if (expected === "forwarded") {
                seen.forwarded++;
                // No upstream configured: a forwarded query fails, and never claims authority.
                expect([query, got.header.rcode, got.header.aa]).toEqual([query, 2, 0]);
                continue;
              }
              if (expected.rcode === 3) seen.nxdomain++;
              else if (expected.answers.length === 0) seen.nodata++;
              else if (view.zones.some((z) => z.records.some((r) => r.name === name)) || type !== A) seen.exact++;
              else seen.wildcard++;
              expect([query, got.header.aa, reduce(got)]).toEqual([query, 1, expected]);
              // A synthesized answer's owner is the question's name (RFC 4592 §2.2.2), never `*.…`.
              for (const a of got.answers) expect([query, a.name]).toEqual([query, name]);
            }
        },
      ),
      { numRuns: 150 },
    );
    // Each situation the table distinguishes was reached often enough to mean something.
    for (const [situation, count] of Object.entries(seen)) expect([situation, count > 50]).toEqual([situation, true]);
  });
});
