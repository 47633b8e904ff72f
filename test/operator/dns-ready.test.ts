// dnsReady from a real CoreDNS behind the DNS Service: the operator (on the fake API server) asks
// the CoreDNS its Service leads to — here a loopback CoreDNS (test/dns/coredns/rig.ts), as no
// kube-proxy routes a ClusterIP on a test host. A CoreDNS that has not loaded the operator's
// ConfigMap keeps dnsReady False, with the reason in the Ready message; once it has, True.
import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/api/schema.js";
import { renderCoreDns } from "../../src/dns/render/index.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { model } from "../dns/fixtures.js";
import { COREDNS, startCoreDns, type CoreDns } from "../dns/coredns/rig.js";
import { startUpstream } from "../dns/coredns/upstream.js";
import { markDeploymentsAvailable, readyOf, seededFake, startOperator, stored } from "./support.js";

let fake: FakeApiServer | undefined;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await fake?.stop();
  fake = undefined;
});

const infraStatus = (f: FakeApiServer) => stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");

describe.skipIf(COREDNS.path === undefined)("dnsReady asks CoreDNS", () => {
  it("False while CoreDNS serves another configuration; True once it loaded the operator's ConfigMap", async () => {
    const upstream = await startUpstream();
    closers.push(() => upstream.close());
    // What CoreDNS runs before the ConfigMap volume caught up: some other rendering.
    const other = renderCoreDns(model({ domains: ["other.example.com"], internal: "172.30.12.34" })).files;
    const coredns: CoreDns = await startCoreDns(other, { upstream: { host: upstream.host, port: upstream.port } });
    closers.push(() => coredns.close());

    fake = await seededFake();
    const f = fake;
    const seen: string[] = [];
    const { op } = startOperator(f, {
      dnsProbe: {
        intervalMs: 200,
        target: (service) => {
          seen.push(`${service.metadata?.namespace ?? ""}/${service.metadata?.name ?? ""}`);
          return { host: coredns.host, port: coredns.port };
        },
      },
    });
    await op.ready;
    await eventually(() => {
      markDeploymentsAvailable(f);
      const infra = infraStatus(f);
      expect(infra?.["status"]).toMatchObject({ componentStatus: { proxyReady: true, dnsReady: false } });
      expect(readyOf(infra)?.["message"]).toMatch(/dns: CoreDNS at 127\.0\.0\.1:\d+ (serves zone|does not answer)/);
    }, 15_000);
    expect(seen).toContain("clusters/tenant-vlan-dns");

    // The volume updates: CoreDNS reloads the Corefile and zones on its reload tick.
    const cm = stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns");
    coredns.write((cm?.["data"] ?? {}) as Record<string, string>);
    await eventually(() => {
      markDeploymentsAvailable(f);
      const infra = infraStatus(f);
      expect(infra?.["status"]).toMatchObject({ componentStatus: { dnsReady: true } });
      expect(readyOf(infra)).toMatchObject({ status: "True" });
    }, 30_000);
  }, 60_000);
});
