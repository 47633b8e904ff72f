// deploy/monitoring as kustomize builds it: the ServiceMonitor reaches the operator's metrics port
// through the base's Service, the dashboard ConfigMap carries the dashboard for Grafana's sidecar,
// and the dashboard has the panels operators look for.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { skipUnless, toolMissing } from "../support/peers.js";
import { dashboardPanels, MONITORING } from "./support.js";

type Json = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);
const KUBECTL = skipUnless(toolMissing("kubectl", "apt-get install kubernetes-client")) === undefined;
const build = (dir: string): Json[] =>
  parseAllDocuments(execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" })).map((d) => d.toJS() as Json);

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
  });

  it("the dashboard ConfigMap holds the dashboard JSON, labelled for Grafana's sidecar", () => {
    const cm = of("ConfigMap");
    expect(at(cm, "metadata", "labels", "grafana_dashboard")).toBe("1");
    const text = at(cm, "data", "oooi-dashboard.json") as string;
    expect(text).toBe(readFileSync(join(MONITORING, "oooi-dashboard.json"), "utf8"));
    expect((JSON.parse(text) as { uid?: string }).uid).toBe("oooi-operator");
  });

  it("the dashboard shows propagation latency as a histogram, sync state per group and DHCP pool use", () => {
    const panels = dashboardPanels();
    const query = (re: RegExp) => panels.filter((p) => (p.targets ?? []).some((t) => re.test(t.expr ?? "")));
    expect(query(/oooi_xds_push_ack_seconds_bucket/).map((p) => p.type)).toContain("heatmap");
    expect(query(/sum by \(group, state\) \(oooi_xds_clients\)/)).toHaveLength(1);
    expect(query(/oooi_dhcp_pool_allocated.*\/.*oooi_dhcp_pool_addresses/)).toHaveLength(1);
  });
});
