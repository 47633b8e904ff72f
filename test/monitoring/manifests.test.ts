// deploy/monitoring as kustomize builds it: the ServiceMonitor reaches the operator's metrics port
// through the base's Service, the PodMonitor reaches the metrics port of the CoreDNS pods the
// operator deploys (and no other of its pods), the dashboard ConfigMap carries the dashboard for
// Grafana's sidecar, and the dashboard has the panels operators look for.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { skipUnless, toolMissing } from "../support/peers.js";
import { dashboardPanels, MONITORING } from "./support.js";
import { desiredState } from "../../src/operator/desired/index.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

type Json = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);
const KUBECTL = skipUnless(toolMissing("kubectl", "apt-get install kubernetes-client")) === undefined;
const build = (dir: string): Json[] =>
  parseAllDocuments(execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" })).map((d) => d.toJS() as Json);

/** The pod templates of the Deployments the operator makes for one Infra (Envoy, CoreDNS, Kea). */
function operatorPods(): { name: string; labels: Record<string, string>; ports: Json[] }[] {
  const state = combine(
    { infras: [{ ...infra(), metadata: { ...infra().metadata, uid: "u1" } }], attachments: [attachment("alpha")] },
    hostedCluster("alpha", 1, ["192.0.2.50"]),
  );
  const desired = desiredState({
    state,
    outputs: renderAll(state),
    settings: operatorSettings({ namespace: "oooi-system" }),
    networkAttachments: new Map(),
  });
  return desired.infras
    .flatMap((i) => i.objects)
    .filter((o) => o.kind === "Deployment")
    .map((d) => ({
      name: d.metadata.name,
      labels: at(d, "spec", "template", "metadata", "labels") as Record<string, string>,
      ports: (at(d, "spec", "template", "spec", "containers") as Json[]).flatMap((c) => (c["ports"] ?? []) as Json[]),
    }));
}

describe.skipIf(!KUBECTL)("deploy/monitoring", () => {
  const objects = build(MONITORING);
  const base = build(join(MONITORING, ".."));
  const of = (kind: string) => objects.find((o) => o["kind"] === kind);

  it("the ServiceMonitor selects the oooi-metrics Service in oooi-system by a port it has", () => {
    const monitor = of("ServiceMonitor");
    const services = base.filter(
      (o) =>
        o["kind"] === "Service" &&
        Object.entries(at(monitor, "spec", "selector", "matchLabels") as Record<string, string>).every(
          ([k, v]) => at(o, "metadata", "labels", k) === v,
        ),
    );
    const port = at(monitor, "spec", "endpoints", 0, "port");
    const withPort = services.filter((s) => (at(s, "spec", "ports") as Json[]).some((p) => p["name"] === port));
    expect(withPort.map((s) => at(s, "metadata", "name"))).toEqual(["oooi-metrics"]);
    expect(at(monitor, "spec", "namespaceSelector", "matchNames")).toEqual(["oooi-system"]);
    expect(at(monitor, "spec", "endpoints", 0, "path")).toBe("/metrics");
    // The operator's port is HTTPS on a self-signed certificate by default (docs/security.md).
    expect(at(monitor, "spec", "endpoints", 0, "scheme")).toBe("https");
    expect(at(monitor, "spec", "endpoints", 0, "tlsConfig")).toEqual({ insecureSkipVerify: true });
  });

  it("the PodMonitor selects the CoreDNS pods of every Infra, in any namespace, by a port their container names", () => {
    const monitor = of("PodMonitor");
    const selector = at(monitor, "spec", "selector", "matchLabels") as Record<string, string>;
    const pods = operatorPods();
    expect(pods.map((p) => p.name).sort()).toEqual(["vlan100-dhcp", "vlan100-dns", "vlan100-proxy"]);
    const selected = pods.filter((p) => Object.entries(selector).every(([k, v]) => p.labels[k] === v));
    expect(selected.map((p) => p.name)).toEqual(["vlan100-dns"]);
    const endpoint = at(monitor, "spec", "podMetricsEndpoints", 0) as Json;
    expect(selected[0]?.ports.find((p) => p["name"] === endpoint["port"])).toMatchObject({ containerPort: 9153 });
    expect(endpoint["path"]).toBe("/metrics");
    // Infras live in namespaces of the user's choosing.
    expect(at(monitor, "spec", "namespaceSelector")).toEqual({ any: true });
    // The Infra's name, from the pod label the operator sets to it, as `infra` (the dashboard groups by it).
    expect(endpoint["relabelings"]).toContainEqual({
      sourceLabels: ["__meta_kubernetes_pod_label_app_kubernetes_io_instance"],
      targetLabel: "infra",
    });
    expect(selected[0]?.labels["app.kubernetes.io/instance"]).toBe("vlan100");
  });

  it("the dashboard ConfigMap holds the dashboard JSON, labelled for Grafana's sidecar", () => {
    const cm = of("ConfigMap");
    expect(at(cm, "metadata", "labels", "grafana_dashboard")).toBe("1");
    const text = at(cm, "data", "oooi-dashboard.json") as string;
    expect(text).toBe(readFileSync(join(MONITORING, "oooi-dashboard.json"), "utf8"));
    expect((JSON.parse(text) as { uid?: string }).uid).toBe("oooi-operator");
  });

  it("the dashboard shows propagation latency as a histogram, sync state per group, DHCP pool use and DNS queries by view", () => {
    const panels = dashboardPanels();
    const query = (re: RegExp) => panels.filter((p) => (p.targets ?? []).some((t) => re.test(t.expr ?? "")));
    expect(query(/oooi_xds_push_ack_seconds_bucket/).map((p) => p.type)).toContain("heatmap");
    expect(query(/sum by \(group, state\) \(oooi_xds_clients\)/)).toHaveLength(1);
    expect(query(/oooi_dhcp_pool_allocated.*\/.*oooi_dhcp_pool_addresses/)).toHaveLength(1);
    expect(query(/sum by \(namespace, infra, view\) \(rate\(coredns_dns_requests_total\[/).map((p) => p.title)).toEqual(
      ["DNS queries by view"],
    );
  });
});
