// The embedded responder against real dig: the seed's Verification section from a VLAN source and
// from a pod-network source, over UDP and TCP, plus the protocol details dig makes visible (aa,
// SOA in negative answers, EDNS, truncation and TCP fallback, forwarding, hot swap).

import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Packet } from "dns2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderCoreDns, zoneFileKey } from "../../../src/dns/render/index.js";
import { startDnsResponder, type DnsResponder } from "../../../src/dns/server/index.js";
import {
  addresses,
  APPS_VIP,
  dig,
  DOMAIN,
  FORWARDED_IP,
  INTERNAL_IP,
  OTHER_CLIENT,
  PROXY_IP,
  seedModel,
  startStandIn,
  VLAN_CLIENT,
  type StandIn,
} from "./helpers.js";
import { skipUnless, toolMissing } from "../../support/peers.js";

const HAVE_DIG = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) === undefined;
const UPSTREAM = "127.0.9.53";

let upstream: StandIn;
let responder: DnsResponder;
let server: { host: string; port: number };

beforeAll(async () => {
  upstream = await startStandIn(UPSTREAM);
  responder = await startDnsResponder(seedModel([UPSTREAM]), {
    host: "127.0.0.1",
    port: 0,
    upstreamPort: upstream.port,
    upstreamTimeoutMs: 1000,
    resolvConfPath: "/nonexistent/resolv.conf",
  });
  server = { host: "127.0.0.1", port: responder.address.udpPort };
});

afterAll(async () => {
  await responder.close();
  await upstream.close();
});

const views = [
  { view: "vlan", source: VLAN_CLIENT, proxy: PROXY_IP, apps: APPS_VIP },
  { view: "default", source: OTHER_CLIENT, proxy: INTERNAL_IP, apps: INTERNAL_IP },
] as const;

describe.skipIf(!HAVE_DIG)("seed verification with dig", () => {
  it("listens on one port for UDP and TCP", () => {
    expect(responder.address.tcpPort).toBe(responder.address.udpPort);
  });

  for (const transport of ["udp", "tcp"] as const) {
    for (const v of views) {
      describe(`${v.view} view over ${transport}`, () => {
        const q = (name: string, ...extra: string[]): ReturnType<typeof dig> =>
          dig(server, ["-b", v.source, ...(transport === "tcp" ? ["+tcp"] : []), ...extra, name]);

        it("answers api.<domain> authoritatively", async () => {
          const r = await q(`api.${DOMAIN}`);
          expect(r.status).toBe("NOERROR");
          expect(r.flags).toContain("aa");
          expect(addresses(r)).toEqual([v.proxy]);
        });

        it("answers the kubernetes.default.svc alias", async () => {
          const r = await q("kubernetes.default.svc");
          expect(r.flags).toContain("aa");
          expect(addresses(r)).toEqual([v.proxy]);
        });

        it("answers *.apps names from the wildcard", async () => {
          const r = await q(`console-openshift-console.apps.${DOMAIN}`);
          expect(r.flags).toContain("aa");
          expect(addresses(r)).toEqual([v.apps]);
          // The synthesized owner is the question name, not "*.apps".
          expect(r.answer[0]?.split(" ")[0]).toBe(`console-openshift-console.apps.${DOMAIN}.`);
        });

        it("forwards www.example.net upstream, not authoritatively", async () => {
          const r = await q("www.example.net");
          expect(r.status).toBe("NOERROR");
          expect(r.flags).not.toContain("aa");
          expect(addresses(r)).toEqual([FORWARDED_IP]);
        });

        it("gives NXDOMAIN with the zone's SOA in the authority section", async () => {
          const r = await q(`nothing-here.${DOMAIN}`);
          expect(r.status).toBe("NXDOMAIN");
          expect(r.flags).toContain("aa");
          expect(r.answer).toEqual([]);
          expect(r.authority).toEqual([
            `${DOMAIN}. 30 IN SOA ns.${DOMAIN}. hostmaster.${DOMAIN}. 1 7200 3600 1209600 30`,
          ]);
        });

        it("gives NODATA with the SOA for a type the name lacks", async () => {
          const r = await q(`api.${DOMAIN}`, "AAAA");
          expect(r.status).toBe("NOERROR");
          expect(r.flags).toContain("aa");
          expect(r.answer).toEqual([]);
          expect(r.authority[0]).toMatch(new RegExp(`^${DOMAIN.replace(/\./g, "\\.")}\\. 30 IN SOA `));
        });
      });
    }
  }
});

