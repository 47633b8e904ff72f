// Objects in, model out: backends (docs/reference.md#backends), DNS views (docs/reference.md#dns), DHCP (docs/reference.md#dhcp).
import { describe, expect, it } from "vitest";
import { build } from "../../src/model/build.js";
import type { ClusterState, Topology, Upstream } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, NS, vmi } from "../support/fixtures.js";

function only(s: ClusterState): Topology {
  const r = build(s);
  expect(r.topologies).toHaveLength(1);
  return r.topologies[0] as Topology;
}

const appsReady = { appsIngressStatus: { phase: "Ready" as const, externalIP: "192.0.2.200" } };

describe("backends per attachment", () => {
  it("generate every row of the table with its port, match and target", () => {
    const t = only(
      combine(
        {
          infras: [infra()],
          attachments: [attachment("one", { spec: { appsIngress: { enabled: true } }, status: appsReady })],
        },
        hostedCluster("one", 1, ["192.0.2.10", "192.0.2.11"]),
      ),
    );
    const rows = t.proxy?.backends.map((b) => [
      b.kind,
      b.port,
      b.serverNames.join(","),
      b.sourcePrefixRanges.join(","),
      b.upstream,
    ]);
    const cp = `${NS}-one`;
    expect(rows).toEqual([
      ["apps-http", 80, "*.apps.one.example.com", "", "vip/192.0.2.200:80"],
      ["apps-https", 443, "*.apps.one.example.com", "", "vip/192.0.2.200:443"],
      ["ignition-server", 443, "ignition.one.example.com", "", `${cp}/ignition-server-proxy:443`],
      ["konnectivity-server", 443, "konnectivity.one.example.com", "", `${cp}/konnectivity-server:8091`],
      ["kube-apiserver", 6443, "api.one.example.com", "", `${cp}/kube-apiserver:6443`],
      ["kube-apiserver-internal", 6443, "api-int.one.example.com", "", `${cp}/kube-apiserver:6443`],
      [
        "kubernetes-hostname",
        443,
        "kubernetes,kubernetes.default,kubernetes.default.svc,kubernetes.default.svc.cluster.local,kubernetes.one.example.com",
        "192.0.2.10/31",
        `${cp}/kube-apiserver:6443`,
      ],
      ["kubernetes-service", 6443, "", "192.0.2.10/31", `${cp}/kube-apiserver:6443`],
      ["oauth-openshift", 443, "oauth.one.example.com", "", `${cp}/oauth-openshift:6443`],
    ]);
    const endpoints = (u: Upstream): string =>
      u.kind === "dns" ? `dns ${u.hostname}:${u.port}` : u.endpoints.map((e) => `${e.address}:${e.port}`).join();
    expect(t.proxy?.upstreams.map((u) => [u.name, endpoints(u)])).toEqual([
      [`${cp}/ignition-server-proxy:443`, "10.96.1.3:443"],
      [`${cp}/konnectivity-server:8091`, "10.96.1.4:8091"],
      [`${cp}/kube-apiserver:6443`, "10.96.1.1:6443"],
      [`${cp}/oauth-openshift:6443`, "10.96.1.2:6443"],
      ["vip/192.0.2.200:443", "192.0.2.200:443"],
      ["vip/192.0.2.200:80", "192.0.2.200:80"],
    ]);
  });

  it("omit the source-matched routes while no worker address is known", () => {
    const t = only(combine({ infras: [infra()], attachments: [attachment("one")] }, hostedCluster("one", 1, [])));
    expect(t.proxy?.backends.map((b) => b.kind)).not.toContain("kubernetes-service");
    expect(t.proxy?.backends.map((b) => b.kind)).not.toContain("kubernetes-hostname");
  });

  it("aggregate any number of worker /32s into the minimal exact cover (no cap at 256)", () => {
    const workers = Array.from({ length: 600 }, (_, i) => `192.0.${2 + Math.floor((i + 16) / 256)}.${(i + 16) % 256}`);
    const t = only(
      combine(
        {
          infras: [
            infra("big", {
              networkConfig: { cidr: "192.0.0.0/21", gateway: "192.0.0.1" },
              infraComponents: {
                dhcp: { serverIP: "192.0.0.2", rangeStart: "192.0.1.0", rangeEnd: "192.0.1.200" },
                dns: { serverIP: "192.0.0.3" },
                proxy: { serverIP: "192.0.0.4" },
              },
            }),
          ],
          attachments: [attachment("one", { infra: "big" })],
        },
        hostedCluster("one", 1, workers),
      ),
    );
    const ranges = t.proxy?.backends.find((b) => b.kind === "kubernetes-service")?.sourcePrefixRanges;
    // 192.0.2.16 .. 192.0.4.103 = 600 addresses
    expect(ranges).toEqual([
      "192.0.2.16/28",
      "192.0.2.32/27",
      "192.0.2.64/26",
      "192.0.2.128/25",
      "192.0.3.0/24",
      "192.0.4.0/26",
      "192.0.4.64/27",
      "192.0.4.96/29",
    ]);
    expect(t.attachments[0]?.workerAddresses).toHaveLength(600);
  });
});

