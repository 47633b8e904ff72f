// Zone semantics of the answer table that dig cannot reach easily: nested zones, a zone only one
// view holds, the rendered files read back, and answers checked with dns2's independent codec.
import { Packet } from "dns2";
import { describe, expect, it } from "vitest";
import { COREFILE_KEY, renderCoreDns } from "../../../src/dns/render/index.js";
import { Forwarder } from "../../../src/dns/server/forward.js";
import { QueryHandler } from "../../../src/dns/server/handler.js";
import { readRendered } from "../../../src/dns/server/rendered.js";
import { buildServing } from "../../../src/dns/server/serving.js";
import { buildTable } from "../../../src/dns/server/table.js";
import { parseIPv4 } from "../../../src/model/ipv4.js";
import type { DnsModel } from "../../../src/model/types.js";
import { encodeQuery } from "./helpers.js";

const VLAN_IP = parseIPv4("10.0.0.9");

const nested: DnsModel = {
  name: "t/dns",
  serverIP: "10.0.0.3",
  views: [
    {
      name: "vlan",
      sourceCidr: "10.0.0.0/24",
      zones: [
        // The parent holds a name below the child's apex: CoreDNS never serves it (the child's block wins).
        {
          origin: "a.example",
          records: [
            { name: "api.a.example", address: "10.0.0.4" },
            { name: "x.b.a.example", address: "10.0.0.66" },
          ],
        },
        { origin: "b.a.example", records: [{ name: "api.b.a.example", address: "10.0.0.5" }] },
      ],
    },
    {
      name: "default",
      sourceCidr: undefined,
      zones: [{ origin: "pods.example", records: [{ name: "api.pods.example", address: "172.30.0.1" }] }],
    },
  ],
  upstreams: ["192.0.2.53"],
  cacheSeconds: 30,
  reloadSeconds: 5,
};

function handlerFor(model: DnsModel): QueryHandler {
  const handler = new QueryHandler(new Forwarder([], { timeoutMs: 10, maxInFlight: 1 }), () => undefined);
  handler.table = buildServing(model, undefined, { resolvConf: [], port: 53, self: [] }).table;
  return handler;
}

async function ask(h: QueryHandler, name: string, type: number, ip: number | undefined): Promise<Packet> {
  const result = h.handle(encodeQuery({ id: 7, rd: true, name, type, qclass: 1, edns: undefined }), ip, 512);
  const reply = result instanceof Promise ? await result : result;
  if (reply === undefined) throw new Error("dropped");
  return Packet.parse(reply);
}

describe("reading the rendered CoreDNS files", () => {
  it("yields the filtered view first with its CIDR, then the default view, and the root's forwarders", () => {
    const rendered = readRendered(renderCoreDns(nested, { mountDir: "/" }).files, COREFILE_KEY);
    expect(rendered.forwardTo).toEqual(["192.0.2.53"]);
    expect(rendered.views.map((v) => v.name)).toEqual(["vlan", "default"]);
    expect(rendered.views[0]?.cidr?.prefix).toBe(24);
    const vlanZones = rendered.views[0]?.zones;
    // The VLAN view forwards the default-only zone rather than serving its records.
    expect(vlanZones?.get("pods.example")).toBe("forward");
    // …and the renderer closes every VLAN-only zone with an unfiltered forwarding block.
    expect(rendered.views[1]?.zones.get("a.example")).toBe("forward");
  });
});