describe.skipIf(!HAVE_DIG)("zone semantics", () => {
  it("serves the SOA the CoreDNS zone file carries", async () => {
    const { files } = renderCoreDns(seedModel([UPSTREAM]));
    const zone = files[zoneFileKey("vlan", DOMAIN)] ?? "";
    const soa = /^@ IN SOA (\S+) (\S+) (.*)$/m.exec(zone);
    const r = await dig(server, ["-b", VLAN_CLIENT, DOMAIN, "SOA"]);
    expect(soa).not.toBeNull();
    expect(r.answer).toEqual([`${DOMAIN}. 30 IN SOA ${soa?.[1] ?? ""} ${soa?.[2] ?? ""} ${soa?.[3] ?? ""}`]);
  });

  it("answers NS at the apex with its glue", async () => {
    const r = await dig(server, ["-b", VLAN_CLIENT, DOMAIN, "NS"]);
    expect(r.answer).toEqual([`${DOMAIN}. 30 IN NS ns.${DOMAIN}.`]);
    expect(r.additional).toEqual([`ns.${DOMAIN}. 30 IN A 192.0.2.3`]);
  });

  it("treats the parent of a wildcard as an existing name (NODATA, not NXDOMAIN)", async () => {
    const r = await dig(server, ["-b", VLAN_CLIENT, `apps.${DOMAIN}`]);
    expect(r.status).toBe("NOERROR");
    expect(r.answer).toEqual([]);
    expect(r.authority).toHaveLength(1);
  });

  it("matches the wildcard below several labels and nowhere else", async () => {
    const deep = await dig(server, ["-b", VLAN_CLIENT, `a.b.apps.${DOMAIN}`]);
    expect(addresses(deep)).toEqual([APPS_VIP]);
    const beside = await dig(server, ["-b", VLAN_CLIENT, `x.api.${DOMAIN}`]);
    expect(beside.status).toBe("NXDOMAIN");
  });

  it("echoes the question's spelling and still matches case-insensitively", async () => {
    const name = `API.Example-HCP.clusters.EXAMPLE.com`;
    const r = await dig(server, ["-b", VLAN_CLIENT, name]);
    expect(addresses(r)).toEqual([PROXY_IP]);
    expect(r.raw).not.toMatch(/mismatch/i);
    expect(r.raw).toContain(`;${name}.`);
  });

  it("answers a default-view-only zone by forwarding for VLAN clients", async () => {
    // Zones absent from the VLAN view fall through to upstream: the stand-in knows nothing of them.
    const model = seedModel([UPSTREAM]);
    const vlanless = { ...model, views: [{ ...model.views[0], zones: [] }, model.views[1]] as const };
    responder.update(vlanless);
    try {
      const r = await dig(server, ["-b", VLAN_CLIENT, `api.${DOMAIN}`]);
      expect(r.flags).not.toContain("aa");
      expect(r.status).toBe("NXDOMAIN");
      const d = await dig(server, ["-b", OTHER_CLIENT, `api.${DOMAIN}`]);
      expect(addresses(d)).toEqual([INTERNAL_IP]);
    } finally {
      responder.update(seedModel([UPSTREAM]));
    }
  });
});

