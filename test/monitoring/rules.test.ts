// deploy/monitoring's alerts under `promtool test rules` (Debian's prometheus package): each alert
// fires on the series that mean its condition, for its `for:`, with its labels — and stays quiet on
// the series that do not. The series use the metric names the operator exports
// (test/kube/monitoring.test.ts checks the rule file's names against a running operator's /metrics).
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { skipUnless, toolMissing } from "../support/peers.js";
import { ruleGroups } from "./support.js";

const run = promisify(execFile);
const PROMTOOL = skipUnless(toolMissing("promtool", "apt-get install prometheus")) === undefined;

interface AlertCase {
  /** What the series mean. */
  readonly name: string;
  readonly series: readonly { series: string; values: string }[];
  readonly alert: string;
  readonly at: string;
  /** The alerts expected at `at`: their labels (the rule's own labels included); empty = quiet. */
  readonly fires: readonly Record<string, string>[];
  /** The firing alerts' summary, as rendered. */
  readonly summary?: string;
}

const op = (instance: string) => `instance="${instance}"`;
const CASES: readonly AlertCase[] = [
  {
    name: "a group NACKing for 5 minutes",
    summary: "1 xDS client(s) of clusters/p in state ERROR for 5 minutes",
    series: [{ series: `oooi_xds_clients{group="clusters/p",state="ERROR",${op("a")}}`, values: "1x10" }],
    alert: "OooiXdsNodesNotSynced",
    at: "6m",
    fires: [{ severity: "warning", group: "clusters/p", state: "ERROR" }],
  },
  {
    name: "a group BEHIND over two replicas, for 5 minutes",
    summary: "1 xDS client(s) of clusters/p in state BEHIND for 5 minutes",
    series: [
      { series: `oooi_xds_clients{group="clusters/p",state="BEHIND",${op("a")}}`, values: "1x10" },
      { series: `oooi_xds_clients{group="clusters/p",state="BEHIND",${op("b")}}`, values: "0x10" },
    ],
    alert: "OooiXdsNodesNotSynced",
    at: "6m",
    fires: [{ severity: "warning", group: "clusters/p", state: "BEHIND" }],
  },
  {
    name: "a NACK for less than 5 minutes, then synced",
    series: [
      { series: `oooi_xds_clients{group="clusters/p",state="ERROR",${op("a")}}`, values: "1 1 1 0 0 0 0 0 0 0" },
      { series: `oooi_xds_clients{group="clusters/p",state="SYNCED",${op("a")}}`, values: "0 0 0 1 1 1 1 1 1 1" },
    ],
    alert: "OooiXdsNodesNotSynced",
    at: "8m",
    fires: [],
  },
  {
    name: "a pool 90 % allocated (both replicas export it)",
    summary: "DHCP pool of Infra c/v is 90% allocated",
    series: [
      { series: `oooi_dhcp_pool_addresses{namespace="c",infra="v",${op("a")}}`, values: "100x10" },
      { series: `oooi_dhcp_pool_allocated{namespace="c",infra="v",${op("a")}}`, values: "90x10" },
      { series: `oooi_dhcp_pool_addresses{namespace="c",infra="v",${op("b")}}`, values: "100x10" },
      { series: `oooi_dhcp_pool_allocated{namespace="c",infra="v",${op("b")}}`, values: "90x10" },
    ],
    alert: "OooiDhcpPoolNearlyFull",
    at: "6m",
    fires: [{ severity: "warning", namespace: "c", infra: "v" }],
  },
  {
    name: "a pool 89 % allocated",
    series: [
      { series: `oooi_dhcp_pool_addresses{namespace="c",infra="v",${op("a")}}`, values: "100x10" },
      { series: `oooi_dhcp_pool_allocated{namespace="c",infra="v",${op("a")}}`, values: "89x10" },
    ],
    alert: "OooiDhcpPoolNearlyFull",
    at: "6m",
    fires: [],
  },
  {
    name: "an empty Infra pool of no address: not a percentage",
    series: [
      { series: `oooi_dhcp_pool_addresses{namespace="c",infra="v",${op("a")}}`, values: "0x10" },
      { series: `oooi_dhcp_pool_allocated{namespace="c",infra="v",${op("a")}}`, values: "0x10" },
    ],
    alert: "OooiDhcpPoolNearlyFull",
    at: "6m",
    fires: [],
  },
  {
    name: "a pool with every address allocated",
    summary: "DHCP pool of Infra c/v has no free address",
    series: [
      { series: `oooi_dhcp_pool_addresses{namespace="c",infra="v",${op("a")}}`, values: "10x10" },
      { series: `oooi_dhcp_pool_allocated{namespace="c",infra="v",${op("a")}}`, values: "10x10" },
    ],
    alert: "OooiDhcpPoolExhausted",
    at: "2m",
    fires: [{ severity: "critical", namespace: "c", infra: "v" }],
  },
  {
    name: "a pool with one address free",
    series: [
      { series: `oooi_dhcp_pool_addresses{namespace="c",infra="v",${op("a")}}`, values: "10x10" },
      { series: `oooi_dhcp_pool_allocated{namespace="c",infra="v",${op("a")}}`, values: "9x10" },
    ],
    alert: "OooiDhcpPoolExhausted",
    at: "2m",
    fires: [],
  },
  {
    name: "the leader says a DNSServer is not Ready for 5 minutes",
    summary: "DNSServer c/v-dns does not serve the rendered zones",
    series: [
      { series: `oooi_leader{${op("a")}}`, values: "1x10" },
      { series: `oooi_object_ready{kind="DNSServer",namespace="c",name="v-dns",${op("a")}}`, values: "0x10" },
      { series: `oooi_object_ready{kind="ProxyServer",namespace="c",name="v-proxy",${op("a")}}`, values: "0x10" },
    ],
    alert: "OooiDnsNotServing",
    at: "6m",
    fires: [{ severity: "warning", kind: "DNSServer", namespace: "c", name: "v-dns", instance: "a" }],
  },
  {
    name: "a former leader's stale 0 while the leader says Ready",
    series: [
      { series: `oooi_leader{${op("a")}}`, values: "0x10" },
      { series: `oooi_leader{${op("b")}}`, values: "1x10" },
      { series: `oooi_object_ready{kind="DNSServer",namespace="c",name="v-dns",${op("a")}}`, values: "0x10" },
      { series: `oooi_object_ready{kind="DNSServer",namespace="c",name="v-dns",${op("b")}}`, values: "1x10" },
    ],
    alert: "OooiDnsNotServing",
    at: "6m",
    fires: [],
  },
  {
    name: "two replicas, neither leading, for 5 minutes",
    summary: "No oooi operator replica holds the Lease oooi-system/oooi-operator",
    series: [
      { series: `oooi_leader{${op("a")}}`, values: "0x10" },
      { series: `oooi_leader{${op("b")}}`, values: "0x10" },
    ],
    alert: "OooiNoLeader",
    at: "6m",
    fires: [{ severity: "critical" }],
  },
  {
    name: "no replica scraped at all",
    summary: "No oooi operator replica holds the Lease oooi-system/oooi-operator",
    series: [{ series: `up{job="other"}`, values: "1x10" }],
    alert: "OooiNoLeader",
    at: "6m",
    fires: [{ severity: "critical" }],
  },
  {
    name: "one leader",
    series: [
      { series: `oooi_leader{${op("a")}}`, values: "0x10" },
      { series: `oooi_leader{${op("b")}}`, values: "1x10" },
    ],
    alert: "OooiNoLeader",
    at: "6m",
    fires: [],
  },
  {
    name: "only transport failures for 10 minutes",
    summary: "oooi operator a cannot reach the API server",
    series: [
      { series: `oooi_kube_requests_total{method="GET",code="200",${op("a")}}`, values: "100x20" },
      { series: `oooi_kube_requests_total{method="PUT",code="0",${op("a")}}`, values: "0+3x20" },
    ],
    alert: "OooiApiServerUnreachable",
    at: "10m",
    fires: [{ severity: "critical", instance: "a" }],
  },
  {
    name: "transport failures among answered requests",
    series: [
      { series: `oooi_kube_requests_total{method="GET",code="200",${op("a")}}`, values: "0+10x20" },
      { series: `oooi_kube_requests_total{method="PUT",code="0",${op("a")}}`, values: "0+3x20" },
    ],
    alert: "OooiApiServerUnreachable",
    at: "10m",
    fires: [],
  },
];

