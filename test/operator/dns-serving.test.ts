// dnsReady means CoreDNS serves the current zones: the probe asks a real CoreDNS (test/dns/coredns/rig.ts)
// for each pod-network zone's SOA and compares the serial with the current rendering's. A CoreDNS
// still on the previous zone files is not serving; once it reloaded them (its reload tick), it is.
import { afterEach, describe, expect, it } from "vitest";
import { renderCoreDns } from "../../src/dns/render/index.js";
import { checkSoa, DnsServingProbe, dnsServingView, expectedSoa } from "../../src/operator/status/dns-serving.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { model } from "../dns/fixtures.js";
import { COREDNS, startCoreDns, type CoreDns } from "../dns/coredns/rig.js";
import { startUpstream, type Upstream } from "../dns/coredns/upstream.js";
import { ManualClock } from "../support/manual-clock.js";

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const DOMAIN = "example-hcp.clusters.example.com";
const v1 = renderCoreDns(model({ domains: [DOMAIN], internal: "172.30.12.34" })).files;
// The internal address moved: every pod-network zone changes, so its serial moves.
const v2 = renderCoreDns(model({ domains: [DOMAIN], internal: "172.30.12.99" }), { previous: v1 }).files;

describe("expectedSoa", () => {
  it("takes the unfiltered blocks' zone files only, with the serial each carries", () => {
    const zones = expectedSoa(v2);
    expect(zones.length).toBeGreaterThan(0);
    expect(zones.every((z) => z.zone.endsWith(DOMAIN) && z.serial === 2)).toBe(true);
    expect(expectedSoa(v1).every((z) => z.serial === 1)).toBe(true);
    // The VLAN view's zones are not answered to the operator's (pod-network) address.
    const vlanOnly = Object.keys(v2).filter((k) => k.startsWith("db.vlan.")).length;
    expect(vlanOnly).toBeGreaterThan(0);
    expect(zones.length).toBe(Object.keys(v2).filter((k) => k.startsWith("db.default.")).length);
  });

  it("no Corefile, a zone file missing or without a serial: that zone is not expected", () => {
    expect(expectedSoa({})).toEqual([]);
    const key = Object.keys(v2).find((k) => k.startsWith("db.default.")) ?? "";
    const rest = expectedSoa(v2).length;
    expect(expectedSoa({ ...v2, [key]: "garbage" })).toHaveLength(rest - 1);
  });
});

describe.skipIf(COREDNS.path === undefined)("with real CoreDNS", () => {
  let upstream: Upstream;
  let coredns: CoreDns;

  async function start(): Promise<void> {
    upstream = await startUpstream();
    closers.push(() => upstream.close());
    // As rendered: zone blocks carry no cache, so the new SOA is answered once the file plugin reloads.
    coredns = await startCoreDns(v1, { upstream: { host: upstream.host, port: upstream.port } });
    closers.push(() => coredns.close());
  }

  it("checkSoa: the old zones are not the current ones; a server that does not answer is named", async () => {
    await start();
    const target = { host: coredns.host, port: coredns.port };
    expect(await checkSoa(target, expectedSoa(v1), 2_000)).toBeUndefined();
    expect(await checkSoa(target, expectedSoa(v2), 2_000)).toMatch(
      /serves zone \S+ at serial 1, not the current 2 yet/,
    );
    const silent = await checkSoa({ host: "127.0.0.1", port: upstream.port + 1 }, expectedSoa(v2), 300);
    expect(silent).toMatch(/does not answer for zone/);
  });

  it("probe: not serving while CoreDNS has not loaded the new zones, serving once it has", async () => {
    await start();
    const clock = new ManualClock();
    const probe = new DnsServingProbe({ clock, intervalMs: 3_000, timeoutMs: 2_000 });
    closers.push(() => {
      probe.stop();
    });
    let changes = 0;
    probe.subscribe(() => {
      changes++;
      // The count a reconcile pass compares, moved with every announced change.
      expect(probe.answers).toBe(changes);
    });
    const target = { host: coredns.host, port: coredns.port };
    const key = "clusters/infra-dns";
    expect(probe.why(key, target, expectedSoa(v2))).toMatch(/has not been asked yet/);
    await eventually(() => {
      expect(probe.why(key, target, expectedSoa(v2))).toMatch(/at serial 1, not the current 2 yet/);
    });
    // Not serving: the next probe waits for the interval, on the injected clock.
    expect(clock.pending).toBe(1);
    const afterFirst = changes;
    clock.advance(3_000);
    await eventually(() => {
      expect(clock.pending).toBe(1);
    });
    expect(changes).toBe(afterFirst); // the same answer notifies nobody
    expect(probe.answers, "the same answer: the same count").toBe(afterFirst);

    // The ConfigMap volume updates; CoreDNS loads the files on its reload tick (5 s).
    coredns.write(v2);
    await eventually(async () => {
      clock.advance(3_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(probe.why(key, target, expectedSoa(v2))).toBeUndefined();
    }, 20_000);
    expect(changes).toBe(afterFirst + 1);
    expect(dnsServingView(probe).epoch?.(), "the view's epoch: the probe's count").toBe(changes);
    // Serving: no more probes until the expectation moves.
    expect(clock.pending).toBe(0);
  }, 40_000);
});
