// One view of the fleet: two operator replicas, each with its own real ADS server, share their
// nodes' ACK state only through report ConfigMaps in the API server. An Envoy stand-in and a
// dhcp-agent connected only to the follower make the leader's status ready with the follower's
// versions; a NACK on the follower, and a client there that never ACKs, reach the leader's status in
// the health view's words; a replica shutting down takes its nodes with it.
import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/api/schema.js";
import { DhcpAgent } from "../../src/dhcp/agent/index.js";
import { publishSnapshots } from "../../src/pipeline/snapshots.js";
import { SnapshotCache } from "../../src/xds/cache/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../src/dhcp/kea-config-resource.js";
import { CLUSTER_TYPE_URL, LISTENER_TYPE_URL } from "../../src/xds/resource/protos.js";
import { cacheVersions, computeHealth, healthText } from "../../src/xds/health.js";
import { startXdsServer, type XdsServer } from "../../src/xds/server/index.js";
import { REPORT_LABEL } from "../../src/operator/status/report.js";
import { EnvoyLikeClient } from "../support/envoy/client.js";
import { openSotw } from "../support/envoy/raw.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { FakeApplier } from "../dhcp/agent/support.js";
import {
  markDeploymentsAvailable,
  quietLogger,
  readyOf,
  seededFake,
  startOperator,
  stored,
  storedList,
} from "./support.js";
import { checkEnvoySnapshot } from "../../src/envoy/snapshot.js";

let fake: FakeApiServer | undefined;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await fake?.stop();
  fake = undefined;
});

const PROXY_GROUP = "clusters/tenant-vlan-proxy";
const DHCP_GROUP = "clusters/tenant-vlan-dhcp";
const FLEET_TIMING = { heartbeatMs: 100, expiryMs: 1_000, minIntervalMs: 100 };

/** An operator replica with its own cache and real ADS server, as `oooi operator` wires them. */
async function replica(f: FakeApiServer, identity: string) {
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const xds: XdsServer = await startXdsServer({ cache, listen: "127.0.0.1:0" });
  const r = startOperator(f, {
    identity,
    xds: { status: xds.status, cache },
    fleetTiming: FLEET_TIMING,
    onState: (_s, outputs) => {
      publishSnapshots(cache, outputs, quietLogger);
    },
    closeStreams: () => xds.close(),
  });
  closers.push(() => r.op.close());
  return { ...r, cache, xds, address: `127.0.0.1:${String(xds.port)}` };
}

const statusOf = (f: FakeApiServer, kind: string, name: string) =>
  (stored(f, API_VERSION, kind, "clusters", name)?.["status"] ?? {}) as Record<string, unknown>;

const conditionOf = (f: FakeApiServer, kind: string, name: string, type: string) =>
  ((statusOf(f, kind, name)["conditions"] ?? []) as Record<string, unknown>[]).find((c) => c["type"] === type);

/** A client's words in the health view of the replica it is connected to (its status page, `oooi debug nodes`). */
function healthWords(r: { xds: XdsServer; cache: SnapshotCache }, id: string): string | undefined {
  const health = computeHealth(r.xds.status.nodes(), cacheVersions(r.cache), r.cache.groups());
  const client = health.clients.find((c) => c.id === id && c.connected);
  return client && healthText(client.id, client.types);
}

