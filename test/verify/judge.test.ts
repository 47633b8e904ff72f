// verify's judges, a row per rule: what a probe saw against what the model says, and the
// Troubleshooting row a failure names. The plan is checked on the npm start example.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAll } from "../../src/pipeline/outputs.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";
import { judgeDns, judgeNode, judgeReservation } from "../../src/verify/judge.js";
import { planChecks, vlanProbeSource, type DnsCheck } from "../../src/verify/plan.js";
import { verifyExitCode } from "../../src/verify/report.js";
import type { NodeMessage, TypeStateMessage } from "../../src/xds/introspect/debug-client.js";
import { ROOT } from "../support/cli.js";

const api: DnsCheck = {
  kind: "dns",
  infra: "clusters/tenant-vlan",
  view: "vlan",
  source: "127.0.8.254",
  name: "api.alpha.example.com",
  expected: ["127.0.8.4"],
};
const podOnly: DnsCheck = { ...api, view: "default", source: "127.0.0.1", expected: "forwarded" };
const answer = (rcode: number, authoritative: boolean, addresses: string[] = []) => ({
  rcode,
  authoritative,
  addresses,
});

describe("judgeDns", () => {
  it.each([
    { name: "the model's answer passes", check: api, got: answer(0, true, ["127.0.8.4"]), verdict: "PASS" },
    { name: "another address fails", check: api, got: answer(0, true, ["127.0.8.9"]), failure: "dns-wrong-answer" },
    {
      name: "a forwarded answer is not the zone's",
      check: api,
      got: answer(0, false, ["127.0.8.4"]),
      failure: "dns-wrong-answer",
    },
    { name: "no answer in time", check: api, got: new Error("no answer"), failure: "dns-unreachable" },
    {
      name: "a pod view answering from a zone leaks",
      check: podOnly,
      got: answer(0, true, ["127.0.8.4"]),
      failure: "dns-leak",
    },
    { name: "a forwarded NXDOMAIN passes", check: podOnly, got: answer(3, false), verdict: "PASS" },
    { name: "a failed forward (SERVFAIL)", check: podOnly, got: answer(2, false), failure: "dns-forward-failed" },
    {
      name: "a VLAN name answered from a shadowing zone",
      check: { ...podOnly, view: "vlan" as const },
      got: answer(3, true),
      failure: "dns-not-forwarded",
    },
  ])("$name", ({ check, got, verdict, failure }) => {
    const r = judgeDns(check, got);
    expect(r.verdict).toBe(verdict ?? "FAIL");
    expect(r.failure).toBe(failure);
    if (failure !== undefined) expect(r.fix?.length).toBeGreaterThan(0);
  });
});

function type(status: TypeStateMessage["status"], acked: string, nack?: string): TypeStateMessage {
  return {
    type_url: "type.googleapis.com/envoy.config.listener.v3.Listener",
    status,
    sent_version: "v2",
    sent_time: null,
    acked_version: acked,
    acked_time: null,
    last_nack:
      nack === undefined ? null : { version: "v2", nonce: "1", time: null, code: 3, message: nack, repeats: 1 },
    sent_resources: 2,
    acked_resources: 2,
    health: "HEALTH_UNSPECIFIED",
    current_version: "",
    behind_reason: "",
  };
}
function node(cluster: string, types: TypeStateMessage[]): NodeMessage {
  return {
    id: "envoy-0",
    cluster,
    user_agent: "envoy",
    streams: [],
    last_seen_time: null,
    types,
    unknown_group: false,
    nearest_group: "",
    gone_time: null,
    probe: false,
  };
}
const groups = new Map([["ns/p-proxy", new Map([["type.googleapis.com/envoy.config.listener.v3.Listener", "v2"]])]]);