describe.skipIf(!HAVE_DIG)("EDNS and truncation", () => {
  const big = Array.from({ length: 40 }, (_, i) => ({ name: `big.${DOMAIN}`, address: `10.1.0.${i + 1}` }));

  beforeAll(() => {
    responder.update(seedModel([UPSTREAM], big));
  });
  afterAll(() => {
    responder.update(seedModel([UPSTREAM]));
  });

  it("puts an OPT record in the answer only when the query has one", async () => {
    const withEdns = await dig(server, ["-b", VLAN_CLIENT, "+bufsize=1400", `api.${DOMAIN}`]);
    expect(withEdns.ednsUdp).toBe(1232);
    const without = await dig(server, ["-b", VLAN_CLIENT, "+noedns", `api.${DOMAIN}`]);
    expect(without.ednsUdp).toBeUndefined();
    expect(addresses(without)).toEqual([PROXY_IP]);
  });

  it("answers BADVERS to EDNS versions other than 0", async () => {
    const r = await dig(server, ["-b", VLAN_CLIENT, "+edns=1", "+noednsnegotiation", `api.${DOMAIN}`]);
    expect(r.status).toBe("BADVERS");
  });

  it("sets TC when the answer exceeds 512 bytes without EDNS", async () => {
    const r = await dig(server, ["-b", VLAN_CLIENT, "+noedns", "+ignore", `big.${DOMAIN}`]);
    expect(r.flags).toContain("tc");
    expect(r.answer).toEqual([]);
  });

  it("lets dig fall back to TCP and get every record", async () => {
    const r = await dig(server, ["-b", VLAN_CLIENT, "+noedns", `big.${DOMAIN}`]);
    expect(r.raw).toContain("Truncated, retrying in TCP mode");
    expect(addresses(r)).toHaveLength(40);
  });

  it("honours the EDNS payload size over UDP", async () => {
    const large = await dig(server, ["-b", VLAN_CLIENT, "+bufsize=4096", "+ignore", `big.${DOMAIN}`]);
    expect(large.flags).not.toContain("tc");
    expect(addresses(large)).toHaveLength(40);
    const small = await dig(server, ["-b", VLAN_CLIENT, "+bufsize=512", "+ignore", `big.${DOMAIN}`]);
    expect(small.flags).toContain("tc");
    expect(small.ednsUdp).toBe(1232);
  });

  it("retries a truncated upstream answer over TCP", async () => {
    upstream.seen.length = 0;
    const r = await dig(server, ["-b", VLAN_CLIENT, "+bufsize=4096", "+ignore", "big.example.net"]);
    expect(r.flags).not.toContain("tc");
    expect(addresses(r)).toHaveLength(40);
    expect(upstream.seen.map((s) => s.transport)).toEqual(["udp", "tcp"]);
  });

  it("truncates a forwarded answer that exceeds the client's limit, then serves it over TCP", async () => {
    const r = await dig(server, ["-b", VLAN_CLIENT, "+noedns", "big.example.net"]);
    expect(r.raw).toContain("Truncated, retrying in TCP mode");
    expect(addresses(r)).toHaveLength(40);
  });
});