describe("DNS views", () => {
  const three = () =>
    combine(
      {
        infras: [infra()],
        attachments: [
          attachment("one", { spec: { appsIngress: { enabled: true } }, status: appsReady }),
          attachment("two"),
        ],
      },
      hostedCluster("one", 1, ["192.0.2.10"]),
      hostedCluster("two", 2, []),
    );

  it("VLAN view answers with the proxy's VLAN address and the apps VIP", () => {
    const [vlan] = only(three()).dns?.views ?? [];
    expect(vlan?.sourceCidr).toBe("192.0.2.0/24");
    // One zone per published name, none for the domain itself: other names under it are forwarded.
    expect(vlan?.zones.map((z) => [z.origin, z.records.map((r) => `${r.name}=${r.address}`).join(" ")])).toEqual([
      ["api-int.one.example.com", "api-int.one.example.com=192.0.2.4"],
      ["api-int.two.example.com", "api-int.two.example.com=192.0.2.4"],
      ["api.one.example.com", "api.one.example.com=192.0.2.4"],
      ["api.two.example.com", "api.two.example.com=192.0.2.4"],
      ["apps.one.example.com", "*.apps.one.example.com=192.0.2.200"],
      ["ignition.one.example.com", "ignition.one.example.com=192.0.2.4"],
      ["ignition.two.example.com", "ignition.two.example.com=192.0.2.4"],
      ["konnectivity.one.example.com", "konnectivity.one.example.com=192.0.2.4"],
      ["konnectivity.two.example.com", "konnectivity.two.example.com=192.0.2.4"],
      ["kubernetes", "kubernetes=192.0.2.4"],
      ["kubernetes.default", "kubernetes.default=192.0.2.4"],
      ["kubernetes.default.svc", "kubernetes.default.svc=192.0.2.4"],
      ["kubernetes.default.svc.cluster.local", "kubernetes.default.svc.cluster.local=192.0.2.4"],
      ["oauth.one.example.com", "oauth.one.example.com=192.0.2.4"],
      ["oauth.two.example.com", "oauth.two.example.com=192.0.2.4"],
    ]);
  });

  it("default view answers with the internal proxy address only", () => {
    const [, pods] = only(three()).dns?.views ?? [];
    const addresses = new Set(pods?.zones.flatMap((z) => z.records.map((r) => r.address)));
    expect([...addresses]).toEqual(["10.96.0.44"]);
    expect(pods?.zones.find((z) => z.origin === "apps.one.example.com")?.records.map((r) => r.name)).toContain(
      "*.apps.one.example.com",
    );
  });

  it("default view is empty when internalProxyService is unset", () => {
    const s = three();
    const t = only({
      ...s,
      infras: [
        infra("vlan100", { infraComponents: { proxy: { internalProxyService: undefined as unknown as string } } }),
      ],
    });
    expect(t.dns?.views[1].zones).toEqual([]);
    expect(t.dns?.views[0].zones.length).toBeGreaterThan(0);
  });

  it("resolves internalProxyService through the watched Service", () => {
    const s = three();
    const t = only({
      ...s,
      infras: [
        infra("vlan100", {
          infraComponents: { proxy: { internalProxyService: "hcp-proxy.proxies.svc.cluster.local" } },
        }),
      ],
      services: [
        ...s.services,
        {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "hcp-proxy", namespace: "proxies" },
          spec: { clusterIP: "10.96.7.7" },
        },
      ],
    });
    expect(new Set(t.dns?.views[1].zones.flatMap((z) => z.records.map((r) => r.address)))).toEqual(
      new Set(["10.96.7.7"]),
    );
  });

  it("upstreams: every listed resolver, or resolv.conf", () => {
    expect(only(three()).dns?.upstreams).toEqual(["198.51.100.53"]);
    const t = only(combine({ infras: [infra("x", { networkConfig: { dnsServers: ["resolv.conf"] } })] }));
    expect(t.dns?.upstreams).toBe("resolv.conf");
  });
});

