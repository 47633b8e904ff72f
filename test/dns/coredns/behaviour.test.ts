// What real CoreDNS does with the rendered files beyond positive answers: negative answers carry
// the zone's SOA (RFC 2308), a changed zone file is served once its SOA serial moved (the file
// plugin keeps the loaded zone otherwise), and a changed Corefile is served through the reload
// plugin — both without a restart, as a ConfigMap volume update reaches a running pod.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterState } from "../../../src/model/types.js";
import { addressesOf, digBatch, type Reply } from "./batch.js";
import { loadExample } from "./examples.js";
import { renderState, withAppsVip, type RenderedDnsServer } from "./render-state.js";
import { clientIn, COREDNS, loopbackCidr, startCoreDns, type CoreDns } from "./rig.js";
import { startUpstream, upstreamAddress, type Upstream } from "./upstream.js";

import { skipUnless, toolMissing } from "../../support/peers.js";

const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const POD_CLIENT = "127.0.0.1";
const DOMAIN = "example-hcp.clusters.example.com";
// Well above the rendered reload intervals (5 s for zones and the Corefile) on a loaded machine.
const CHANGE_TIMEOUT_MS = 40_000;

function only(servers: readonly RenderedDnsServer[]): RenderedDnsServer {
  const [server] = servers;
  if (server === undefined || servers.length !== 1) throw new Error(`expected one DNSServer, got ${servers.length}`);
  return server;
}

async function ask(coredns: CoreDns, source: string, name: string, type = "A"): Promise<Reply> {
  const [reply] = await digBatch(coredns, [{ name, type }], { source });
  if (reply === undefined) throw new Error(`no reply for ${name}`);
  return reply;
}

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + CHANGE_TIMEOUT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${CHANGE_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function soaSerial(reply: Reply): number {
  return Number(reply.answer.find((l) => l.split(" ")[3] === "soa")?.split(" ")[6]);
}

describe.skipIf(COREDNS.path === undefined || digMissing)("real CoreDNS: negative answers and live changes", () => {
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it("answers NXDOMAIN below a published name and NODATA for a missing type, with the zone's SOA, over UDP and TCP", async () => {
    const server = only(renderState(await loadExample("apps-ingress")).servers);
    const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr });
    try {
      const vlan = clientIn(loopbackCidr(server.vlanCidr));
      const queries = [
        { name: `x.api.${DOMAIN}`, type: "A", rcode: "NXDOMAIN", zone: `api.${DOMAIN}` },
        { name: `api.${DOMAIN}`, type: "AAAA", rcode: "NOERROR", zone: `api.${DOMAIN}` },
        { name: `console.apps.${DOMAIN}`, type: "TXT", rcode: "NOERROR", zone: `apps.${DOMAIN}` },
        { name: `apps.${DOMAIN}`, type: "A", rcode: "NOERROR", zone: `apps.${DOMAIN}` },
      ];
      for (const source of [vlan, POD_CLIENT]) {
        for (const tcp of [false, true]) {
          const replies = await digBatch(coredns, queries, { source, tcp });
          replies.forEach((r, i) => {
            const q = queries[i];
            const soa = r.authority.filter((l) => l.split(" ")[3] === "soa").map((l) => l.split(" ")[0]);
            expect({ q: q?.name, type: q?.type, status: r.status, aa: r.aa, answer: r.answer, soa }).toEqual({
              q: q?.name,
              type: q?.type,
              status: q?.rcode,
              aa: true,
              answer: [],
              soa: [`${q?.zone ?? ""}.`],
            });
          });
        }
      }
    } finally {
      await coredns.close();
    }
  });

  // A cache in front of the file plugin kept a changed record (a new apps VIP) stale for its TTL after the
  // zone's reload: authoritative answers come from the zone in memory, so their TTL never counts down.
  it("answers authoritative names from the zone, not from a cache: the TTL stays the zone's", async () => {
    const server = only(renderState(await loadExample("apps-ingress")).servers);
    const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr });
    try {
      const vlan = clientIn(loopbackCidr(server.vlanCidr));
      const ttlOf = async (name: string): Promise<number> =>
        Number((await ask(coredns, vlan, name)).answer[0]?.split(/\s+/)[1]);
      const name = `api.${DOMAIN}`;
      const first = await ttlOf(name);
      // Long enough for a cached answer's TTL to have counted down by at least one second.
      await new Promise((r) => setTimeout(r, 2_100));
      expect([first, await ttlOf(name)]).toEqual([30, 30]);
    } finally {
      await coredns.close();
    }
  });

  it("serves a changed zone once its serial moved, without a restart", async () => {
    const state = await loadExample("apps-ingress");
    const first = renderState(state);
    const server = only(first.servers);
    const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr });
    try {
      const vlan = clientIn(loopbackCidr(server.vlanCidr));
      const name = `console-openshift-console.apps.${DOMAIN}`;
      expect(addressesOf(await ask(coredns, vlan, name))).toEqual(["192.0.2.200"]);
      const before = soaSerial(await ask(coredns, vlan, `apps.${DOMAIN}`, "SOA"));

      const second = only(renderState(withAppsVip(state, "192.0.2.201"), first).servers);
      expect(second.files["Corefile"]).toBe(server.files["Corefile"]);
      coredns.write(second.files);
      await eventually(
        "the new apps VIP",
        async () => addressesOf(await ask(coredns, vlan, name)).join() === "192.0.2.201",
      );
      expect(soaSerial(await ask(coredns, vlan, `apps.${DOMAIN}`, "SOA"))).toBe(before + 1);
      // The other zones did not change, so their serials did not move.
      expect(soaSerial(await ask(coredns, vlan, `api.${DOMAIN}`, "SOA"))).toBe(1);
    } finally {
      await coredns.close();
    }
  });

  it("serves a new hosted cluster's zones after a Corefile change, through the reload plugin", async () => {
    const state = await loadExample("shared-vlan");
    const without = renderState(withoutAttachment(state, "gamma"));
    const server = only(without.servers);
    const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr, withoutCache: true });
    try {
      const vlan = clientIn(loopbackCidr(server.vlanCidr));
      const name = "api.gamma.clusters.example.com";
      for (const source of [vlan, POD_CLIENT]) {
        const r = await ask(coredns, source, name);
        expect({ aa: r.aa, a: addressesOf(r) }).toEqual({ aa: false, a: [upstreamAddress(name)] });
      }
      const withGamma = only(renderState(state, without).servers);
      expect(withGamma.files["Corefile"]).not.toBe(server.files["Corefile"]);
      coredns.write(withGamma.files);
      await eventually("gamma's zones", async () => (await ask(coredns, vlan, name)).aa);
      const fromVlan = await ask(coredns, vlan, name);
      const fromPods = await ask(coredns, POD_CLIENT, name);
      expect([addressesOf(fromVlan), addressesOf(fromPods), fromPods.aa]).toEqual([
        ["192.0.2.4"],
        ["172.30.200.10"],
        true,
      ]);
    } finally {
      await coredns.close();
    }
  });
});

function withoutAttachment(state: ClusterState, name: string): ClusterState {
  return { ...state, attachments: state.attachments.filter((a) => a.metadata.name !== name) };
}
