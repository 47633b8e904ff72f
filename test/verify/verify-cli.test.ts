// `oooi verify` (the built CLI) against a running `oooi serve` on examples/standalone: every check
// passes on the example; a wrong zone answer, a wrong route, a wrong reservation, a NACKing Envoy
// and a mistyped node.cluster each fail, naming the check, the cause and the fix.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { ROOT, ServeProcess, closedPort, oooi, until } from "../support/cli.js";
import { type Row, resultRows } from "./result-row.js";

const LISTENER_TYPE_URL = "type.googleapis.com/envoy.config.listener.v3.Listener";
const tmp = mkdtempSync(join(tmpdir(), "oooi-verify-"));
const served = join(tmp, "served");
let serve: ServeProcess;
let xds = "";
let dns = "";
const envoys: EnvoyLikeClient[] = [];

beforeAll(async () => {
  cpSync(join(ROOT, "examples", "standalone"), served, { recursive: true });
  serve = new ServeProcess([
    "--manifests",
    served,
    "--xds-listen",
    "127.0.0.1:0",
    "--dns-listen",
    "127.0.0.1:0",
    "--debounce",
    "20",
  ]);
  await until(() => /xDS \(ADS\) server listening on 127\.0\.0\.1:\d+/.test(serve.log), "xDS listening");
  const dnsPort = await serve.dnsPort();
  await until(() => serve.log.includes('"msg":"rendered"'), "first rendering");
  xds = `127.0.0.1:${/xDS \(ADS\) server listening on 127\.0\.0\.1:(\d+)/.exec(serve.log)?.[1] ?? ""}`;
  dns = `127.0.0.1:${String(dnsPort)}`;
});

