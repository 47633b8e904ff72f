// Replica reports: the pure report of a replica's nodes (a NACK counts only while newer than the
// last ACK), its ConfigMap round trip and refusal of garbage; and FleetReports on a manual clock —
// a report counts while its heartbeat Lease moves and expires a whole expiry period after it
// stopped moving, writes happen only on change and at most once per interval.
import { afterEach, describe, expect, it } from "vitest";
import { FleetReports } from "../../src/operator/status/fleet.js";
import {
  buildReport,
  parseReport,
  reportConfigMap,
  reportedFacts,
  reportName,
} from "../../src/operator/status/report.js";
import { KubeRest } from "../../src/kube/rest.js";
import { XdsStatus } from "../../src/xds/client-status.js";
import { eventually, kubeConfigFor, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { seededFake, stored } from "./support.js";
import { ManualClock } from "../support/manual-clock.js";

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const NS = "oooi-system";

/** A status with one connected node of `group` that got `version` of LDS and answered `answer`. */
function statusWith(id: string, group: string, answer: "ack" | "nack" | "nack-then-ack", at = 1_000): XdsStatus {
  const s = new XdsStatus();
  s.recordOpen(
    {
      streamId: `s-${id}`,
      node: { id, cluster: group, userAgent: "envoy" },
      peer: "ipv4:127.0.0.1:1",
      protocol: "sotw",
      service: "ads",
      connectedAt: at,
    },
    () => undefined,
  );
  const sent = { version: "v2", nonce: "n1", at, resources: 1, removed: 0, bytes: 10 };
  const push = s.recordSent(`s-${id}`, group, LDS, sent, "change", at);
  if (answer !== "ack") s.recordNack(`s-${id}`, push, { version: "v2", nonce: "n1", at, code: 3, message: "bad" }, LDS);
  if (answer !== "nack") s.recordAck(`s-${id}`, push, { version: "v2", nonce: "n1", at: at + 1 }, LDS);
  return s;
}

describe("buildReport / parseReport", () => {
  it("reports connected nodes only, a NACK while it is newer than the last ACK, and round-trips", () => {
    const nacked = buildReport("r", statusWith("p0", "ns/proxy", "nack").nodes());
    expect(nacked.nodes).toEqual([
      {
        id: "p0",
        group: "ns/proxy",
        replica: "r",
        userAgent: "envoy",
        types: [{ typeUrl: LDS, nack: { version: "v2", message: "bad" }, sent: "v2", answer: "nack" }],
      },
    ]);
    const recovered = buildReport("r", statusWith("p0", "ns/proxy", "nack-then-ack").nodes());
    expect(recovered.nodes[0]?.types).toEqual([{ typeUrl: LDS, acked: "v2", sent: "v2", answer: "ack" }]);
    const closed = statusWith("p0", "ns/proxy", "ack");
    closed.recordClose("s-p0", 2_000);
    expect(buildReport("r", closed.nodes()).nodes).toEqual([]);
    expect(parseReport(reportConfigMap(NS, nacked))).toEqual(nacked);
  });

  it("makes a node's report once per view of it and replica: an unchanged node keeps its report object", () => {
    const status = statusWith("p0", "ns/proxy", "ack");
    const [view] = status.nodes();
    const [report] = buildReport("r", status.nodes()).nodes;
    expect(buildReport("r", status.nodes()).nodes[0]).toBe(report);
    const elsewhere = buildReport("other", status.nodes()).nodes[0];
    expect(elsewhere?.replica).toBe("other");
    expect(buildReport("r", status.nodes()).nodes[0]).toEqual(report);
    status.recordNack("s-p0", undefined, { version: "v2", nonce: "n1", at: 5_000, code: 3, message: "bad" }, LDS);
    expect(status.nodes()[0]).not.toBe(view);
    const [nacked] = buildReport("r", status.nodes()).nodes;
    expect(nacked?.types[0]?.nack).toEqual({ version: "v2", message: "bad" });
    expect(buildReport("r", status.nodes()).nodes[0]).toBe(nacked);
  });

  it.each([
    [
      "a NACK of the latest",
      { typeUrl: LDS, nack: { version: "v2", message: "bad" }, sent: "v2", answer: "nack" },
      ["v2", "nack", "bad"],
    ],
    ["awaiting its answer", { typeUrl: LDS, acked: "v1", sent: "v2" }, ["v2", undefined, undefined]],
    [
      "a replica's report before `sent` (a rollout): its NACK",
      { typeUrl: LDS, acked: "v1", nack: { version: "v2", message: "bad" } },
      ["v2", "nack", "bad"],
    ],
    ["a replica's report before `sent` (a rollout): its ACK", { typeUrl: LDS, acked: "v1" }, ["v1", "ack", undefined]],
  ] as const)("the health facts of a reported type: %s", (_name, t, [sent, answer, nack]) => {
    const facts = reportedFacts(t);
    expect([facts.sent, facts.answer, facts.nack]).toEqual([sent, answer, nack]);
  });

  it.each([
    ["no data", {}],
    ["not JSON", { data: { "report.json": "{" } }],
    ["no replica", { data: { "report.json": '{"nodes":[]}' } }],
    ["nodes not a list", { data: { "report.json": '{"replica":"x","nodes":3}' } }],
  ])("a ConfigMap with %s is no report", (_name, cm) => {
    expect(parseReport(cm)).toBeUndefined();
  });

  it("drops malformed nodes and keeps the others; a node is attributed to the report's replica", () => {
    const text = JSON.stringify({
      replica: "b",
      nodes: [{ id: 1 }, { id: "ok", group: "g", replica: "forged", userAgent: "envoy", types: [] }],
    });
    expect(parseReport({ data: { "report.json": text } })?.nodes).toEqual([
      { id: "ok", group: "g", replica: "b", userAgent: "envoy", types: [] },
    ]);
  });

  it("names are DNS labels whatever the pod name", () => {
    expect(reportName("oooi-7d9f_AB12")).toBe("oooi-report-oooi-7d9f-ab12");
    expect(reportName("x".repeat(100))).toHaveLength(63);
  });
});

let fake: FakeApiServer | undefined;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  await fake?.stop();
  fake = undefined;
});

