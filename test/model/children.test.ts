// The child objects an Infra's model makes (DHCPServer, DNSServer, ProxyServer): each carries the
// Infra's settings as docs/reference.md#children lists them — optional images only when set, the
// upstream resolvers or resolv.conf, and per backend its names, target and connect timeout.
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import type { Topology } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

function only(spec: Parameters<typeof infra>[1] = {}): Topology {
  const r = build(
    combine(
      { infras: [infra("vlan100", spec)], attachments: [attachment("alpha")] },
      hostedCluster("alpha", 1, ["192.0.2.10"]),
    ),
  );
  const t = r.topologies[0];
  if (t === undefined) throw new Error(JSON.stringify(r.problems));
  return t;
}

describe("child objects", () => {
  it("images only when the Infra sets them", () => {
    const plain = only();
    expect(plain.children.dhcp?.spec).not.toHaveProperty("image");
    expect(plain.children.dns?.spec).not.toHaveProperty("image");
    expect(plain.children.proxy?.spec).not.toHaveProperty("proxyImage");
    expect(plain.children.proxy?.spec).not.toHaveProperty("managerImage");
    const set = only({
      infraComponents: {
        dhcp: { image: "reg/kea:1" },
        dns: { image: "reg/coredns:1" },
        proxy: { proxyImage: "reg/envoy:1", managerImage: "reg/oooi:1" },
      },
    });
    expect(set.children.dhcp?.spec.image).toBe("reg/kea:1");
    expect(set.children.dns?.spec.image).toBe("reg/coredns:1");
    expect(set.children.proxy?.spec.proxyImage).toBe("reg/envoy:1");
    expect(set.children.proxy?.spec.managerImage).toBe("reg/oooi:1");
  });

  it("upstreamDNS: the resolvers given, or resolv.conf", () => {
    expect(only().children.dns?.spec.upstreamDNS).toEqual(["198.51.100.53"]);
    expect(only({ networkConfig: { dnsServers: ["resolv.conf"] } }).children.dns?.spec.upstreamDNS).toEqual([
      "resolv.conf",
    ]);
  });

  it("each backend names its target Service, namespace and port, hostname first, and the connect timeout", () => {
    const backends = only().children.proxy?.spec.backends ?? [];
    const api = backends.find((b) => b.name.endsWith("/kube-apiserver"));
    expect(api).toMatchObject({ port: 6443, targetPort: 6443, timeoutSeconds: 30 });
    expect(typeof api?.hostname).toBe("string");
    expect(typeof api?.targetNamespace).toBe("string");
    for (const b of backends) {
      expect(b.targetService, b.name).not.toBe("");
      expect(b.timeoutSeconds, b.name).toBe(30);
    }
    // A backend matched without SNI (the kubernetes Service's) has no hostname key at all.
    const nameless = backends.filter((b) => b.hostname === undefined);
    expect(nameless.length).toBeGreaterThan(0);
    for (const b of nameless) expect(Object.keys(b), b.name).not.toContain("hostname");
  });
});