afterAll(async () => {
  for (const e of envoys) e.close();
  await serve.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** A copy of the example with `edit` applied to one file: the model verify compares against. */
function variant(name: string, file: string, edit: (text: string) => string): string {
  const dir = join(tmp, name);
  // From the served copy: the model verify compares against is what the server was given.
  cpSync(served, dir, { recursive: true });
  writeFileSync(join(dir, file), edit(readFileSync(join(dir, file), "utf8")));
  return dir;
}

async function verify(manifests: string): Promise<{ code: number; rows: Row[] }> {
  const run = await oooi(["verify", "--manifests", manifests, "--xds", xds, "--dns", dns, "-o", "json"]);
  return { code: run.code, rows: resultRows(run.stdout) };
}

/** The table a person reads, with its exit status. */
async function verifyTable(manifests: string): Promise<{ code: number; table: string }> {
  const run = await oooi(["verify", "--manifests", manifests, "--xds", xds, "--dns", dns]);
  return { code: run.code, table: run.stdout };
}

function connect(cluster: string, id: string, validate?: EnvoyLikeClient["validate"]): EnvoyLikeClient {
  const c = new EnvoyLikeClient({ address: xds, node: { id, cluster } });
  if (validate !== undefined) c.validate = validate;
  envoys.push(c);
  c.connect();
  return c;
}

describe("oooi verify against oooi serve", () => {
  it("passes on the example: every name from both views, every route, every reservation, the connected Envoy's ACK", async () => {
    const envoy = connect("clusters/tenant-vlan-proxy", "envoy-ok");
    await until(() => envoy.listeners.size > 0 && envoy.endpoints.size > 0, "the Envoy holds the snapshot");
    const { code, rows } = await verify(served);
    expect(rows.filter((r) => r.verdict === "FAIL")).toEqual([]);
    expect(code).toBe(0);
    const names = rows.map((r) => r.check);
    for (const view of ["vlan", "default"]) {
      for (const name of ["api", "api-int", "oauth", "ignition", "konnectivity"]) {
        expect(names.some((n) => n.startsWith(`dns ${view} ${name}.alpha.clusters.example.com `))).toBe(true);
      }
      expect(names).toContain(
        `dns ${view} kubernetes.default.svc (from ${view === "vlan" ? "127.0.8.254" : "127.0.0.1"})`,
      );
    }
    expect(rows.find((r) => r.check.startsWith("dns vlan api.alpha."))?.detail).toBe("127.0.8.4");
    expect(rows.find((r) => r.check.startsWith("dns default api.alpha."))?.detail).toBe("172.30.200.10");
    expect(rows.find((r) => r.check === "route (no SNI):6443 (from 127.0.8.20)")?.detail).toContain("172.30.2.1:6443");
    expect(rows.filter((r) => r.check.startsWith("dhcp ")).map((r) => r.verdict)).toEqual(["PASS", "PASS", "PASS"]);
    expect(rows.filter((r) => r.check.startsWith("ack envoy-ok ")).map((r) => r.verdict)).toEqual([
      "PASS",
      "PASS",
      "PASS",
      "PASS",
    ]);
    const table = await verifyTable(served);
    expect(table.code).toBe(0);
    expect(table.table).toMatch(/^PASS +dns vlan api\.alpha\.clusters\.example\.com/m);
    envoy.close();
  });

  it("fails naming the check and the fix when a zone answer is wrong", async () => {
    // The model says the proxy moved to 127.0.8.44; serve still answers 127.0.8.4.
    const dir = variant("dns", "infra.yaml", (t) => t.replace('serverIP: "127.0.8.4"', 'serverIP: "127.0.8.44"'));
    const { code, rows } = await verify(dir);
    expect(code).toBe(1);
    const row = rows.find((r) => r.check === "dns vlan api.alpha.clusters.example.com (from 127.0.8.254)");
    expect(row).toMatchObject({
      verdict: "FAIL",
      failure: "dns-wrong-answer",
      detail: "answered 127.0.8.4, the model says 127.0.8.44",
    });
    expect(row?.fix).toContain("spec.networkConfig.cidr");
    const { table } = await verifyTable(dir);
    expect(table).toMatch(/^FAIL +dns vlan api\.alpha\.clusters\.example\.com .*\n +cause: .*\n +fix: +compare/m);
  });

  it("says once, at once, that nothing answers — with serve's fix, not one failure per check", async () => {
    const closed = await closedPort();
    const run = await oooi([
      "verify",
      "--manifests",
      served,
      "--xds",
      `127.0.0.1:${String(closed)}`,
      "--dns",
      `127.0.0.1:${String(closed)}`,
      "-o",
      "json",
    ]);
    expect(run.code).toBe(1);
    const rows = resultRows(run.stdout);
    const failed = rows.filter((r) => r.verdict === "FAIL");
    expect(failed.map((r) => [r.check, r.failure])).toEqual([
      ["dns", "dns-unreachable"],
      ["xds", "xds-unreachable"],
    ]);
    expect(failed[0]?.detail).toMatch(
      /^nothing listens at 127\.0\.0\.1:\d+ \(connection refused\); \d+ DNS check\(s\) not run$/,
    );
    for (const r of failed) expect(r.fix).toMatch(/^start `oooi serve`/);
    // The reservations need no server and still ran.
    expect(rows.filter((r) => r.check.startsWith("dhcp ")).every((r) => r.verdict === "PASS")).toBe(true);
  });

  it("names the likely cause when the answers and routes match another configuration", async () => {
    const dir = variant("other-folder", "infra.yaml", (t) =>
      t.replace('serverIP: "127.0.8.4"', 'serverIP: "127.0.8.44"'),
    );
    const run = await oooi(["verify", "--manifests", dir, "--xds", xds, "--dns", dns, "-o", "json"]);
    expect(run.code).toBe(1);
    expect((JSON.parse(run.stdout) as { rootCause?: string }).rootCause).toMatch(/--manifests folder/);
    const table = await verifyTable(dir);
    expect(table.table).toMatch(/\nlikely cause: .*--manifests folder/);
  });

  it("fails naming the route when the served endpoints differ from the Service", async () => {
    const dir = variant("route", "observed.yaml", (t) => t.replace("clusterIP: 172.30.1.1", "clusterIP: 172.30.1.9"));
    const { code, rows } = await verify(dir);
    expect(code).toBe(1);
    const failed = rows.filter((r) => r.verdict === "FAIL");
    expect(failed.map((r) => r.check)).toContain("route api.alpha.clusters.example.com:6443 (from 127.0.8.254)");
    expect(failed.every((r) => r.failure === "route-wrong-endpoints" && r.object === "clusters/alpha")).toBe(true);
    expect(failed[0]?.detail).toBe(
      "clusters-alpha/kube-apiserver:6443 → 172.30.1.1:6443, the model says 172.30.1.9:6443",
    );
    expect(failed[0]?.fix).toContain("kubectl -n CP get svc");
  });

  it("fails naming the VMI when its reported address is not its reservation", async () => {
    // alpha-workers-0 reports the address alpha-workers-1 holds: it keeps a pool address instead.
    const dir = variant("dhcp", "observed.yaml", (t) =>
      t.replace(/(mac: "02:00:00:00:01:0a"\n +ipAddress: )127\.0\.8\.10/, "$1127.0.8.11"),
    );
    const { code, rows } = await verify(dir);
    expect(code).toBe(1);
    const failed = rows.filter((r) => r.verdict === "FAIL" && r.failure === "reservation-mismatch");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.check).toMatch(/^dhcp 02:00:00:00:01:0[ab]$/);
    expect(failed[0]?.detail).toMatch(/^reports 127\.0\.8\.11, reserved 127\.0\.8\.\d+$/);
    expect(failed[0]?.fix).toContain("only oooi's Kea serves the VLAN");
  });

  it("fails with Envoy's NACK text, and names the known groups for a mistyped node.cluster", async () => {
    const nacking = connect("clusters/tenant-vlan-proxy", "envoy-nack", (t) =>
      t === LISTENER_TYPE_URL ? "listener rejected (test)" : undefined,
    );
    const typo = connect("clusters/tenant-vlan-proxi", "envoy-typo");
    await until(() => nacking.connected && typo.connected, "both Envoys connected");
    await until(async () => {
      const { rows } = await verify(served);
      return rows.some((r) => r.check === "ack envoy-nack lds" && r.verdict === "FAIL");
    }, "the NACK is reported");
    const { code, rows } = await verify(served);
    expect(code).toBe(1);
    expect(rows.find((r) => r.check === "ack envoy-nack lds")).toMatchObject({ failure: "node-nack" });
    expect(rows.find((r) => r.check === "ack envoy-nack lds")?.detail).toContain("listener rejected (test)");
    expect(rows.find((r) => r.check === "ack envoy-typo")).toMatchObject({
      verdict: "FAIL",
      failure: "node-unknown-group",
      detail:
        "node.cluster clusters/tenant-vlan-proxi is not a node group; known: clusters/tenant-vlan-dhcp, clusters/tenant-vlan-proxy",
    });
    nacking.close();
    typo.close();
  });
});