describe("DHCP", () => {
  const base = (vmis: ReturnType<typeof vmi>[]) => combine({ infras: [infra()], vmis });

  it("subnet mask from the CIDR, routers, every DNS server, lease time", () => {
    const t = only(
      combine({
        infras: [
          infra("x", {
            networkConfig: {
              cidr: "10.20.0.0/22",
              gateway: "10.20.0.1",
              dnsServers: ["198.51.100.53", "198.51.100.54"],
            },
            infraComponents: {
              dhcp: { serverIP: "10.20.0.2", rangeStart: "10.20.1.0", rangeEnd: "10.20.1.255", leaseTime: "1h30m" },
              dns: { enabled: false },
              proxy: { serverIP: "10.20.0.4" },
            },
          }),
        ],
      }),
    );
    expect(t.dhcp).toMatchObject({
      subnet: "10.20.0.0/22",
      netmask: "255.255.252.0",
      routers: "10.20.0.1",
      dnsServers: ["198.51.100.53", "198.51.100.54"],
      validLifetimeSeconds: 5400,
      pool: { start: "10.20.1.0", end: "10.20.1.255" },
    });
  });

  it("advertises the DNS server when DNS is enabled", () => {
    expect(only(base([])).dhcp?.dnsServers).toEqual(["192.0.2.3"]);
  });

  // Issue 10: new addresses come from the pool rangeStart-rangeEnd (the original leases workers
  // from it); this test used to expect one outside the pool.
  it("reserves the address a VMI already holds, and a stable free one inside the pool otherwise", () => {
    const vms = [
      vmi(`${NS}-one`, "w1", "02:00:00:00:00:01", "192.0.2.10"),
      vmi(`${NS}-one`, "w2", "02:00:00:00:00:02"),
    ];
    const first = only(base(vms)).dhcp?.reservations ?? [];
    expect(first.find((r) => r.hostname === "w1")?.ipAddress).toBe("192.0.2.10");
    const w2 = first.find((r) => r.hostname === "w2")?.ipAddress ?? "";
    const last = Number(w2.split(".")[3]);
    expect(last >= 100 && last <= 199).toBe(true);
    expect([1, 2, 3, 4, 10]).not.toContain(last);
    // Same state → same address; and once w2 reports it, it keeps it even as others appear.
    expect(only(base(vms)).dhcp?.reservations).toEqual(first);
    const later = [
      vmi(`${NS}-one`, "w0", "02:00:00:00:00:00"),
      vmi(`${NS}-one`, "w1", "02:00:00:00:00:01", "192.0.2.10"),
      vmi(`${NS}-one`, "w2", "02:00:00:00:00:02", w2),
    ];
    expect(only(base(later)).dhcp?.reservations.find((r) => r.hostname === "w2")?.ipAddress).toBe(w2);
  });

  it("ignores interfaces on other networks", () => {
    expect(
      only(base([vmi(NS, "other", "02:00:00:00:00:09", undefined, { nad: "other/net" })])).dhcp?.reservations,
    ).toEqual([]);
  });

  it("the older VMI keeps a contested address; the newer one is moved", () => {
    const vms = [
      vmi(NS, "new", "02:00:00:00:00:0b", "192.0.2.20", { created: "2026-01-02T00:00:00Z" }),
      vmi(NS, "old", "02:00:00:00:00:0a", "192.0.2.20", { created: "2026-01-01T00:00:00Z" }),
    ];
    const r = only(base(vms)).dhcp?.reservations ?? [];
    expect(r.find((x) => x.hostname === "old")?.ipAddress).toBe("192.0.2.20");
    expect(r.find((x) => x.hostname === "new")?.ipAddress).not.toBe("192.0.2.20");
  });
});
