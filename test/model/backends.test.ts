// The proxy's backends per attachment (src/model/backends.ts) beyond the row table of
// topology.test.ts: the kept part of an unchanged attachment must equal a fresh derivation whenever
// any input it reads changes, Services in every shape, and the apps ingress messages in full.
import { describe, expect, test } from "vitest";
import type { HostedCluster, Machine, Service } from "../../src/api/external.js";
import type { InfraClusterAttachment } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import type { BuildResult, ClusterState } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra, NS, service } from "../support/fixtures.js";

const CP = `${NS}-one`;

function hc(apiHost?: string): HostedCluster {
  return {
    apiVersion: "hypershift.openshift.io/v1beta1",
    kind: "HostedCluster",
    metadata: { namespace: NS, name: "one" },
    ...(apiHost === undefined ? {} : { status: { controlPlaneEndpoint: { host: apiHost, port: 443 } } }),
  };
}

function stateOf(a: InfraClusterAttachment, parts: Partial<ClusterState> = {}): ClusterState {
  return {
    ...combine(
      { infras: [infra()], attachments: [a], hostedClusters: [hc()] },
      hostedCluster("one", 1, ["192.0.2.10"]),
    ),
    ...parts,
  };
}

/** What a build says about the proxy and the attachment, for comparing two builds. */
function seen(r: BuildResult): unknown {
  return { proxy: r.topologies[0]?.proxy, problems: r.problems };
}

/** The same state with a copy of every attachment: nothing kept from an earlier build applies. */
function fresh(s: ClusterState): ClusterState {
  return { ...s, attachments: s.attachments.map((a) => structuredClone(a)) };
}