describe("judgeNode", () => {
  it.each([
    { name: "ACKed the current version", n: node("ns/p-proxy", [type("SYNC_STATUS_SYNCED", "v2")]), verdict: "PASS" },
    {
      name: "ACKed an older version",
      n: node("ns/p-proxy", [type("SYNC_STATUS_SYNCED", "v1")]),
      failure: "node-behind",
    },
    {
      name: "NACKed, with the text",
      n: node("ns/p-proxy", [type("SYNC_STATUS_ERROR", "v1", "bad listener")]),
      failure: "node-nack",
      detail: "NACKed v2: bad listener",
    },
    { name: "not ACKed yet", n: node("ns/p-proxy", [type("SYNC_STATUS_STALE", "v1")]), failure: "node-stale" },
    {
      name: "a mistyped node.cluster names the known groups",
      n: node("ns/p-proxi", [type("SYNC_STATUS_NOT_SENT", "")]),
      failure: "node-unknown-group",
      detail: "node.cluster ns/p-proxi is not a node group; known: ns/p-proxy",
    },
  ])("$name", ({ n, verdict, failure, detail }) => {
    const [r] = judgeNode(n, groups);
    expect(r?.verdict).toBe(verdict ?? "FAIL");
    expect(r?.failure).toBe(failure);
    if (detail !== undefined) expect(r?.detail).toBe(detail);
  });
});

describe("judgeReservation", () => {
  const base = {
    kind: "reservation" as const,
    infra: "i",
    vmi: "ns/vm",
    mac: "02:00:00:00:00:01",
    reserved: "10.0.0.5",
  };
  it.each([
    { reported: "10.0.0.5", verdict: "PASS" },
    { reported: "10.0.0.6", verdict: "FAIL" },
    { reported: undefined, verdict: "SKIP" },
  ])("reported $reported → $verdict", ({ reported, verdict }) => {
    expect(judgeReservation({ ...base, reported }).verdict).toBe(verdict);
  });
  it("a SKIP never fails verify, a FAIL does", () => {
    expect(verifyExitCode([judgeReservation({ ...base, reported: undefined })])).toBe(0);
    expect(verifyExitCode([judgeReservation({ ...base, reported: "10.0.0.6" })])).toBe(1);
  });
});

describe("planChecks on npm start's example", () => {
  it("asks every published name from both views, routes every TLS backend, checks every VMI", async () => {
    const load = await loadManifestDir(join(ROOT, "examples", "standalone"));
    if (!load.ok) throw new Error("example unreadable");
    const checks = planChecks(renderAll(load.state).model.topologies, load.state.vmis, {
      podSource: "127.0.0.1",
      forwardName: "www.example.net",
    });
    const dns = checks.filter((c) => c.kind === "dns");
    expect(new Set(dns.map((c) => c.source))).toEqual(new Set(["127.0.8.254", "127.0.0.1"]));
    expect(dns.find((c) => c.view === "vlan" && c.name === "kubernetes.default.svc.cluster.local")?.expected).toEqual([
      "127.0.8.4",
    ]);
    expect(dns.find((c) => c.name === "www.example.net")?.expected).toBe("forwarded");
    const routes = checks.filter((c) => c.kind === "route");
    expect(routes.find((c) => c.backend === "clusters/beta/kubernetes-service")).toMatchObject({
      sourceIp: "127.0.8.20",
      port: 6443,
      serverName: undefined,
      endpoints: ["172.30.2.1:6443"],
    });
    expect(checks.filter((c) => c.kind === "reservation").map((c) => c.vmi)).toEqual([
      "clusters-alpha/alpha-workers-0",
      "clusters-alpha/alpha-workers-1",
      "clusters-beta/beta-workers-0",
    ]);
  });

  it.each([
    ["127.0.8.0/24", "127.0.8.254"],
    ["10.0.0.0/31", "10.0.0.1"],
    ["nonsense", undefined],
  ])("vlanProbeSource(%s) = %s", (cidr, source) => {
    expect(vlanProbeSource(cidr)).toBe(source);
  });
});
