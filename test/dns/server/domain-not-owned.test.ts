// Issue 18 item 2: oooi answers only the names it publishes, not the whole cluster domain. The
// embedded responder on examples/shared-vlan (rendered through the real pipeline), asked with real
// dig from the VLAN and from the pod network: api.D is ours, foo.D and D itself go upstream, so a
// record the user publishes elsewhere under D keeps resolving (the original: "All other names are
// forwarded"). Real CoreDNS is held to the same in test/dns/coredns/examples.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsResponder, type DnsResponder } from "../../../src/dns/server/index.js";

import { addressesOf, digBatch } from "../coredns/batch.js";
import { renderExample } from "../coredns/examples.js";
import { clientIn, modelOnLoopback } from "../coredns/rig.js";
import { startUpstream, upstreamAddress, type Upstream } from "../coredns/upstream.js";
import { skipUnless, toolMissing } from "../../support/peers.js";

const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const DOMAIN = "alpha.clusters.example.com";

describe.skipIf(digMissing)("the embedded responder does not own the cluster domain", () => {
  let upstream: Upstream;
  let responder: DnsResponder;
  let vlanClient: string;
  beforeAll(async () => {
    upstream = await startUpstream();
    const { servers } = await renderExample("shared-vlan");
    const model = servers[0]?.topology.dns;
    if (model === undefined) throw new Error("shared-vlan renders no DNSServer");
    const loopback = modelOnLoopback(model);
    vlanClient = clientIn(loopback.views[0].sourceCidr ?? "");
    responder = await startDnsResponder(loopback, { host: "127.0.0.1", port: 0, upstreamPort: upstream.port });
  });
  afterAll(async () => {
    await responder.close();
    await upstream.close();
  });

  it.each([
    ["the VLAN", () => vlanClient],
    ["the pod network", () => "127.0.0.1"],
  ])("from %s: api.D answered, foo.D and D forwarded", async (_view, source) => {
    const server = { host: "127.0.0.1", port: responder.address.udpPort };
    const names = [`api.${DOMAIN}`, `foo.${DOMAIN}`, DOMAIN, `foo.bar.${DOMAIN}`];
    const replies = await digBatch(
      server,
      names.map((name) => ({ name, type: "A" })),
      { source: source() },
    );
    const fromVlan = source() === vlanClient;
    expect(replies.map((r) => [r.query.name, r.status, r.aa, addressesOf(r)])).toEqual([
      [`api.${DOMAIN}`, "NOERROR", true, [fromVlan ? "192.0.2.4" : "172.30.200.10"]],
      ...names.slice(1).map((n) => [n, "NOERROR", false, [upstreamAddress(n)]]),
    ]);
    for (const n of names.slice(1)) expect(upstream.seen.map((q) => q.name)).toContain(n);
  });
});
