// Issue 18: manifests in the shape of the original operator's samples and docs (our own files, in
// ./manifests) render with exactly the problems we expect, and each compatibility rule has a row.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { decodeResource } from "../../../src/api/validate.js";
import { build } from "../../../src/model/build.js";
import type { ClusterState, Problem } from "../../../src/model/types.js";
import { mergeHostnames } from "../../../src/operator/desired/external.js";
import { renderAll } from "../../../src/pipeline/outputs.js";
import { loadManifestDir } from "../../../src/watchers/manifests.js";
import { attachment, combine, hostedCluster, infra, NS, service, vmi } from "../../support/fixtures.js";

const MANIFESTS = join(import.meta.dirname, "manifests");
const short = (p: Problem) => `${p.object.kind}/${p.object.name} ${p.field} ${p.reason} ${p.severity}`;

async function load(): Promise<ClusterState> {
  const r = await loadManifestDir(MANIFESTS);
  if (!r.ok) throw new Error(`compat manifests unreadable: ${JSON.stringify(r.error)}`);
  return r.state;
}

describe("the original's manifests", () => {
  it("render with only the problems the original's users should be told about", async () => {
    const out = renderAll(await load());
    expect(out.model.problems.map(short)).toEqual([
      "Infra/vlan-200 spec.infraComponents.dns.baseDomain LegacyField warning",
      "Infra/vlan-200 spec.infraComponents.dns.clusterName LegacyField warning",
      "Infra/vlan-200 spec.infraComponents.proxy.apiServerService LegacyField warning",
      "Infra/vlan-200 spec.infraComponents.proxy.controlPlaneNamespace LegacyField warning",
      // The older original's Infra-level public Service: still made, deprecated (the newest moved it to attachments).
      "Infra/vlan-200 spec.infraComponents.proxy.externalService LegacyField warning",
      // New since the original: its internal proxy Service admitted every pod.
      "Infra/vlan-200 spec.infraComponents.proxy.internalClients.namespaceSelector NoInternalClients warning",
      "InfraClusterAttachment/blue spec.appsIngress.metallb.addressPoolName InvalidConfiguration warning",
    ]);
    const t = out.model.topologies[0];
    expect(t?.attachments.map((a) => [a.ref.name, a.served, a.workerAddresses])).toEqual([
      ["blue", true, ["10.200.0.120"]],
      ["red", true, ["10.200.0.110"]],
    ]);
    // The trailing-dot internalProxyService resolved: the default view answers with its ClusterIP.
    expect(t?.dns?.views[1].zones.flatMap((z) => z.records.map((r) => r.address))).toContain("172.30.20.4");
  });

  it("child objects with the original's fields decode", () => {
    const docs = parseAllDocuments(readFileSync(join(MANIFESTS, "children.yaml"), "utf8")).map(
      (d) => d.toJS() as { kind: string },
    );
    expect(docs.map((d) => [d.kind, decodeResource(d, d.kind).ok])).toEqual([
      ["DNSServer", true],
      ["ProxyServer", true],
    ]);
  });
});

interface Row {
  name: string;
  state: ClusterState;
  problems: string[];
  /** Worker addresses per attachment. */
  workers?: string[][];
}

const cp = `${NS}-one`;
const rows: Row[] = [
  {
    name: "a Machine address with surrounding spaces is an address (18.5)",
    state: combine({ infras: [infra()], attachments: [attachment("one")] }, hostedCluster("one", 1, [" 192.0.2.10 "])),
    problems: [],
    workers: [["192.0.2.10"]],
  },
  {
    name: "a VMI in the control-plane namespace without a Machine is a worker (18.5)",
    state: combine({ infras: [infra()], attachments: [attachment("one")] }, hostedCluster("one", 1, []), {
      vmis: [vmi(cp, "one-workers-new", "02:00:00:00:00:09", "192.0.2.11")],
    }),
    problems: [],
    workers: [["192.0.2.11"]],
  },
  {
    name: "legacy single-cluster Infra fields are warned about, naming what replaces them (18.6)",
    state: combine({
      infras: [
        infra("vlan100", {
          infraComponents: {
            dns: { clusterName: "x", baseDomain: "example.com" },
            proxy: { controlPlaneNamespace: "clusters-x", apiServerService: "kube-apiserver" },
          },
        }),
      ],
    }),
    problems: [
      "Infra/vlan100 spec.infraComponents.dns.baseDomain LegacyField warning",
      "Infra/vlan100 spec.infraComponents.dns.clusterName LegacyField warning",
      "Infra/vlan100 spec.infraComponents.proxy.apiServerService LegacyField warning",
      "Infra/vlan100 spec.infraComponents.proxy.controlPlaneNamespace LegacyField warning",
    ],
  },
  {
    name: "apps ingress enabled without MetalLB is reported (18.6)",
    state: combine(
      { infras: [infra()], attachments: [attachment("one", { spec: { appsIngress: { enabled: true } } })] },
      hostedCluster("one", 1, []),
    ),
    problems: ["InfraClusterAttachment/one spec.appsIngress.metallb.addressPoolName InvalidConfiguration warning"],
  },
  {
    name: "an internalProxyService with a trailing dot resolves (18.7)",
    state: combine({
      infras: [
        infra("vlan100", { infraComponents: { proxy: { internalProxyService: "envoy.proxies.svc.cluster.local." } } }),
      ],
      services: [service("proxies", "envoy", "10.96.7.7", [443])],
    }),
    problems: [],
  },
];

describe("compatibility rules", () => {
  it.each(rows)("$name", ({ state, problems, workers }) => {
    const result = build(state);
    expect(result.problems.map(short)).toEqual(problems);
    if (workers !== undefined) expect(result.topologies[0]?.attachments.map((a) => a.workerAddresses)).toEqual(workers);
  });

  it("the legacy-field message names the attachment that replaces the field", () => {
    const [p] = build(
      combine({ infras: [infra("vlan100", { infraComponents: { dns: { clusterName: "x" } } })] }),
    ).problems;
    expect(p?.message).toMatch(/InfraClusterAttachment with infraRef.name vlan100; set its spec.dns.clusterName/);
  });

  it.each([
    ["oauth.a.example.com.", ["oauth.a.example.com"], "oauth.a.example.com."],
    ["", ["oauth.b.example.com", "oauth.a.example.com"], "oauth.a.example.com,oauth.b.example.com"],
    [
      "x.example.com, OAUTH.A.example.com",
      ["oauth.a.example.com.", "oauth.c.example.com"],
      "x.example.com,OAUTH.A.example.com,oauth.c.example.com",
    ],
  ])(
    "OAuth hostnames %j + %j merge to %j: a trailing dot does not make a second name (18.3)",
    (user, added, merged) => {
      expect(mergeHostnames(user, added)).toBe(merged);
    },
  );
});
