// deploy/monitoring read as the tests need it: the PrometheusRule's groups as a plain rule file holds
// them, and the Grafana dashboard's queries.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

export const MONITORING = fileURLToPath(new URL("../../deploy/monitoring/", import.meta.url));

export interface RuleGroup {
  name: string;
  rules: {
    alert?: string;
    expr: string;
    for?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  }[];
}

/** The PrometheusRule's groups. */
export function ruleGroups(): RuleGroup[] {
  const rule = parse(readFileSync(join(MONITORING, "prometheusrule.yaml"), "utf8")) as {
    spec: { groups: RuleGroup[] };
  };
  return rule.spec.groups;
}

interface Panel {
  readonly title?: string;
  readonly type?: string;
  readonly targets?: readonly { readonly expr?: string }[];
}

/** The dashboard's panels. */
export function dashboardPanels(): readonly Panel[] {
  return (JSON.parse(readFileSync(join(MONITORING, "oooi-dashboard.json"), "utf8")) as { panels: Panel[] }).panels;
}

/** [panel title, expression] of every query of the dashboard. */
export function dashboardExpressions(): (readonly [string, string])[] {
  return dashboardPanels().flatMap((p) => (p.targets ?? []).map((t) => [p.title ?? "", t.expr ?? ""] as const));
}
