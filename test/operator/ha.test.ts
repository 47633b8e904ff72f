// HA: two replicas watch and render (both feed onState), only the Lease holder writes, and the
// other takes over when the leader shuts down. The election's timing rules run on a manual clock.
// Probes and metrics are served over HTTP.
import { afterEach, describe, expect, it } from "vitest";
import { LeaderElector } from "../../src/operator/process/leader.js";
import { KubeRest } from "../../src/kube/rest.js";
import { eventually, kubeConfigFor, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { counter, seededFake, startOperator, stored } from "./support.js";
import { ManualClock } from "../support/manual-clock.js";

let fake: FakeApiServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await fake?.stop();
  fake = undefined;
});

describe("two replicas", () => {
  it("only the leader writes; the follower takes over after the leader shuts down", async () => {
    fake = await seededFake();
    const f = fake;
    const a = startOperator(f, { identity: "replica-a", httpListen: { host: "127.0.0.1", port: 0 } });
    closers.push(() => a.op.close());
    await eventually(() => {
      expect(a.op.isLeader()).toBe(true);
    });
    const b = startOperator(f, { identity: "replica-b" });
    closers.push(() => b.op.close());
    await eventually(() => {
      expect(stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
    });
    await b.op.ready;
    // Both render the same state for their own xDS caches.
    await eventually(() => {
      expect(b.states.last()?.outputs.files).toEqual(a.states.last()?.outputs.files);
    });
    expect(b.op.isLeader()).toBe(false);
    expect(await counter(a.metrics, "oooi_writes_total")).toBeGreaterThan(15);
    expect(await counter(b.metrics, "oooi_writes_total")).toBe(0);

    // Probes and metrics of the leader.
    const addr = a.op.httpAddress();
    if (addr === undefined) throw new Error("no probe server");
    const base = `http://127.0.0.1:${addr.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/^oooi_leader 1$/m);
    expect(text).toMatch(/^oooi_informers_synced 1$/m);
    expect((await fetch(`${base}/nope`)).status).toBe(404);

    // The leader shuts down gracefully: it releases the Lease, the follower takes over and writes.
    await a.op.close();
    const lease = stored(f, "coordination.k8s.io/v1", "Lease", "oooi-system", "oooi-operator");
    expect((lease?.["spec"] as { holderIdentity?: string } | undefined)?.holderIdentity).not.toBe("replica-a");
    await eventually(() => {
      expect(b.op.isLeader()).toBe(true);
    });
    const cm = stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns");
    expect(cm?.["data"]).toBeDefined();
    const k = f.store.kindByGvk("v1", "ConfigMap");
    if (k === undefined) throw new Error("not served");
    f.store.delete(k, "clusters", "tenant-vlan-dns", {});
    expect(stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")).toBeUndefined();
    await eventually(async () => {
      expect(stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")?.["data"]).toEqual(cm?.["data"]);
      expect(await counter(b.metrics, "oooi_writes_total", 'kind="ConfigMap"')).toBeGreaterThanOrEqual(1);
    });
    expect(
      stored(f, "coordination.k8s.io/v1", "Lease", "oooi-system", "oooi-operator")?.["spec"] as {
        holderIdentity?: string;
        leaseTransitions?: number;
      },
    ).toMatchObject({ holderIdentity: "replica-b" });
  });
});

describe("LeaderElector timing (manual clock)", () => {
  it("a follower takes an unreleased Lease only after a full lease duration without renewal", async () => {
    fake = await seededFake();
    const f = fake;
    const clock = new ManualClock();
    const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
    const rest = new KubeRest(kubeConfigFor(f.url));
    const leases = () => f.requests.count({ resource: "leases" });
    const a = new LeaderElector({ rest, namespace: "oooi-system", name: "l", identity: "a", timing, clock });
    const b = new LeaderElector({ rest, namespace: "oooi-system", name: "l", identity: "b", timing, clock });
    a.start();
    await eventually(() => {
      expect(a.isLeader()).toBe(true);
    });
    b.start();
    await eventually(() => {
      expect(leases()).toBeGreaterThanOrEqual(3);
    });
    // Every running elector is asleep on the clock once its requests are done: only then does
    // advancing the clock wake each of them (a loaded machine may still be mid-request otherwise).
    let running = 2;
    const asleep = () =>
      eventually(() => {
        expect(clock.pending).toBe(running);
      });
    /** Advances the clock one step and lets the requests it triggers finish. */
    const step = async (ms: number): Promise<void> => {
      await asleep();
      const before = leases();
      clock.advance(ms);
      await eventually(() => {
        expect(leases()).toBeGreaterThan(before);
      });
      await asleep();
    };
    for (let i = 0; i < 5; i++) await step(2_500);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);

    // a dies without releasing: b waits a whole lease duration from the last change it saw.
    await a.stop(false);
    running = 1;
    for (let i = 0; i < 5; i++) await step(2_500);
    expect(b.isLeader()).toBe(false);
    for (let i = 0; i < 3; i++) await step(2_500);
    expect(b.isLeader()).toBe(true);
    // a's own view: past the renew deadline it no longer claims leadership.
    expect(a.isLeader()).toBe(false);
    await b.stop(true);
    expect(
      (stored(f, "coordination.k8s.io/v1", "Lease", "oooi-system", "l")?.["spec"] as { holderIdentity?: string })
        .holderIdentity,
    ).toBe("");
  });

  it("a leader that cannot renew within the deadline stops leading", async () => {
    fake = await seededFake();
    const f = fake;
    const clock = new ManualClock();
    const a = new LeaderElector({
      rest: new KubeRest(kubeConfigFor(f.url)),
      namespace: "oooi-system",
      name: "l2",
      identity: "a",
      clock,
      timing: { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    });
    a.start();
    await eventually(() => {
      expect(a.isLeader()).toBe(true);
    });
    f.failNext(100, { match: { resource: "leases" } });
    // Advance only while the elector sleeps on the clock, so that each step wakes it.
    const asleep = () =>
      eventually(() => {
        expect(clock.pending).toBe(1);
      });
    for (let i = 0; i < 4; i++) {
      await asleep();
      const before = f.requests.count({ resource: "leases" });
      clock.advance(2_000);
      await eventually(() => {
        expect(f.requests.count({ resource: "leases" })).toBeGreaterThan(before);
      });
    }
    await asleep();
    expect(a.isLeader()).toBe(true);
    clock.advance(3_000);
    expect(a.isLeader()).toBe(false);
    await a.stop(false);
  });
});