describe("FleetReports (manual clock)", () => {
  it("counts another replica's nodes while its heartbeat moves; expires them a whole period after it stops", async () => {
    fake = await seededFake();
    const f = fake;
    const rest = new KubeRest(kubeConfigFor(f.url));
    const clock = new ManualClock();
    const timing = { heartbeatMs: 1_000, expiryMs: 5_000, minIntervalMs: 1_000 };
    const fleet = (replica: string, status: XdsStatus) =>
      new FleetReports({ rest, namespace: NS, replica, status, clock, fieldManager: "oooi", timing });
    const leader = fleet("a", new XdsStatus());
    const other = fleet("b", statusWith("p0", "ns/proxy", "ack"));
    stops.push(() => leader.stop());
    leader.start();
    other.start();
    clock.advance(0); // the first report write is due at once
    const beats = () => f.requests.count({ verb: "patch", resource: "leases" });
    /** Advances the clock and waits for the heartbeats it fires. */
    const step = async (ms: number, wantBeats: number) => {
      const before = beats();
      clock.advance(ms);
      await eventually(() => {
        expect(beats()).toBeGreaterThanOrEqual(before + wantBeats);
      });
      await new Promise((r) => setTimeout(r, 30));
    };
    await eventually(() => {
      expect(leader.nodes().map((n) => `${n.id}@${n.replica}`)).toEqual(["p0@b"]);
    });
    for (let i = 0; i < 8; i++) await step(1_000, 2);
    expect(leader.nodes().map((n) => n.id)).toEqual(["p0"]);

    // b is killed: no more heartbeats, its report stays behind.
    await other.stop();
    for (let i = 0; i < 4; i++) await step(1_000, 1);
    expect(leader.nodes().map((n) => n.id)).toEqual(["p0"]);
    expect(leader.replicas()).toEqual([
      { replica: "a", live: true, nodes: 0 },
      { replica: "b", live: true, nodes: 1 },
    ]);
    for (let i = 0; i < 2; i++) await step(1_000, 1);
    expect(leader.nodes()).toEqual([]);
    expect(leader.replicas()[1]).toEqual({ replica: "b", live: false, nodes: 1 });
    expect(stored(f, "v1", "ConfigMap", NS, "oooi-report-b")).toBeDefined();
  });

  it("hands out the same node objects while nothing changed: its own while their views stay, another's while its ConfigMap stays", async () => {
    fake = await seededFake();
    const rest = new KubeRest(kubeConfigFor(fake.url));
    const clock = new ManualClock();
    const timing = { heartbeatMs: 1_000, expiryMs: 5_000, minIntervalMs: 1_000 };
    const fleet = (replica: string, status: XdsStatus) =>
      new FleetReports({ rest, namespace: NS, replica, status, clock, fieldManager: "oooi", timing });
    const own = statusWith("q0", "ns/proxy", "ack");
    const theirs = statusWith("p0", "ns/proxy", "ack");
    const leader = fleet("a", own);
    const other = fleet("b", theirs);
    stops.push(
      () => leader.stop(),
      () => other.stop(),
    );
    leader.start();
    other.start();
    clock.advance(0);
    await eventually(() => {
      expect(leader.nodes().map((n) => `${n.id}@${n.replica}`)).toEqual(["q0@a", "p0@b"]);
    });
    const [q0, p0] = leader.nodes();
    leader.nodes().forEach((n, i) => {
      expect(n).toBe([q0, p0][i]);
    });
    // b's node NACKs v3: b writes its report again (once its first write is done and an interval has
    // passed — the clock moves a little at each look), and only that node is new.
    const sent = { version: "v3", nonce: "n2", at: 5_000, resources: 1, removed: 0, bytes: 10 };
    const push = theirs.recordSent("s-p0", "ns/proxy", LDS, sent, "change", 5_000);
    theirs.recordNack("s-p0", push, { version: "v3", nonce: "n2", at: 5_001, code: 3, message: "bad" }, LDS);
    await eventually(() => {
      clock.advance(100);
      expect(leader.nodes()[1]?.types[0]?.nack).toEqual({ version: "v3", message: "bad" });
    });
    const [q0Again, p0Nacked] = leader.nodes();
    expect(q0Again).toBe(q0);
    expect(p0Nacked).not.toBe(p0);
    // The leader's own node ACKs again: only it is new.
    own.recordAck("s-q0", undefined, { version: "v2", nonce: "n1", at: 6_000 }, LDS);
    const [q0Acked, p0Kept] = leader.nodes();
    expect(q0Acked).not.toBe(q0);
    expect(p0Kept).toBe(p0Nacked);
  });

  it("writes its report only when it changed, at most once per interval, and nothing while idle", async () => {
    fake = await seededFake();
    const f = fake;
    const clock = new ManualClock();
    const status = new XdsStatus();
    const reports = new FleetReports({
      rest: new KubeRest(kubeConfigFor(f.url)),
      namespace: NS,
      replica: "a",
      status,
      clock,
      fieldManager: "oooi",
      timing: { heartbeatMs: 1_000, expiryMs: 5_000, minIntervalMs: 1_000 },
    });
    stops.push(() => reports.stop());
    reports.start();
    const writes = () => f.requests.count({ verb: "patch", resource: "configmaps" });
    clock.advance(0);
    await eventually(() => {
      expect(writes()).toBe(1);
    });
    // Three nodes connect within one interval: one more write, after the interval.
    for (const id of ["p0", "p1", "p2"])
      status.recordOpen(
        {
          streamId: id,
          node: { id, cluster: "ns/proxy", userAgent: "envoy" },
          peer: "ipv4:127.0.0.1:1",
          protocol: "sotw",
          service: "ads",
          connectedAt: clock.now(),
        },
        () => undefined,
      );
    await new Promise((r) => setTimeout(r, 50));
    expect(writes()).toBe(1);
    clock.advance(1_000);
    await eventually(() => {
      expect(writes()).toBe(2);
    });
    const report = parseReport(stored(f, "v1", "ConfigMap", NS, "oooi-report-a") ?? {});
    expect(report?.nodes.map((n) => n.id)).toEqual(["p0", "p1", "p2"]);
    // Idle: heartbeats go on, the report is not written again.
    for (let i = 0; i < 5; i++) {
      clock.advance(1_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(writes()).toBe(2);
    expect(f.requests.count({ verb: "patch", resource: "leases" })).toBeGreaterThanOrEqual(5);
  });
});