describe("answer table", () => {
  const h = handlerFor(nested);

  it("answers from the most specific zone and hides parent records below a child apex", async () => {
    expect((await ask(h, "api.a.example", 1, VLAN_IP)).answers[0]?.address).toBe("10.0.0.4");
    expect((await ask(h, "api.b.a.example", 1, VLAN_IP)).answers[0]?.address).toBe("10.0.0.5");
    const hidden = await ask(h, "x.b.a.example", 1, VLAN_IP);
    expect(hidden.header.rcode).toBe(3);
    expect(hidden.authorities[0]?.name).toBe("b.a.example");
  });

  it("gives the child apex NODATA-free answers in its own zone and NXDOMAIN beside it", async () => {
    const soa = await ask(h, "b.a.example", 6, VLAN_IP);
    expect(soa.header.aa).toBe(1);
    expect(soa.answers[0]?.type).toBe(6);
    expect((await ask(h, "nope.a.example", 1, VLAN_IP)).header.rcode).toBe(3);
  });

  it("forwards (SERVFAIL without upstream) what the client's view does not hold", async () => {
    const fromVlan = await ask(h, "api.pods.example", 1, VLAN_IP);
    expect(fromVlan.header.rcode).toBe(2);
    expect(fromVlan.header.aa).toBe(0);
    const fromPods = await ask(h, "api.pods.example", 1, parseIPv4("172.16.0.9"));
    expect(fromPods.answers[0]?.address).toBe("172.30.0.1");
    // The VLAN zones are invisible from the pod network.
    expect((await ask(h, "api.a.example", 1, undefined)).header.rcode).toBe(2);
  });

  // CoreDNS's file plugin has no ANY RRset and answers NODATA (differential.test.ts holds us to it).
  it("answers ANY with NODATA and refuses zone transfers and other classes", async () => {
    const any = await ask(h, "a.example", 255, VLAN_IP);
    expect([any.header.rcode, any.answers.length, any.authorities.map((a) => a.type)]).toEqual([0, 0, [6]]);
    expect((await ask(h, "a.example", 252, VLAN_IP)).header.rcode).toBe(5);
    const chaos = h.handle(
      encodeQuery({ id: 1, rd: false, name: "version.bind", type: 16, qclass: 3, edns: undefined }),
      VLAN_IP,
      512,
    );
    expect(chaos instanceof Buffer ? (chaos[3] ?? 0) & 0x0f : -1).toBe(5);
  });

  it("refuses everything without a model", async () => {
    const empty = new QueryHandler(new Forwarder([], { timeoutMs: 10, maxInFlight: 1 }), () => undefined);
    expect((await ask(empty, "api.a.example", 1, VLAN_IP)).header.rcode).toBe(5);
  });
});

// oooi renders a zone's $TTL equal to its SOA MINIMUM; a file read back may say otherwise, and the
// negative answer's TTL is then the lesser of the two (RFC 2308 §3), as CoreDNS answers it.
describe("negative answers of a zone whose SOA TTL and MINIMUM differ", () => {
  const zoneFile = (ttl: number, minimum: number): string =>
    `$ORIGIN z.example.\n$TTL ${ttl}\n@ IN SOA ns.z.example. admin.z.example. 7 7200 1800 86400 ${minimum}\n` +
    `@ IN NS ns.z.example.\nns IN A 10.0.0.3\napi IN A 10.0.0.4\n`;
  const handlerOf = (ttl: number, minimum: number): QueryHandler => {
    const h = new QueryHandler(new Forwarder([], { timeoutMs: 10, maxInFlight: 1 }), () => undefined);
    const corefile = "z.example:53 {\n    file /db.z.example z.example\n}\n";
    h.table = buildTable(readRendered({ Corefile: corefile, "db.z.example": zoneFile(ttl, minimum) }, "Corefile"));
    return h;
  };

  it.each([
    [3600, 30, 30],
    [20, 60, 20],
  ])("$TTL %i with MINIMUM %i: NXDOMAIN and NODATA carry the SOA with TTL %i", async (ttl, minimum, expected) => {
    const h = handlerOf(ttl, minimum);
    const nx = await ask(h, "nope.z.example", 1, VLAN_IP);
    const nodata = await ask(h, "api.z.example", 16, VLAN_IP);
    expect([nx.header.rcode, nx.authorities[0]?.type, nx.authorities[0]?.ttl]).toEqual([3, 6, expected]);
    expect([nodata.header.rcode, nodata.answers.length, nodata.authorities[0]?.ttl]).toEqual([0, 0, expected]);
    // A positive answer keeps the record's own TTL.
    expect((await ask(h, "api.z.example", 1, VLAN_IP)).answers[0]?.ttl).toBe(ttl);
  });
});