describe("two replicas share their nodes through reports", () => {
  it("Envoy and dhcp-agent on the follower only: the leader's status is ready at the follower's versions; a follower NACK shows", async () => {
    fake = await seededFake();
    const f = fake;
    const a = await replica(f, "replica-a");
    await eventually(() => {
      expect(a.op.isLeader()).toBe(true);
    });
    const b = await replica(f, "replica-b");
    await b.op.ready;
    await eventually(() => {
      expect(b.cache.getSnapshot(PROXY_GROUP)).toBeDefined();
      expect(b.cache.getSnapshot(DHCP_GROUP)).toBeDefined();
    });

    // Before any data plane connects: nothing is acked, the Infra is not ready.
    await eventually(() => {
      markDeploymentsAvailable(f);
      expect(statusOf(f, "Infra", "tenant-vlan")["componentStatus"]).toMatchObject({
        proxyReady: false,
        dhcpReady: false,
      });
    });

    const envoy = new EnvoyLikeClient({ address: b.address, node: { id: "proxy-0", cluster: PROXY_GROUP } });
    envoy.connect();
    closers.push(() => {
      envoy.close();
    });
    const applier = new FakeApplier();
    const agent = new DhcpAgent({ xds: b.address, node: DHCP_GROUP, nodeId: "dhcp-0", applier });
    agent.start();
    closers.push(() => agent.close());
    await envoy.waitFor(() => envoy.version(LISTENER_TYPE_URL) !== "", "listeners");

    const proxyVersion = b.cache.getSnapshot(PROXY_GROUP)?.version;
    const dhcpVersion = b.cache.getSnapshot(DHCP_GROUP)?.version;
    await eventually(() => {
      markDeploymentsAvailable(f);
      expect(statusOf(f, "ProxyServer", "tenant-vlan-proxy")["ackedVersion"]).toBe(proxyVersion);
      expect(statusOf(f, "DHCPServer", "tenant-vlan-dhcp")["ackedVersion"]).toBe(dhcpVersion);
      expect(statusOf(f, "Infra", "tenant-vlan")["componentStatus"]).toMatchObject({
        proxyReady: true,
        dhcpReady: true,
      });
    }, 10_000);
    // The follower wrote its report; the leader's xDS server never saw a stream.
    expect(a.xds.status.streams()).toEqual([]);
    const reports = storedList(f, "v1", "ConfigMap", "oooi-system").filter(
      (c) => (c["metadata"] as { labels?: Record<string, string> }).labels?.[REPORT_LABEL] === "true",
    );
    expect(reports.map((c) => (c["metadata"] as { name: string }).name).sort()).toEqual([
      "oooi-report-replica-a",
      "oooi-report-replica-b",
    ]);
    // The leader sees the whole fleet, each node with its replica.
    expect(a.op.fleet?.nodes().map((n) => `${n.id}@${n.replica}`)).toEqual(["dhcp-0@replica-b", "proxy-0@replica-b"]);

    // A second Envoy on the follower rejects its configuration: the leader's status says so, with the text.
    const rejecting = new EnvoyLikeClient({
      address: b.address,
      node: { id: "proxy-1", cluster: PROXY_GROUP },
      validate: (typeUrl) => (typeUrl === LISTENER_TYPE_URL ? "listener kube-6443: bad filter chain" : undefined),
    });
    rejecting.connect();
    closers.push(() => {
      rejecting.close();
    });
    // The leader's words are the health view's, as the follower's page and `oooi debug nodes` say it.
    const rejectedWords = "proxy-1: lds ERROR (listener kube-6443: bad filter chain)";
    await eventually(() => {
      expect(healthWords(b, "proxy-1")).toBe(rejectedWords);
      expect(statusOf(f, "ProxyServer", "tenant-vlan-proxy")["lastNack"]).toBe(
        "proxy-1: listener kube-6443: bad filter chain",
      );
      expect(readyOf(stored(f, API_VERSION, "ProxyServer", "clusters", "tenant-vlan-proxy"))).toMatchObject({
        status: "False",
        reason: "ConfigurationRejected",
        message: `the data plane rejected the configuration: ${rejectedWords}`,
      });
      expect(statusOf(f, "Infra", "tenant-vlan")["componentStatus"]).toMatchObject({ proxyReady: false });
      expect(conditionOf(f, "Infra", "tenant-vlan", "ProxyReady")).toMatchObject({
        reason: "ConfigurationRejected",
        message: `data plane ${PROXY_GROUP} rejected the configuration: ${rejectedWords}`,
      });
    }, 10_000);
    rejecting.close();
    await eventually(() => {
      expect(statusOf(f, "ProxyServer", "tenant-vlan-proxy")["lastNack"]).toBeUndefined();
      expect(statusOf(f, "Infra", "tenant-vlan")["componentStatus"]).toMatchObject({ proxyReady: true });
    }, 10_000);

    // A client on the follower that takes the clusters and never answers is behind, awaiting its ACK.
    const silent = openSotw(b.address);
    closers.push(() => {
      silent.close();
    });
    silent.send({ node: { id: "silent-0", cluster: PROXY_GROUP }, type_url: CLUSTER_TYPE_URL });
    await silent.next();
    const clusters = b.cache.getSnapshot(PROXY_GROUP)?.types.get(CLUSTER_TYPE_URL)?.version ?? "";
    const behindWords = `silent-0: cds BEHIND none→${clusters.length > 12 ? clusters.slice(0, 8) : clusters} (awaiting-ack)`;
    expect(healthWords(b, "silent-0")).toBe(behindWords);
    await eventually(() => {
      expect(readyOf(stored(f, API_VERSION, "ProxyServer", "clusters", "tenant-vlan-proxy"))).toMatchObject({
        status: "False",
        reason: "NotAcknowledged",
        message: `the data plane is behind its current configuration: ${behindWords}`,
      });
      expect(conditionOf(f, "Infra", "tenant-vlan", "ProxyReady")).toMatchObject({
        reason: "NotAcknowledged",
        message: `data plane ${PROXY_GROUP} has not acknowledged the current configuration: ${behindWords}`,
      });
    }, 10_000);
    silent.close();
    await eventually(() => {
      expect(readyOf(stored(f, API_VERSION, "ProxyServer", "clusters", "tenant-vlan-proxy"))).toMatchObject({
        status: "True",
      });
      expect(statusOf(f, "Infra", "tenant-vlan")["componentStatus"]).toMatchObject({ proxyReady: true });
    }, 10_000);

    // The follower shuts down: its report and heartbeat go, and its nodes with them.
    await b.op.close();
    expect(stored(f, "v1", "ConfigMap", "oooi-system", "oooi-report-replica-b")).toBeUndefined();
    await eventually(() => {
      expect(a.op.fleet?.nodes().filter((n) => n.replica === "replica-b")).toEqual([]);
      expect(statusOf(f, "Infra", "tenant-vlan")["componentStatus"]).toMatchObject({ proxyReady: false });
    }, 10_000);
  }, 30_000);
});