describe("an attachment's kept part is used only while every input it read is the same", () => {
  const a = attachment("one", {
    spec: {
      appsIngress: { enabled: true, metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.200-192.0.2.209" } },
    },
    status: { appsIngressStatus: { phase: "Ready", externalIP: "192.0.2.200" } },
  });
  const base = stateOf(a);
  test.each<[string, (s: ClusterState) => ClusterState]>([
    [
      "the Infra's spec (its pool now over the MetalLB range)",
      (s) => ({ ...s, infras: [infra("vlan100", { infraComponents: { dhcp: { rangeEnd: "192.0.2.205" } } })] }),
    ],
    [
      "a Service the rows read (a new ClusterIP)",
      (s) => ({
        ...s,
        services: [...s.services].map((v) =>
          v.metadata.name === "kube-apiserver" ? service(CP, "kube-apiserver", "10.96.9.9", [6443]) : v,
        ),
      }),
    ],
    [
      "a Service gone",
      (s) => ({ ...s, services: [...s.services].filter((v) => v.metadata.name !== "oauth-openshift") }),
    ],
    ["an endpoint's hostname", (s) => ({ ...s, hostedClusters: [hc("api.elsewhere.example.net")] })],
    [
      "only an endpoint's port (api on 443, its name the conventional one)",
      (s) => ({ ...s, hostedClusters: [hc("api.one.example.com")] }),
    ],
    [
      "the worker addresses",
      (s) => ({
        ...s,
        machines: [...s.machines].map((m) => ({
          ...m,
          status: { addresses: [{ type: "InternalIP", address: "192.0.2.12" }] },
        })),
      }),
    ],
    [
      "one more worker",
      (s) => ({
        ...s,
        machines: [
          ...s.machines,
          {
            ...s.machines.at(0),
            metadata: { ...s.machines.at(0)?.metadata, name: "one-worker-9" },
            status: { addresses: [{ type: "InternalIP", address: "192.0.2.11" }] },
          } as Machine,
        ],
      }),
    ],
  ])("%s", (_, change) => {
    build(base);
    const next = change(base);
    const kept = seen(build(next));
    expect(kept).toEqual(seen(build(fresh(next))));
    expect(kept).not.toEqual(seen(build(fresh(base))));
  });
});

test("a kept part notices its own API server Service change when apiServerService names another", () => {
  const custom = attachment("one", { spec: { apiServerService: "custom-apiserver" } });
  const base = stateOf(custom);
  const withIp = (ip: string): ClusterState => ({
    ...base,
    services: [
      service(CP, "custom-apiserver", ip, [6443]),
      ...[...base.services].filter((v) => v.metadata.name !== "kube-apiserver"),
    ],
  });
  build(withIp("10.96.1.9"));
  const next = withIp("10.96.1.10");
  expect(seen(build(next))).toEqual(seen(build(fresh(next))));
});

describe("Services in every shape", () => {
  const a = attachment("one");
  const problems = (services: Service[]) =>
    build(stateOf(a, { services }))
      .problems.filter((p) => p.object.name === "one")
      .map((p) => `${p.reason}: ${p.message}`);
  const others = (cp: string) => [
    service(cp, "oauth-openshift", "10.96.1.2", [6443]),
    service(cp, "ignition-server-proxy", "10.96.1.3", [443]),
    service(cp, "konnectivity-server", "10.96.1.4", [8091]),
  ];
  test.each<[string, Service, string[]]>([
    [
      "a Service with no spec",
      { apiVersion: "v1", kind: "Service", metadata: { namespace: CP, name: "kube-apiserver" } },
      [`WaitingForServices: Service ${CP}/kube-apiserver has no ClusterIP (headless or not allocated)`],
    ],
    [
      "a headless Service",
      service(CP, "kube-apiserver", "None", [6443]),
      [`WaitingForServices: Service ${CP}/kube-apiserver has no ClusterIP (headless or not allocated)`],
    ],
    [
      "a Service that lists no ports",
      { ...service(CP, "kube-apiserver", "10.96.1.1", []), spec: { clusterIP: "10.96.1.1" } },
      [],
    ],
    ["a Service exposing the port among others", service(CP, "kube-apiserver", "10.96.1.1", [443, 6443]), []],
    [
      "a Service exposing other ports",
      service(CP, "kube-apiserver", "10.96.1.1", [443, 8443]),
      [`ServicePortMismatch: Service ${CP}/kube-apiserver does not expose port 6443 (has 443, 8443)`],
    ],
  ])("%s", (_, apiserver, want) => {
    expect(problems([apiserver, ...others(CP)])).toEqual(want);
  });

  test("apiServerService names the API server's Service for every row that reads it", () => {
    const custom = attachment("one", { spec: { apiServerService: "custom-apiserver" } });
    const r = build(
      stateOf(custom, { services: [service(CP, "custom-apiserver", "10.96.1.9", [6443]), ...others(CP)] }),
    );
    const upstreams = new Set(
      r.topologies[0]?.proxy?.backends.filter((b) => b.kind.startsWith("kube")).map((b) => b.upstream),
    );
    expect([...upstreams]).toEqual([`${CP}/custom-apiserver:6443`]);
    expect(r.problems.filter((p) => p.reason === "WaitingForServices")).toEqual([]);
  });

  test("two attachments sharing a control-plane namespace: its missing Service is said once, on the first", () => {
    const first = attachment("one", { created: "2026-01-01T00:00:00Z" });
    const second = attachment("two", { spec: { controlPlaneNamespace: CP }, created: "2026-01-02T00:00:00Z" });
    const s = stateOf(first, { attachments: [first, second], services: others(CP) });
    const waiting = build(s).problems.filter((p) => p.reason === "WaitingForServices");
    expect(waiting.map((p) => [p.object.name, p.message])).toEqual([
      ["one", `Service ${CP}/kube-apiserver not found; its routes refuse connections until it exists`],
    ]);
  });
});

describe("apps ingress messages, in full", () => {
  const problem = (spec: object, status: object, reason: string) =>
    build(stateOf(attachment("one", { spec, status: { appsIngressStatus: status } })))
      .problems.filter((p) => p.reason === reason)
      .map((p) => `${p.field}: ${p.message}`);
  test.each<[string, object, object, string, string[]]>([
    [
      "Ready while the feature is off, without an address",
      {},
      { phase: "Ready" },
      "AppsIngressStatusIgnored",
      [
        "spec.appsIngress.enabled: status.appsIngressStatus.phase is Ready but spec.appsIngress.enabled is not true; *.apps.one.example.com gets no proxy route and no DNS record until it is",
      ],
    ],
    [
      "Ready while the feature is off, with an address",
      { appsIngress: { enabled: false } },
      { phase: "Ready", externalIP: "192.0.2.200" },
      "AppsIngressStatusIgnored",
      [
        "spec.appsIngress.enabled: status.appsIngressStatus.phase is Ready (192.0.2.200) but spec.appsIngress.enabled is not true; *.apps.one.example.com gets no proxy route and no DNS record until it is",
      ],
    ],
    [
      "Degraded without a reason or message",
      { appsIngress: { enabled: true } },
      { phase: "Degraded" },
      "AppsIngressDegraded",
      ["status.appsIngressStatus: "],
    ],
    [
      "Degraded with a reason oooi does not know",
      { appsIngress: { enabled: true } },
      { phase: "Degraded", reason: "Whatever", message: "m" },
      "AppsIngressDegraded",
      ["status.appsIngressStatus: m"],
    ],
  ])("%s", (_, spec, status, reason, want) => {
    expect(problem(spec, status, reason)).toEqual(want);
  });
});
