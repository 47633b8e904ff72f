// Prometheus metrics: xDS pushes, latencies, NACKs, streams and bytes from a real ADS exchange, the
// scrape endpoint over HTTP, the factories others register through, and no global registry use.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { register as globalRegistry } from "prom-client";
import { afterEach, describe, expect, test } from "vitest";
import { attachXdsMetrics, Metrics, metricsHandler } from "../../src/metrics/index.js";
import { CLUSTER_TYPE_URL, LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { openSotw } from "../support/envoy/raw.js";
import { ALPHA, BETA, GROUP, publish, rendered, startRig, versionsOf, type Rig } from "../xds/server/fixtures.js";

let rig: Rig | undefined;
let http: Server | undefined;
const clients: EnvoyLikeClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
  if (http)
    await new Promise<void>((resolve) =>
      http?.close(() => {
        resolve();
      }),
    );
  http = undefined;
});

/** Samples of a Prometheus text exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("xDS metrics", () => {
  test("count pushes, latencies, NACKs, streams and bytes of a real exchange", async () => {
    rig = await startRig();
    const r = rig;
    const metrics = new Metrics();
    attachXdsMetrics(metrics, r.server.status, { cache: r.cache });
    publish(r.cache, GROUP, rendered([ALPHA]));
    const c = new EnvoyLikeClient({ address: r.address, node: { id: "envoy-0", cluster: GROUP } });
    clients.push(c);
    c.connect();
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    await c.barrier(); // a probe of an unknown type: not configuration, not counted

    const reason = "listener rejected (test)";
    c.validate = (t) => (t === LISTENER_TYPE_URL ? reason : undefined);
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    let s = new Map<string, number>();
    await until(async () => {
      s = samples(await metrics.render());
      return (
        s.get('oooi_xds_nacks_total{type="lds",repeat="false"}') === 1 &&
        (s.get('oooi_xds_push_ack_seconds_count{type="cds",cause="change"}') ?? 0) >= 1
      );
    }, "the NACK and the CDS ACK to be counted");

    expect(s.get('oooi_xds_pushes_total{type="lds",cause="subscription"}')).toBe(1);
    expect(s.get('oooi_xds_pushes_total{type="lds",cause="change"}')).toBe(1);
    expect(s.get('oooi_xds_pushes_total{type="cds",cause="change"}')).toBe(1);
    expect([...s.keys()].some((k) => k.includes("EnvoyLikeBarrier"))).toBe(false);
    expect(s.get('oooi_xds_push_sent_seconds_count{type="lds",cause="change"}')).toBe(1);
    // The rejected LDS push never gets a change→ACK observation; the first one did.
    expect(s.get('oooi_xds_push_ack_seconds_count{type="lds",cause="change"}') ?? 0).toBe(0);
    expect(s.get('oooi_xds_push_ack_seconds_count{type="lds",cause="subscription"}')).toBe(1);
    expect(s.get('oooi_xds_streams{protocol="sotw"}')).toBe(1);
    expect(s.get('oooi_xds_streams{protocol="delta"}')).toBe(0);
    const ldsBytes = c.log.filter((x) => x.typeUrl === LISTENER_TYPE_URL).reduce((sum, x) => sum + x.bytes, 0);
    expect(s.get('oooi_xds_pushed_bytes_total{type="lds"}')).toBe(ldsBytes);
    const snap = r.cache.getSnapshot(GROUP);
    expect(s.get('oooi_xds_snapshot_bytes{type="lds"}')).toBe(snap?.types.get(LISTENER_TYPE_URL)?.bytes);

    c.close();
    await until(
      async () => samples(await metrics.render()).get('oooi_xds_streams{protocol="sotw"}') === 0,
      "the stream to close",
    );
  });

  test("count each node group's clients by health: SYNCED after the ACKs, BEHIND while one awaits its ACK, ERROR while the latest is NACKed", async () => {
    rig = await startRig();
    const r = rig;
    const metrics = new Metrics();
    attachXdsMetrics(metrics, r.server.status, { cache: r.cache });
    const clientsOf = async () => {
      const s = samples(await metrics.render());
      return Object.fromEntries(
        ["SYNCED", "NOT_SENT", "BEHIND", "ERROR"].map((st) => [
          st,
          s.get(`oooi_xds_clients{group="${GROUP}",state="${st}"}`),
        ]),
      );
    };
    expect(await clientsOf()).toEqual({ SYNCED: undefined, NOT_SENT: undefined, BEHIND: undefined, ERROR: undefined });
    publish(r.cache, GROUP, rendered([ALPHA]));
    const c = new EnvoyLikeClient({ address: r.address, node: { id: "envoy-0", cluster: GROUP } });
    clients.push(c);
    c.connect();
    await c.waitForVersions(versionsOf(r.cache, GROUP));
    await until(async () => (await clientsOf())["SYNCED"] === 1, "the stream to count as SYNCED");
    expect(await clientsOf()).toEqual({ SYNCED: 1, NOT_SENT: 0, BEHIND: 0, ERROR: 0 });

    // A client that takes the clusters and never answers is BEHIND (awaiting its ACK), as the status page says.
    const silent = openSotw(r.address);
    silent.send({ node: { id: "silent-0", cluster: GROUP }, type_url: CLUSTER_TYPE_URL });
    await silent.next();
    await until(async () => (await clientsOf())["BEHIND"] === 1, "the silent client to count as BEHIND");
    expect(await clientsOf()).toEqual({ SYNCED: 1, NOT_SENT: 0, BEHIND: 1, ERROR: 0 });
    silent.close();
    await until(async () => (await clientsOf())["BEHIND"] === 0, "the silent client to leave the count");

    c.validate = (t) => (t === LISTENER_TYPE_URL ? "listener rejected (test)" : undefined);
    publish(r.cache, GROUP, rendered([ALPHA, BETA]));
    await until(async () => (await clientsOf())["ERROR"] === 1, "the NACKing stream to count as ERROR");
    expect(await clientsOf()).toEqual({ SYNCED: 0, NOT_SENT: 0, BEHIND: 0, ERROR: 1 });
  });

  test("live on their own registry: two instances coexist and the global registry stays empty", async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.xdsPushes.inc({ type: "lds", cause: "change" });
    expect(await a.render()).toContain('oooi_xds_pushes_total{type="lds",cause="change"} 1');
    expect(await b.render()).not.toContain('oooi_xds_pushes_total{type="lds",cause="change"} 1');
    expect(await globalRegistry.metrics()).not.toContain("oooi_");
  });
});

describe("metric factories", () => {
  test("counter/gauge/histogram register once and are reused by name", async () => {
    const m = new Metrics();
    const c1 = m.counter("oooi_test_things_total", "Things.", ["kind"]);
    const c2 = m.counter("oooi_test_things_total", "Things.", ["kind"]);
    expect(c2).toBe(c1);
    c1.inc({ kind: "a" }, 2);
    m.gauge("oooi_test_level", "Level.", [], (g) => {
      g.set(7);
    });
    m.histogram("oooi_test_seconds", "Time.", [], [0.1, 1]).observe(0.5);
    const s = samples(await m.render());
    expect(s.get('oooi_test_things_total{kind="a"}')).toBe(2);
    expect(s.get("oooi_test_level")).toBe(7);
    expect(s.get('oooi_test_seconds_bucket{le="0.1"}')).toBe(0);
    expect(s.get('oooi_test_seconds_bucket{le="1"}')).toBe(1);
    expect(() => m.gauge("oooi_test_things_total", "Clash.")).toThrow(/another type/);
  });

  test("a catalogue recorder (the operator's shape) records by name into the same registry", async () => {
    const m = new Metrics();
    const rec = m.recorder({
      oooi_reconcile_total: { type: "counter", help: "Reconciles.", labelNames: ["result"] },
      oooi_leader: { type: "gauge", help: "Leader.", labelNames: [] },
      oooi_reconcile_duration_seconds: { type: "histogram", help: "Duration.", labelNames: [], buckets: [0.01, 1] },
    });
    rec.inc("oooi_reconcile_total", { result: "ok" });
    rec.inc("oooi_reconcile_total", { result: "ok" }, 2);
    rec.set("oooi_leader", 1);
    rec.observe("oooi_reconcile_duration_seconds", 0.005);
    const s = samples(await rec.render());
    expect(s.get('oooi_reconcile_total{result="ok"}')).toBe(3);
    expect(s.get("oooi_leader")).toBe(1);
    expect(s.get('oooi_reconcile_duration_seconds_bucket{le="0.01"}')).toBe(1);
    // One registry: the recorder's render includes the xDS metrics too.
    expect(await rec.render()).toContain("# TYPE oooi_xds_streams gauge");
    expect(rec.contentType).toMatch(/^text\/plain/);
    expect(() => {
      rec.set("oooi_reconcile_total", 1);
    }).toThrow(/not a gauge/);
  });
});

describe("metricsHandler", () => {
  test("serves /metrics in the Prometheus text format over node:http", async () => {
    const m = new Metrics();
    m.xdsNacks.inc({ type: "cds", repeat: "false" });
    const server = createServer(metricsHandler(m));
    http = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await res.text();
    expect(body).toContain("# TYPE oooi_xds_nacks_total counter");
    expect(body).toContain('oooi_xds_nacks_total{type="cds",repeat="false"} 1');
    expect((await fetch(`${base}/other`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(405);
    const head = await fetch(`${base}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
  });
});
