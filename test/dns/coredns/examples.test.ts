// Real CoreDNS (test/peers/install.sh coredns) on the Corefile and zone files `oooi render` writes
// for every example, asked with real dig from a VLAN source and a pod-network source, over UDP
// and TCP: the seeds' Verification list, negative answers with their SOA, and forwarding of every
// name oooi does not publish — including other names under the cluster domain (issue 18).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressesOf, digBatch, type Query, type Reply } from "./batch.js";
import { EXAMPLES, renderExample, verificationList, type Expected } from "./examples.js";
import { clientIn, COREDNS, loopbackCidr, startCoreDns } from "./rig.js";
import { startUpstream, upstreamAddress, type Upstream } from "./upstream.js";

import { skipUnless, toolMissing } from "../../support/peers.js";

const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const POD_CLIENT = "127.0.0.1";

function expectReply(reply: Reply, expected: Expected, seen: ReadonlySet<string>, label: string): void {
  const got = { label, status: reply.status, a: addressesOf(reply) };
  if (expected.kind === "ours") {
    expect({ ...got, aa: reply.aa }).toEqual({ label, status: "NOERROR", a: [expected.address], aa: true });
  } else {
    // The upstream's answer, relayed. Not checked: AA — CoreDNS's cache plugin sets it on every reply
    // it serves from cache, forwarded ones included (the root block is shared by both views).
    expect(got).toEqual({ label, status: "NOERROR", a: [upstreamAddress(reply.query.name)] });
    expect(seen.has(reply.query.name), `${label}: the upstream was asked`).toBe(true);
  }
}

describe.skipIf(COREDNS.path === undefined || digMissing)("real CoreDNS on every example's rendered files", () => {
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it("covers every example", () => {
    expect(EXAMPLES).toEqual(
      expect.arrayContaining([
        "apps-ingress",
        "invalid-infra",
        "minimal",
        "no-internal-proxy",
        "shared-vlan",
        "standalone",
      ]),
    );
  });

  describe.each(EXAMPLES)("%s", (example) => {
    it("starts, and answers the Verification list from the VLAN and the pod network over UDP and TCP", async () => {
      const { state, servers } = await renderExample(example);
      expect(servers.length).toBeGreaterThan(0);
      for (const server of servers) {
        const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr });
        try {
          const list = verificationList(state, server);
          const queries: Query[] = list.map((e) => ({ name: e.name, type: "A" }));
          const vlanClient = clientIn(loopbackCidr(server.vlanCidr));
          for (const tcp of [false, true]) {
            const vlan = await digBatch(coredns, queries, { source: vlanClient, tcp });
            const pods = await digBatch(coredns, queries, { source: POD_CLIENT, tcp });
            const seen = new Set(upstream.seen.map((q) => q.name));
            list.forEach((e, i) => {
              const transport = tcp ? "tcp" : "udp";
              expectReply(vlan[i] ?? fail(e.name), e.vlan, seen, `${e.name} from the VLAN over ${transport}`);
              expectReply(pods[i] ?? fail(e.name), e.pods, seen, `${e.name} from the pod network over ${transport}`);
            });
          }
        } finally {
          await coredns.close();
        }
      }
    });
  });
});

function fail(name: string): never {
  throw new Error(`no reply for ${name}`);
}
