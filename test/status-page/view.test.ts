// The status page's data as a pure function: a real rendering of the examples and a real xDS status
// record → the view the page draws. Unhappy paths first: nothing rendered yet, a client in a node
// group no Infra serves, a NACK (with its text) and the ACK that clears it, an invalid Infra's
// problems with their field paths.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAll } from "../../src/pipeline/outputs.js";
import { buildStatusView, GONE_SHOWN, PUSHES_SHOWN } from "../../src/status-page/view.js";
import { loadManifestDir } from "../../src/watchers/manifests.js";
import { PROBE_USER_AGENT, XdsStatus } from "../../src/xds/client-status.js";

const ROOT = join(import.meta.dirname, "..", "..");
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

async function model(example: string) {
  const load = await loadManifestDir(join(ROOT, "examples", example));
  if (!load.ok) throw new Error(`example ${example} unreadable`);
  return renderAll(load.state, { now: 0 }).model;
}

function open(s: XdsStatus, id: string, group: string, at = 1_000, userAgent = "envoy"): void {
  s.recordOpen(
    {
      streamId: `s-${id}`,
      node: { id, cluster: group, userAgent },
      peer: "ipv4:127.0.0.1:1",
      protocol: "sotw",
      service: "ads",
      connectedAt: at,
    },
    () => undefined,
  );
}

function send(s: XdsStatus, id: string, group: string, typeUrl: string, version: string, at: number) {
  const nonce = `${version}-${String(at)}`;
  const push = s.recordSent(
    `s-${id}`,
    group,
    typeUrl,
    { version, nonce, at, resources: 2, removed: 0, bytes: 10 },
    "change",
    at - 3,
  );
  return {
    ack: (after: number) => {
      s.recordAck(`s-${id}`, push, { version, nonce, at: at + after }, typeUrl);
    },
    nack: (after: number, message: string) => {
      s.recordNack(`s-${id}`, push, { version, nonce, at: at + after, code: 3, message }, typeUrl);
    },
  };
}

