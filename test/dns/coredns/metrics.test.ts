// Real CoreDNS (test/peers/install.sh coredns) on every example's rendered files, asked with real dig
// from a VLAN source and a pod-network source over UDP and TCP, then scraped on the rendered
// `prometheus` endpoint: coredns_dns_requests_total counts each query once, under the `view` label
// of the block that answered it — the VLAN view's name for a VLAN client asking a published name,
// "" for the pod network's blocks and for the root block both views forward through
// (coredns.io/plugins/metrics, coredns.io/plugins/view). deploy/monitoring's "DNS queries by view"
// panel sums exactly this.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digBatch, type Query } from "./batch.js";
import { EXAMPLES, renderExample, verificationList } from "./examples.js";
import { POD_CLIENT, scrapeCoreDns, vlanClient } from "./metrics.js";
import { COREDNS, loopbackCidr, startCoreDns } from "./rig.js";
import { startUpstream, type Upstream } from "./upstream.js";
import { sumBy } from "../../monitoring/exposition.js";
import { skipUnless, toolMissing } from "../../support/peers.js";

const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const REQUESTS = "coredns_dns_requests_total";
/** Not published by any example: the root block forwards it, whoever asks. */
const FORWARDED = "www.example.net";

/**
 * `after - before` per key of `sum by (view, proto)` over the A queries (the test asks only A); keys
 * with no change left out. The loop plugin's own probe (an HINFO query CoreDNS sends itself once
 * it serves) can land after `before` on a loaded machine, so other types are not counted.
 */
function delta(before: string, after: string): Record<string, number> {
  const was = sumBy(onlyA(before), REQUESTS, ["view", "proto"]);
  const out: Record<string, number> = {};
  for (const [key, value] of sumBy(onlyA(after), REQUESTS, ["view", "proto"])) {
    const d = value - (was.get(key) ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/** The exposition with only the A query series of REQUESTS (and every other metric as it was). */
function onlyA(exposition: string): string {
  return exposition
    .split("\n")
    .filter((line) => !line.startsWith(`${REQUESTS}{`) || line.includes('type="A"'))
    .join("\n");
}

describe.skipIf(COREDNS.path === undefined || digMissing)("real CoreDNS's query counts per view", () => {
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it.each(EXAMPLES)("%s: each view's queries under its own view label, over UDP and TCP", async (example) => {
    const { state, servers } = await renderExample(example);
    expect(servers.length).toBeGreaterThan(0);
    for (const server of servers) {
      const vlanView = /^\s+view (\S+) \{$/m.exec(server.files["Corefile"] ?? "")?.[1];
      expect(vlanView, `${server.name}: a view block`).toBeDefined();
      // Names the VLAN view publishes: a VLAN client's query lands in a view block; the same name
      // from the pod network lands in an unfiltered block (the default view's zone, or its forwarder).
      const published = verificationList(state, server)
        .filter((e) => e.vlan.kind === "ours")
        .map((e): Query => ({ name: e.name, type: "A" }));
      expect(published.length, `${server.name}: names the VLAN view publishes`).toBeGreaterThan(0);
      const queries = [...published, { name: FORWARDED, type: "A" }];
      const coredns = await startCoreDns(server.files, { upstream, cidr: loopbackCidr });
      try {
        // A delta, so whatever CoreDNS asked itself at start (the loop plugin's probe) is not counted.
        const before = await scrapeCoreDns(coredns);
        for (const tcp of [false, true]) {
          await digBatch(coredns, queries, { source: vlanClient(server), tcp });
          await digBatch(coredns, queries, { source: POD_CLIENT, tcp });
        }
        const n = published.length;
        expect(delta(before, await scrapeCoreDns(coredns))).toEqual({
          [`${vlanView}/udp`]: n,
          [`${vlanView}/tcp`]: n,
          // From the pod network: every query; from the VLAN: the forwarded name, through the root block.
          "/udp": n + 2,
          "/tcp": n + 2,
        });
      } finally {
        await coredns.close();
      }
    }
  });
});