/** The rule's description with its `{{ $labels.x }}` filled in (no description uses more of the template language). */
function description(alert: string, labels: Readonly<Record<string, string>>): string {
  const rule = ruleGroups()
    .flatMap((g) => g.rules)
    .find((r) => r.alert === alert);
  return (rule?.annotations?.["description"] ?? "").replace(
    /\{\{ \$labels\.(\w+) \}\}/g,
    (_m, k: string) => labels[k] ?? "",
  );
}

/** A promtool unit-test file for `rules`, one test per case. */
function promtoolTests(rulesFile: string): string {
  return stringify({
    rule_files: [rulesFile],
    evaluation_interval: "1m",
    tests: CASES.map((c) => ({
      name: c.name,
      interval: "1m",
      input_series: c.series,
      alert_rule_test: [
        {
          eval_time: c.at,
          alertname: c.alert,
          exp_alerts: c.fires.map((exp_labels) => ({
            exp_labels,
            exp_annotations: { summary: c.summary, description: description(c.alert, exp_labels) },
          })),
        },
      ],
    })),
  });
}

describe.skipIf(!PROMTOOL)("deploy/monitoring alert rules under promtool", () => {
  const dir = mkdtempSync(join(tmpdir(), "oooi-rules-"));
  const rulesFile = join(dir, "rules.yaml");
  writeFileSync(rulesFile, stringify({ groups: ruleGroups() }));

  it("the rule file is valid (promtool check rules)", async () => {
    const { stdout } = await run("promtool", ["check", "rules", rulesFile]);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("each alert fires on its condition and stays quiet otherwise (promtool test rules)", async () => {
    const testFile = join(dir, "tests.yaml");
    writeFileSync(testFile, promtoolTests(rulesFile));
    const result = await run("promtool", ["test", "rules", testFile]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: unknown) => {
        const failed = e as { code?: number; stdout?: string; stderr?: string };
        return { code: failed.code ?? 1, out: (failed.stdout ?? "") + (failed.stderr ?? "") };
      },
    );
    expect(result.out, result.out).toMatch(/SUCCESS/);
    expect(result.code, result.out).toBe(0);
  });

  it("every alert has a case that fires it and one that does not", () => {
    const alerts = ruleGroups()
      .flatMap((g) => g.rules)
      .flatMap((r) => (r.alert === undefined ? [] : [r.alert]));
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) {
      const cases = CASES.filter((c) => c.alert === a);
      expect(
        cases.some((c) => c.fires.length > 0),
        `${a} fires in no case`,
      ).toBe(true);
      expect(
        cases.some((c) => c.fires.length === 0),
        `${a} is quiet in no case`,
      ).toBe(true);
    }
  });
});
