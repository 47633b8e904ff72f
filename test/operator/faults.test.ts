// The API server misbehaves after convergence — abrupt watch resets, 410 after compaction, 500s,
// 409 conflicts on apply, the whole API down for a while — and the operator converges each time,
// while onState (the data plane's feed) never sees an emptied or partial state.
import { afterEach, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { API_VERSION } from "../../src/api/schema.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { counter, seededFake, startOperator, stored, type StateLog } from "./support.js";

let fake: FakeApiServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await fake?.stop();
  close = undefined;
  fake = undefined;
});

/**
 * A new worker of alpha (a Machine with no VMI observed yet) reports `address`; waits until onState
 * shows it. (Where oooi runs DHCP an existing worker's report moves nothing: its VMI's allocation is
 * its source, so the observable change is a new worker.)
 */
async function moveWorker(f: FakeApiServer, states: StateLog, address: string): Promise<void> {
  joinWorker(f, address);
  await eventually(() => {
    const svc = states
      .last()
      ?.outputs.model.topologies[0]?.proxy?.backends.find((b) => b.name === "clusters/alpha/kubernetes-service");
    expect(svc?.sourcePrefixRanges.some((r) => covers(r, address))).toBe(true);
  }, 15_000);
}

function joinWorker(f: FakeApiServer, address: string): void {
  const m = stored(f, "cluster.x-k8s.io/v1beta1", "Machine", "clusters-alpha", "alpha-workers-0");
  const metadata = m?.["metadata"] as { annotations?: Record<string, string> } | undefined;
  f.seed({
    apiVersion: "cluster.x-k8s.io/v1beta1",
    kind: "Machine",
    metadata: {
      name: `alpha-joined-${address.replaceAll(".", "-")}`,
      namespace: "clusters-alpha",
      annotations: metadata?.annotations ?? {},
    },
    spec: m?.["spec"] ?? {},
    status: { addresses: [{ type: "InternalIP", address }] },
  });
}

/** Whether CIDR `range` (worker /32s are aggregated into a minimal cover) holds `address`. */
function covers(range: string, address: string): boolean {
  const toInt = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
  const [base = "", bits = "32"] = range.split("/");
  const size = 2 ** (32 - Number(bits));
  const start = toInt(base);
  return toInt(address) >= start && toInt(address) < start + size;
}

/** Every state onState received is whole: both attachments, the Infra, all Machines. */
function assertNeverEmptied(states: StateLog): void {
  for (const c of states.calls) {
    expect(c.state.infras.map((i) => i.metadata.name)).toEqual(["tenant-vlan"]);
    expect(c.state.attachments).toHaveLength(2);
    expect(c.state.machines.length).toBeGreaterThanOrEqual(2);
    expect(c.outputs.model.topologies[0]?.proxy?.backends.length).toBeGreaterThan(10);
  }
}

describe("faults", () => {
  it("recovers from watch resets, 410, 500s, 409s and an API outage; the state never empties", async () => {
    fake = await seededFake();
    const f = fake;
    const { op, states, metrics } = startOperator(f, {
      leaderElection: false,
      watch: { timeoutSeconds: 30, watchdogMs: 2_000, discoveryIntervalMs: 300 },
    });
    close = () => op.close();
    await eventually(() => {
      expect(stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
    });

    // Abrupt connection reset of every watch (client-node's informers would stop here).
    expect(f.resetWatches({ abrupt: true })).toBeGreaterThan(10);
    await moveWorker(f, states, "127.0.8.30");

    // 410 Gone after compaction: re-list.
    const lists = f.requests.count({ verb: "list" });
    f.compact();
    f.resetWatches();
    await moveWorker(f, states, "127.0.8.31");
    expect(f.requests.count({ verb: "list" })).toBeGreaterThan(lists);

    // 500s on the resumed watches and on lists: retried with backoff.
    f.failNext(20, { match: { verb: ["watch", "list"] } });
    f.resetWatches({ abrupt: true });
    await moveWorker(f, states, "127.0.8.32");
    expect(await counter(metrics, "oooi_watch_restarts_total", 'reason="error"')).toBeGreaterThan(0);

    // 409 on server-side apply: the pass fails, is retried, and the change lands.
    f.conflictNext(3, { verb: "patch", resource: "proxyservers" });
    const infra = stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");
    const spec = infra?.["spec"] as { infraComponents: { proxy: Record<string, unknown> } };
    f.seed({
      ...infra,
      spec: {
        ...spec,
        infraComponents: {
          ...spec.infraComponents,
          proxy: { ...spec.infraComponents.proxy, proxyImage: "example.com/envoy:v2" },
        },
      },
    });
    await eventually(() => {
      const ps = stored(f, API_VERSION, "ProxyServer", "clusters", "tenant-vlan-proxy");
      expect((ps?.["spec"] as { proxyImage?: string }).proxyImage).toBe("example.com/envoy:v2");
    }, 15_000);
    expect(await counter(metrics, "oooi_write_errors_total", 'kind="ProxyServer"')).toBeGreaterThanOrEqual(1);

    // The API goes away for a while; the data plane keeps its state; afterwards everything resumes.
    const before = states.calls.length;
    await f.goDown(1_500);
    await sleep(300);
    joinWorker(f, "127.0.8.40");
    await eventually(() => {
      expect(f.isDown()).toBe(false);
    }, 5_000);
    await eventually(() => {
      const svc = states
        .last()
        ?.outputs.model.topologies[0]?.proxy?.backends.find((b) => b.name === "clusters/alpha/kubernetes-service");
      expect(svc?.sourcePrefixRanges.some((r) => covers(r, "127.0.8.40"))).toBe(true);
    }, 15_000);
    expect(states.calls.length).toBeGreaterThan(before);
    // And a write after the outage converges too.
    const dns = stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns");
    const k = f.store.kindByGvk("v1", "ConfigMap");
    if (k === undefined) throw new Error("not served");
    f.store.delete(k, "clusters", "tenant-vlan-dns", {});
    expect(stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")).toBeUndefined();
    await eventually(() => {
      expect(stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")?.["data"]).toEqual(dns?.["data"]);
    }, 15_000);

    assertNeverEmptied(states);
  });
});