describe("buildStatusView", () => {
  it("says nothing is rendered before the first rendering, and still lists connected clients", () => {
    const s = new XdsStatus();
    open(s, "envoy-0", "clusters/typo-proxy");
    const view = buildStatusView({ model: undefined, nodes: s.nodes(), pushes: s.history() });
    expect(view.rendered).toBe(false);
    expect(view.infras).toEqual([]);
    expect(view.nodeGroups).toEqual([
      {
        group: "clusters/typo-proxy",
        kind: "unknown",
        versions: {},
        clients: [{ id: "envoy-0", userAgent: "envoy", connected: true, probe: false, types: [] }],
      },
    ]);
  });

  it("marks a client whose node.cluster no Infra serves as unknown, beside the served groups with no client", async () => {
    const s = new XdsStatus();
    open(s, "envoy-typo", "clusters/tenant-vlan-prxy");
    const view = buildStatusView({ model: await model("standalone"), nodes: s.nodes(), pushes: [] });
    expect(view.nodeGroups.map((g) => [g.group, g.kind, g.clients.map((c) => c.id)])).toEqual([
      ["clusters/tenant-vlan-dhcp", "dhcp", []],
      ["clusters/tenant-vlan-proxy", "envoy", []],
      ["clusters/tenant-vlan-prxy", "unknown", ["envoy-typo"]],
    ]);
    expect(view.health.unknownGroups).toEqual([
      { group: "clusters/tenant-vlan-prxy", nearest: "clusters/tenant-vlan-proxy" },
    ]);
    expect(view.headline).toBe("unknown group clusters/tenant-vlan-prxy (did you mean clusters/tenant-vlan-proxy?)");
  });

  it("reads a client held back after its NACK as BEHIND, not SYNCED, beside its group's current versions", async () => {
    const s = new XdsStatus();
    const group = "clusters/tenant-vlan-proxy";
    open(s, "envoy-0", group);
    send(s, "envoy-0", group, CDS, "c1", 2_000).ack(5);
    send(s, "envoy-0", group, LDS, "l2", 2_000).nack(7, "duplicate filter chain match");
    const current = new Map([
      [
        group,
        new Map([
          [CDS, "c2"],
          [LDS, "l2"],
        ]),
      ],
    ]);
    const view = buildStatusView({
      model: await model("standalone"),
      nodes: s.nodes(),
      pushes: [],
      current: (g) => current.get(g),
    });
    const g = view.nodeGroups.find((x) => x.group === group);
    expect(g?.versions).toEqual({ cds: "c2", lds: "l2" });
    expect(g?.clients[0]?.types.map((t) => [t.type, t.state, t.reason, t.ackedVersion, t.currentVersion])).toEqual([
      ["cds", "BEHIND", "held-back-after-nack", "c1", "c2"],
      ["lds", "ERROR", undefined, undefined, "l2"],
    ]);
    expect(view.headline).toBe("1 in error");
  });

  it("shows a NACK with Envoy's text while it is the latest answer, and clears it once a new version is ACKed", async () => {
    const s = new XdsStatus();
    const group = "clusters/tenant-vlan-proxy";
    open(s, "envoy-0", group);
    send(s, "envoy-0", group, CDS, "c1", 2_000).ack(5);
    send(s, "envoy-0", group, LDS, "l1", 2_000).nack(7, "<script>alert(1)</script> duplicate filter chain match");
    const m = await model("standalone");
    const types = () =>
      buildStatusView({ model: m, nodes: s.nodes(), pushes: s.history() }).nodeGroups.find((g) => g.group === group)
        ?.clients[0]?.types;
    expect(types()).toEqual([
      { type: "cds", state: "SYNCED", sentVersion: "c1", ackedVersion: "c1", nack: undefined },
      {
        type: "lds",
        state: "ERROR",
        sentVersion: "l1",
        ackedVersion: undefined,
        nack: "<script>alert(1)</script> duplicate filter chain match",
      },
    ]);
    send(s, "envoy-0", group, LDS, "l2", 3_000).ack(4);
    expect(types()?.[1]).toEqual({
      type: "lds",
      state: "SYNCED",
      sentVersion: "l2",
      ackedVersion: "l2",
      nack: undefined,
    });
  });

  it("lists `oooi verify`'s probe as a probe, outside the headline, and forgets it once its stream closes", () => {
    const s = new XdsStatus();
    const group = "ns/proxy";
    open(s, "oooi-verify", group, 1_000, PROBE_USER_AGENT);
    // Sent, not answered yet: a data plane in this state would be a proxy behind.
    send(s, "oooi-verify", group, LDS, "l1", 2_000);
    const view = buildStatusView({ model: undefined, nodes: s.nodes(), pushes: [] });
    expect(view.headline).toBe("");
    expect(view.health).toEqual({ behind: 0, error: 0, unknownGroups: [] });
    expect(view.nodeGroups[0]?.clients.map((c) => [c.id, c.probe, c.connected, c.types[0]?.state])).toEqual([
      ["oooi-verify", true, true, "BEHIND"],
    ]);
    s.recordClose("s-oooi-verify", 2_100);
    expect(s.nodes()).toEqual([]);
    expect(buildStatusView({ model: undefined, nodes: s.nodes(), pushes: [] }).nodeGroups).toEqual([]);
  });

  it("shows a client that disconnected as GONE since its disconnect, outside the headline, at most GONE_SHOWN", () => {
    const s = new XdsStatus();
    const group = "ns/proxy";
    open(s, "envoy-0", group);
    send(s, "envoy-0", group, LDS, "l1", 2_000);
    expect(buildStatusView({ model: undefined, nodes: s.nodes(), pushes: [] }).headline).toBe(
      "1 proxy behind · unknown group ns/proxy",
    );
    s.recordClose("s-envoy-0", 5_000);
    const view = buildStatusView({ model: undefined, nodes: s.nodes(), pushes: [] });
    expect(view.headline).toBe("");
    expect(view.nodeGroups[0]?.clients.map((c) => [c.id, c.connected, c.goneSince])).toEqual([
      ["envoy-0", false, 5_000],
    ]);
    for (let i = 1; i <= GONE_SHOWN + 5; i += 1) {
      open(s, `envoy-${String(i)}`, group, 6_000 + i);
      s.recordClose(`s-envoy-${String(i)}`, 7_000 + i);
    }
    open(s, "envoy-live", group, 9_000);
    const many = buildStatusView({ model: undefined, nodes: s.nodes(), pushes: [] }).nodeGroups[0]?.clients ?? [];
    // The live client and the GONE_SHOWN most recently gone; envoy-0 and the first five gone are not shown.
    expect(many.filter((c) => c.connected).map((c) => c.id)).toEqual(["envoy-live"]);
    const gone = many.filter((c) => !c.connected).map((c) => c.goneSince ?? 0);
    expect(gone).toHaveLength(GONE_SHOWN);
    expect(Math.min(...gone)).toBe(7_006);
  });

  it("lists pushes newest first with change→sent and change→answer latencies, at most PUSHES_SHOWN", () => {
    const s = new XdsStatus();
    const group = "ns/proxy";
    open(s, "envoy-0", group);
    send(s, "envoy-0", group, CDS, "c1", 2_000).ack(10);
    send(s, "envoy-0", group, LDS, "l1", 2_001).nack(20, "bad");
    send(s, "envoy-0", group, LDS, "l2", 2_002);
    const view = buildStatusView({ model: undefined, nodes: s.nodes(), pushes: s.history() });
    expect(view.pushes.map((p) => [p.version, p.type, p.sentMs, p.answeredMs, p.result])).toEqual([
      ["l2", "lds", 3, undefined, "pending"],
      ["l1", "lds", 3, 23, "nacked"],
      ["c1", "cds", 3, 13, "acked"],
    ]);
    for (let i = 0; i < PUSHES_SHOWN + 5; i += 1) send(s, "envoy-0", group, CDS, `c${String(i + 2)}`, 3_000 + i);
    const many = buildStatusView({ model: undefined, nodes: s.nodes(), pushes: s.history() }).pushes;
    expect(many).toHaveLength(PUSHES_SHOWN);
    expect(many[0]?.version).toBe(`c${String(PUSHES_SHOWN + 6)}`);
  });

  it("shows every Infra with its attachments, workers and the source routes that match them", async () => {
    const view = buildStatusView({ model: await model("standalone"), nodes: [], pushes: [] });
    expect(view.infras.map((i) => [i.name, i.proxyGroup, i.dhcpGroup, i.dnsServer])).toEqual([
      ["clusters/tenant-vlan", "clusters/tenant-vlan-proxy", "clusters/tenant-vlan-dhcp", "clusters/tenant-vlan-dns"],
    ]);
    const alpha = view.infras[0]?.attachments.find((a) => a.name === "clusters/alpha");
    expect(alpha).toMatchObject({
      domain: "alpha.clusters.example.com",
      controlPlaneNamespace: "clusters-alpha",
      served: true,
    });
    expect(alpha?.workers.length).toBeGreaterThan(0);
    // Only the no-SNI and kubernetes-alias backends match on source; each covers every worker.
    expect(alpha?.sourceRoutes.map((r) => [r.backend, r.port])).toEqual([
      ["kubernetes-hostname", 443],
      ["kubernetes-service", 6443],
    ]);
    for (const r of alpha?.sourceRoutes ?? [])
      for (const w of alpha?.workers ?? []) expect(r.prefixes.some((p) => covers(p, w))).toBe(true);
  });

  it("lists the problems of an invalid Infra with their field paths, and still shows the valid one", async () => {
    const view = buildStatusView({ model: await model("invalid-infra"), nodes: [], pushes: [] });
    expect(view.infras.map((i) => i.name)).toEqual(["clusters/tenant-vlan100"]);
    const broken = view.problems.filter((p) => p.object === "Infra clusters/broken-vlan200");
    expect(broken.length).toBeGreaterThan(0);
    for (const p of broken) expect(p.field).toMatch(/^spec\./);
  });
});

function covers(prefix: string, address: string): boolean {
  const [base = "", bits = "32"] = prefix.split("/");
  const n = (ip: string) => ip.split(".").reduce((acc, o) => acc * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(address) / size) === Math.floor(n(base) / size);
}