describe.skipIf(!HAVE_DIG)("forwarding", () => {
  it("uses a fresh random ID and source port upstream and restores the client's ID", async () => {
    upstream.seen.length = 0;
    const client = createSocket("udp4");
    await new Promise<void>((resolve) => client.bind(0, VLAN_CLIENT, resolve));
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const query = new Packet(new Packet.Header({ id: 4242, rd: 1 }));
      query.questions.push(new Packet.Question("www.example.net", Packet.TYPE.A, Packet.CLASS.IN));
      const reply = await new Promise<Buffer>((resolve) => {
        client.once("message", resolve);
        client.send(query.toBuffer(), server.port, server.host);
      });
      ids.push(reply.readUInt16BE(0));
      expect(Packet.parse(reply).answers[0]?.address).toBe(FORWARDED_IP);
    }
    client.close();
    expect(new Set(ids)).toEqual(new Set([4242]));
    const upstreamIds = upstream.seen.map((s) => s.id);
    const ports = upstream.seen.map((s) => s.port);
    expect(upstreamIds).toHaveLength(20);
    expect(new Set(upstreamIds).size).toBeGreaterThan(15);
    expect(new Set(ports).size).toBeGreaterThan(15);
  });

  it("answers SERVFAIL when the upstream is silent, before dig gives up", async () => {
    upstream.mode = "silent";
    try {
      for (const transport of [[], ["+tcp"]]) {
        const r = await dig(server, ["-b", VLAN_CLIENT, "+time=4", ...transport, "www.example.net"]);
        expect(r.status).toBe("SERVFAIL");
      }
    } finally {
      upstream.mode = "answer";
    }
  });

  it("moves on to the next upstream when one refuses connections", async () => {
    responder.update(seedModel(["127.0.9.99", UPSTREAM]));
    try {
      const r = await dig(server, ["-b", OTHER_CLIENT, "www.example.net"]);
      expect(addresses(r)).toEqual([FORWARDED_IP]);
    } finally {
      responder.update(seedModel([UPSTREAM]));
    }
  });

  it("forwards to the nameservers of resolv.conf when told to", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oooi-resolv-"));
    const path = join(dir, "resolv.conf");
    writeFileSync(path, `# test\nsearch example.org\nnameserver ${UPSTREAM}\noptions ndots:5\n`);
    const other = await startDnsResponder(seedModel("resolv.conf"), {
      host: "127.0.0.1",
      port: 0,
      upstreamPort: upstream.port,
      resolvConfPath: path,
    });
    try {
      const r = await dig({ host: "127.0.0.1", port: other.address.udpPort }, ["www.example.net"]);
      expect(addresses(r)).toEqual([FORWARDED_IP]);
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!HAVE_DIG)("hot swap", () => {
  it("serves new records and a bumped serial after update(), and refuses without a model", async () => {
    responder.update(seedModel([UPSTREAM], [], "192.0.2.44"));
    try {
      for (const tcp of [[], ["+tcp"]]) {
        const r = await dig(server, ["-b", VLAN_CLIENT, ...tcp, `api.${DOMAIN}`]);
        expect(addresses(r)).toEqual(["192.0.2.44"]);
      }
      const soa = await dig(server, ["-b", VLAN_CLIENT, DOMAIN, "SOA"]);
      const serial = Number(soa.answer[0]?.split(" ")[6]);
      expect(serial).toBeGreaterThan(1);
      // The default view's zone did not change, so its serial did not move.
      const other = await dig(server, ["-b", OTHER_CLIENT, DOMAIN, "SOA"]);
      expect(other.answer[0]?.split(" ")[6]).toBe("1");
      responder.update(undefined);
      const refused = await dig(server, ["-b", VLAN_CLIENT, `api.${DOMAIN}`]);
      expect(refused.status).toBe("REFUSED");
    } finally {
      responder.update(seedModel([UPSTREAM]));
    }
    const back = await dig(server, ["-b", VLAN_CLIENT, `api.${DOMAIN}`]);
    expect(addresses(back)).toEqual([PROXY_IP]);
  });
});

describe.skipIf(!HAVE_DIG)("dual-stack listener", () => {
  it("normalizes IPv4-mapped client addresses before choosing the view", async () => {
    const v6 = await startDnsResponder(seedModel([UPSTREAM]), { host: "::", port: 0, upstreamPort: upstream.port });
    try {
      const at = { host: "127.0.0.1", port: v6.address.udpPort };
      for (const tcp of [[], ["+tcp"]]) {
        const vlan = await dig(at, ["-b", VLAN_CLIENT, ...tcp, `api.${DOMAIN}`]);
        expect(addresses(vlan)).toEqual([PROXY_IP]);
        const other = await dig(at, ["-b", OTHER_CLIENT, ...tcp, `api.${DOMAIN}`]);
        expect(addresses(other)).toEqual([INTERNAL_IP]);
      }
    } finally {
      await v6.close();
    }
  });
});
