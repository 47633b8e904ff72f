// The dhcp-agent against the real ADS server (SnapshotCache with KeaConfig registered) and a
// fake applier: what it ACKs and NACKs, with which version and nonce, what it leaves unanswered,
// how it reconnects, and what the server's status then says about the node.
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { DhcpAgent, defaultNodeId, type AgentEvent, type DhcpAgentOptions } from "../../../src/dhcp/agent/index.js";
import { KEA_CONFIG_TYPE_URL } from "../../../src/dhcp/kea-config-resource.js";
import { startXdsServer } from "../../../src/xds/server/index.js";
import type { TypeStatus, XdsStatusView } from "../../../src/xds/client-status.js";
import { FakeApplier, keaCache, lifetimeOf, publish, startTappedXds, until, type TappedXds } from "./support.js";

const NODE = "clusters/vlan100-dhcp";
const FAST = { initialMs: 10, maxMs: 40, factor: 2, jitter: 0 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Started {
  agent: DhcpAgent;
  events: AgentEvent[];
}

function startAgent(o: Omit<DhcpAgentOptions, "node" | "nodeId"> & { node?: string; nodeId?: string }): Started {
  const events: AgentEvent[] = [];
  const agent = new DhcpAgent({
    node: NODE,
    nodeId: "clusters/kea-0",
    backoff: FAST,
    ...o,
    onEvent: (e) => {
      events.push(e);
    },
  });
  agent.start();
  cleanups.push(() => agent.close());
  return { agent, events };
}

function keaType(status: XdsStatusView, nodeId: string): TypeStatus | undefined {
  return status.node(nodeId)?.types.find((t) => t.typeUrl === KEA_CONFIG_TYPE_URL);
}

async function tapped(o: Parameters<typeof startTappedXds>[0]): Promise<TappedXds> {
  const s = await startTappedXds(o);
  cleanups.push(() => s.close());
  return s;
}

describe("dhcp-agent over ADS", () => {
  it("applies the KeaConfig it subscribed to and ACKs its version and nonce; the server sees a synced node", async () => {
    const cache = keaCache();
    const dhcp4 = {
      "valid-lifetime": 3600,
      subnet4: [
        {
          id: 1,
          subnet: "192.0.2.0/24",
          reservations: [{ "hw-address": "02:00:00:00:00:01", "ip-address": "192.0.2.50" }],
        },
      ],
    };
    const version = publish(cache, NODE, dhcp4);
    publish(cache, "clusters/other-dhcp", { "valid-lifetime": 1 });
    const server = await startXdsServer({ cache, listen: "127.0.0.1:0", maxStreamAgeMs: 0 });
    cleanups.push(() => server.close());
    const applier = new FakeApplier();
    const { events } = startAgent({ xds: `127.0.0.1:${String(server.port)}`, applier });

    await until(() => keaType(server.status, "clusters/kea-0")?.lastAcked !== undefined, "the ACK");
    expect(applier.calls.map((c) => c.config)).toEqual([{ Dhcp4: dhcp4 }]);
    const t = keaType(server.status, "clusters/kea-0");
    expect(t?.lastSent?.version).toBe(version);
    expect(t?.lastAcked).toMatchObject({ version, nonce: t?.lastSent?.nonce });
    expect(t?.lastNack).toBeUndefined();
    const node = server.status.node("clusters/kea-0");
    expect(node?.node).toEqual({ id: "clusters/kea-0", cluster: NODE, userAgent: "oooi-dhcp-agent" });
    expect(node?.connectedStreams).toBe(1);
    expect(events.filter((e) => e.type === "ack")).toEqual([
      { type: "ack", stream: 1, version, nonce: t?.lastSent?.nonce, kind: "applied" },
    ]);
  });

  it("NACKs a refused version with Kea's text and the previous version; a revert is ACKed without re-applying", async () => {
    const cache = keaCache();
    const v1 = publish(cache, NODE, { "valid-lifetime": 100 });
    const xds = await tapped({ cache });
    const applier = new FakeApplier();
    const kea = "Failed to select interface: interface 'net9' doesn't exist in the system";
    applier.auto = (config) =>
      lifetimeOf(config) === 200
        ? { status: "rejected", hash: "h2", command: "config-test", result: 1, text: kea }
        : { status: "applied", hash: "h1", persisted: true, setAt: 0 };
    startAgent({ xds: xds.address, applier });
    await until(() => keaType(xds.status, "clusters/kea-0")?.lastAcked?.version === v1, "v1 ACKed");

    const v2 = publish(cache, NODE, { "valid-lifetime": 200 });
    await until(() => keaType(xds.status, "clusters/kea-0")?.lastNack !== undefined, "the NACK");
    const t = keaType(xds.status, "clusters/kea-0");
    expect(t?.lastNack).toMatchObject({ version: v2, nonce: t?.lastSent?.nonce, code: 3, message: kea });
    expect(t?.lastAcked?.version).toBe(v1); // CSDS: ERROR, the node still runs v1
    const nack = xds.requests.find((r) => r.errorDetail !== undefined);
    expect(nack).toMatchObject({
      versionInfo: v1,
      responseNonce: t?.lastSent?.nonce,
      typeUrl: KEA_CONFIG_TYPE_URL,
      resourceNames: [NODE],
      errorDetail: { code: 3, message: kea },
    });

    // Back to v1's content: Kea still runs it, so the agent ACKs without touching Kea.
    expect(publish(cache, NODE, { "valid-lifetime": 100 })).toBe(v1);
    await until(
      () =>
        keaType(xds.status, "clusters/kea-0")?.lastAcked?.nonce ===
        keaType(xds.status, "clusters/kea-0")?.lastSent?.nonce,
      "the revert ACKed",
    );
    expect(keaType(xds.status, "clusters/kea-0")?.lastAcked?.version).toBe(v1);
    expect(applier.calls.map((c) => lifetimeOf(c.config))).toEqual([100, 200]);
  });

  it("shows each agent's own ACK or NACK per node in the server's status", async () => {
    const cache = keaCache();
    const version = publish(cache, NODE, { "valid-lifetime": 300 });
    const server = await startXdsServer({ cache, listen: "127.0.0.1:0", maxStreamAgeMs: 0 });
    cleanups.push(() => server.close());
    const good = new FakeApplier();
    const bad = new FakeApplier();
    bad.auto = () => ({
      status: "rejected",
      hash: "h",
      command: "config-set",
      result: 1,
      text: "unable to open database",
    });
    startAgent({ xds: `127.0.0.1:${String(server.port)}`, applier: good, nodeId: "clusters/kea-a" });
    startAgent({ xds: `127.0.0.1:${String(server.port)}`, applier: bad, nodeId: "clusters/kea-b" });
    await until(
      () =>
        keaType(server.status, "clusters/kea-a")?.lastAcked !== undefined &&
        keaType(server.status, "clusters/kea-b")?.lastNack !== undefined,
      "both answers",
    );
    expect(keaType(server.status, "clusters/kea-a")).toMatchObject({ lastAcked: { version }, lastNack: undefined });
    expect(keaType(server.status, "clusters/kea-b")).toMatchObject({
      lastAcked: undefined,
      lastNack: { version, code: 3, message: "unable to open database" },
    });
    expect(
      server.status
        .nodes()
        .map((n) => [n.node.id, n.node.cluster])
        .sort(),
    ).toEqual([
      ["clusters/kea-a", NODE],
      ["clusters/kea-b", NODE],
    ]);
  });

  it("leaves a superseded version unanswered; the newer one's result answers on the new stream", async () => {
    const cache = keaCache();
    const vA = publish(cache, NODE, { "valid-lifetime": 1 });
    let xds = await tapped({ cache });
    const applier = new FakeApplier();
    applier.auto = undefined; // Kea "unreachable": applies stay pending until the test answers
    const { events } = startAgent({ xds: xds.address, applier });
    await until(() => applier.calls.length === 1, "A handed to the applier");
    const nonceA = keaType(xds.status, "clusters/kea-0")?.lastSent?.nonce;

    // The server goes away while A waits for Kea; it comes back with B.
    await xds.close();
    const vB = publish(cache, NODE, { "valid-lifetime": 2 });
    xds = await tapped({ cache, port: xds.port, status: xds.status, requests: xds.requests });
    await until(() => applier.calls.length === 2, "B handed to the applier");
    expect(lifetimeOf(applier.calls[1]?.config)).toBe(2);
    const reconnect = xds.requests.filter((r) => r.responseNonce === "").at(-1);
    expect(reconnect?.versionInfo).toBe(""); // Kea has accepted nothing yet

    applier.calls[0]?.resolve({ status: "superseded" });
    applier.calls[1]?.resolve({ status: "applied", hash: "hB", persisted: true, setAt: 0 });
    await until(() => keaType(xds.status, "clusters/kea-0")?.lastAcked?.version === vB, "B ACKed");
    expect(xds.requests.some((r) => r.responseNonce === nonceA)).toBe(false);
    expect(events.find((e) => e.type === "unanswered")).toMatchObject({ stream: 1, version: vA, status: "superseded" });
    // B answers on a later stream (2, or 3 when the first reconnect came before the server was back).
    const acks = events.filter((e) => e.type === "ack");
    expect(acks).toMatchObject([{ version: vB, kind: "applied" }]);
    expect((acks[0] as { stream: number }).stream).toBeGreaterThan(1);
  });

  it("reconnects with backoff after a server restart, names the ACKed version, and does not re-apply it", async () => {
    const cache = keaCache();
    const v1 = publish(cache, NODE, { "valid-lifetime": 10 });
    let xds = await tapped({ cache });
    const applier = new FakeApplier();
    const { agent, events } = startAgent({ xds: xds.address, applier, random: () => 0 });
    await until(() => keaType(xds.status, "clusters/kea-0")?.lastAcked?.version === v1, "v1 ACKed");
    expect(agent.acceptedVersion).toBe(v1);

    await xds.close();
    await until(() => events.some((e) => e.type === "stream-ended"), "the stream to break");
    const acks = xds.requests.length;
    xds = await tapped({ cache, port: xds.port, status: xds.status, requests: xds.requests });
    await until(() => xds.requests.length > acks + 1, "the reconnect and its ACK");
    const [hello, ack] = xds.requests.slice(acks);
    expect(hello).toMatchObject({
      versionInfo: v1,
      responseNonce: "",
      resourceNames: [NODE],
      node: { id: "clusters/kea-0", cluster: NODE },
    });
    expect(ack).toMatchObject({ versionInfo: v1, errorDetail: undefined });
    expect(ack?.responseNonce).not.toBe("");
    expect(applier.calls).toHaveLength(1);
    const ended = events.find((e) => e.type === "stream-ended");
    expect(ended).toMatchObject({ graceful: false, retryInMs: FAST.initialMs });
    expect(events.filter((e) => e.type === "ack").map((e) => e.kind)).toEqual(["applied", "already-running"]);
  });

  it("comes straight back when the server ends the stream at its maximum age", async () => {
    const cache = keaCache();
    const v1 = publish(cache, NODE, { "valid-lifetime": 10 });
    const xds = await tapped({ cache, maxStreamAgeMs: 150 });
    const applier = new FakeApplier();
    const { events } = startAgent({ xds: xds.address, applier });
    await until(() => events.filter((e) => e.type === "ack").length >= 3, "two reconnects");
    const ended = events.filter((e) => e.type === "stream-ended");
    expect(ended.length).toBeGreaterThanOrEqual(2);
    expect(ended.every((e) => e.graceful && e.retryInMs === 0 && e.code === 0)).toBe(true);
    expect(
      xds.requests
        .filter((r) => r.responseNonce === "")
        .slice(1)
        .every((r) => r.versionInfo === v1),
    ).toBe(true);
    expect(applier.calls).toHaveLength(1);
  });

  it("keeps retrying while the server is unreachable, backing off, then connects", async () => {
    const cache = keaCache();
    const probe = await startTappedXds({ cache });
    const port = probe.port;
    await probe.close();
    const applier = new FakeApplier();
    const { events } = startAgent({ xds: `127.0.0.1:${String(port)}`, applier, random: () => 0 });
    await until(() => events.filter((e) => e.type === "stream-ended").length >= 4, "four failed attempts");
    const delays = events.flatMap((e) => (e.type === "stream-ended" ? [e.retryInMs] : []));
    expect(delays.slice(0, 4)).toEqual([10, 20, 40, 40]);
    expect(events.every((e) => e.type !== "stream-ended" || (!e.graceful && e.code === 14))).toBe(true);

    const v = publish(cache, NODE, { "valid-lifetime": 5 });
    const xds = await tapped({ cache, port });
    await until(() => keaType(xds.status, "clusters/kea-0")?.lastAcked?.version === v, "ACK once the server is up");
  });

  it("ACKs a version that carries no KeaConfig for it without touching Kea, and NACKs an undecodable one", async () => {
    const cache = keaCache();
    const empty = cache.setSnapshot(NODE, new Map([[KEA_CONFIG_TYPE_URL, []]]));
    if (!empty.ok) throw new Error("snapshot refused");
    const server = await startXdsServer({ cache, listen: "127.0.0.1:0", maxStreamAgeMs: 0 });
    cleanups.push(() => server.close());
    const applier = new FakeApplier();
    startAgent({ xds: `127.0.0.1:${String(server.port)}`, applier });
    await until(() => keaType(server.status, "clusters/kea-0")?.lastAcked !== undefined, "the empty version ACKed");
    expect(applier.calls).toEqual([]);

    // A producer bug: bytes that are no KeaConfig. The agent refuses them before Kea sees them.
    cache.registerType(KEA_CONFIG_TYPE_URL, {
      encode: () => new Uint8Array([0x0a, 0x40, 0x61]),
      legacyWildcard: false,
    });
    publish(cache, NODE, { x: 1 });
    await until(() => keaType(server.status, "clusters/kea-0")?.lastNack !== undefined, "the NACK");
    expect(keaType(server.status, "clusters/kea-0")?.lastNack?.message).toMatch(/^cannot decode the KeaConfig/);
    expect(applier.calls).toEqual([]);
  });

  it("close() ends the stream cleanly", async () => {
    const cache = keaCache();
    publish(cache, NODE, { "valid-lifetime": 1 });
    const xds = await tapped({ cache });
    const { agent } = startAgent({ xds: xds.address, applier: new FakeApplier() });
    await until(() => keaType(xds.status, "clusters/kea-0")?.lastAcked !== undefined, "the ACK");
    expect(xds.streamCount()).toBe(1);
    await agent.close();
    await until(() => xds.streamCount() === 0, "the server to see the stream end");
    expect(xds.status.node("clusters/kea-0")?.connectedStreams).toBe(0);
  });
});

describe("the agent's node.id", () => {
  it("is the pod (Downward API namespace/name) when known, else the host name", () => {
    expect(defaultNodeId({ POD_NAMESPACE: "clusters", POD_NAME: "vlan100-dhcp-7c9f" })).toBe(
      "clusters/vlan100-dhcp-7c9f",
    );
    expect(defaultNodeId({ POD_NAME: "vlan100-dhcp-7c9f" })).toBe(hostname());
    expect(defaultNodeId({ POD_NAMESPACE: "", POD_NAME: "x" })).toBe(hostname());
  });
});
