// The dashboard's "DNS queries by view" query under `promtool test rules` (promql_expr_test), on
// series shaped as Prometheus stores the PodMonitor's scrape: coredns_dns_requests_total with the
// labels the real CoreDNS gives it (test/dns/coredns/metrics.test.ts) plus the target's namespace,
// pod and the `infra` the PodMonitor relabels from the pod. One line per Infra and view; the
// unfiltered blocks' "" view is shown as "(none)".
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { skipUnless, toolMissing } from "../support/peers.js";
import { dashboardExpressions } from "./support.js";

const run = promisify(execFile);
const PROMTOOL = skipUnless(toolMissing("promtool", "apt-get install prometheus")) === undefined;
// Grafana fills $__rate_interval in; any range that holds several scrapes does here.
const RATE_INTERVAL = "5m";

const target = (infra: string) =>
  `namespace="clusters",infra="${infra}",pod="${infra}-dns-0",job="clusters/oooi-coredns"`;
const requests = (infra: string, view: string, proto: string, zone: string) =>
  `coredns_dns_requests_total{${target(infra)},server="dns://:53",zone="${zone}",view="${view}",proto="${proto}",family="1",type="A"}`;

describe.skipIf(!PROMTOOL)("the dashboard's DNS queries by view", () => {
  it("sums each Infra's queries per view, over zones and transports (promtool test rules)", async () => {
    const expr = dashboardExpressions().find(([title]) => title === "DNS queries by view")?.[1];
    expect(expr).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "oooi-dashboard-"));
    const testFile = join(dir, "tests.yaml");
    writeFileSync(
      testFile,
      stringify({
        rule_files: [],
        evaluation_interval: "1m",
        tests: [
          {
            interval: "1m",
            // Per minute: 60 = 1 query/s.
            input_series: [
              { series: requests("a", "vlan", "udp", "api.alpha.example."), values: "0+60x10" },
              { series: requests("a", "vlan", "tcp", "oauth.alpha.example."), values: "0+60x10" },
              { series: requests("a", "", "udp", "api.alpha.example."), values: "0+30x10" },
              { series: requests("a", "", "udp", "."), values: "0+90x10" },
              { series: requests("b", "vlan", "udp", "api.beta.example."), values: "0+120x10" },
            ],
            promql_expr_test: [
              {
                expr: (expr ?? "").replaceAll("$__rate_interval", RATE_INTERVAL),
                eval_time: "10m",
                exp_samples: [
                  { labels: '{namespace="clusters",infra="a",view="vlan"}', value: 2 },
                  { labels: '{namespace="clusters",infra="a",view="(none)"}', value: 2 },
                  { labels: '{namespace="clusters",infra="b",view="vlan"}', value: 2 },
                ],
              },
            ],
          },
        ],
      }),
    );
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
});
