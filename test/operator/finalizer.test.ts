// Deleting an attachment: the finalizer holds it while its NetworkPolicy is cleaned, its routes stay
// served until then, and only then is it released. Then: after convergence, an idle period with
// many resyncs, watch restarts and re-lists makes zero writes.
import { afterEach, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { API_VERSION } from "../../src/api/schema.js";
import { ATTACHMENT_FINALIZER } from "../../src/operator/desired/objects.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { counter, markDeploymentsAvailable, readyOf, seededFake, startOperator, stored } from "./support.js";

let fake: FakeApiServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await fake?.stop();
  close = undefined;
  fake = undefined;
});

const NP = ["networking.k8s.io/v1", "NetworkPolicy", "clusters-alpha", "allow-infrastructure"] as const;

describe("attachment finalizer", () => {
  it("keeps a deleted attachment (and its routes) until its NetworkPolicy is gone, then releases it", async () => {
    fake = await seededFake();
    const f = fake;
    const { op, states } = startOperator(f, { leaderElection: false });
    close = () => op.close();
    await eventually(() => {
      expect(stored(f, ...NP)).toBeDefined();
      expect(
        (
          stored(f, API_VERSION, "InfraClusterAttachment", "clusters", "alpha")?.["metadata"] as {
            finalizers?: string[];
          }
        ).finalizers,
      ).toEqual([ATTACHMENT_FINALIZER]);
    });
    const mark = f.requests.all().length;

    const kind = f.store.kindByGvk(API_VERSION, "InfraClusterAttachment");
    if (kind === undefined) throw new Error("not served");
    f.store.delete(kind, "clusters", "alpha", {});
    expect(
      (
        stored(f, API_VERSION, "InfraClusterAttachment", "clusters", "alpha")?.["metadata"] as {
          deletionTimestamp?: string;
        }
      ).deletionTimestamp,
    ).toBeDefined();

    await eventually(() => {
      expect(stored(f, API_VERSION, "InfraClusterAttachment", "clusters", "alpha")).toBeUndefined();
    });
    expect(stored(f, ...NP)).toBeUndefined();

    // The policy was deleted before the finalizer was removed.
    const after = f.requests.all().slice(mark);
    const npDelete = after.findIndex((r) => r.verb === "delete" && r.resource === "networkpolicies");
    const release = after.findIndex((r) => r.verb === "patch" && r.resource === "infraclusterattachments");
    expect(npDelete).toBeGreaterThanOrEqual(0);
    expect(release).toBeGreaterThan(npDelete);

    // Every state that showed alpha terminating still served its routes.
    const terminating = states.calls.filter((c) =>
      c.state.attachments.some((a) => a.metadata.name === "alpha" && a.metadata.deletionTimestamp !== undefined),
    );
    expect(terminating.length).toBeGreaterThan(0);
    for (const c of terminating) {
      expect(c.outputs.model.topologies[0]?.proxy?.backends.map((b) => b.name)).toContain(
        "clusters/alpha/kube-apiserver",
      );
    }
    // Once gone, its routes are gone too; beta keeps its own.
    await eventually(() => {
      const names = states.last()?.outputs.model.topologies[0]?.proxy?.backends.map((b) => b.name) ?? [];
      expect(names).not.toContain("clusters/alpha/kube-apiserver");
      expect(names).toContain("clusters/beta/kube-apiserver");
    });
  });
});

describe("idle", () => {
  it("makes zero writes once converged, through resyncs, watch restarts, re-lists and bookmarks", async () => {
    fake = await seededFake({ bookmarkIntervalMs: 100 });
    const f = fake;
    const { op, metrics } = startOperator(f, {
      resyncMs: 100,
      reconcileIntervalMs: 0,
      watch: { timeoutSeconds: 1, watchdogMs: 1_500, discoveryIntervalMs: 200 },
    });
    close = () => op.close();
    await eventually(() => {
      expect(op.isLeader()).toBe(true);
    });
    await eventually(() => {
      markDeploymentsAvailable(f);
      expect(readyOf(stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan"))).toMatchObject({ status: "True" });
    });
    // Let the last status writes be observed.
    await eventually(() => {
      const before = f.requests.writes().filter((r) => r.resource !== "leases").length;
      return sleep(400).then(() => {
        expect(f.requests.writes().filter((r) => r.resource !== "leases").length).toBe(before);
      });
    });

    f.requests.clear();
    const reconciles = await counter(metrics, "oooi_reconcile_total", 'result="ok"');
    await sleep(1_000);
    // Every resumed watch gets 410 Gone and re-lists — still nothing to write.
    f.expireNextWatch({ count: 17 });
    f.resetWatches();
    await sleep(2_000);
    // Lease renewals are the only writes an idle leader makes.
    const writes = f.requests.writes().filter((r) => r.resource !== "leases");
    expect(writes.map((w) => `${w.verb} ${w.resource ?? ""} ${w.name ?? ""}`)).toEqual([]);
    expect(f.requests.count({ verb: "update", resource: "leases" })).toBeGreaterThan(5);
    // The period was not idle for the machinery: passes ran, watches ended and resumed.
    expect((await counter(metrics, "oooi_reconcile_total", 'result="ok"')) - reconciles).toBeGreaterThan(10);
    expect(f.requests.count({ verb: "watch" })).toBeGreaterThan(17);
    expect(f.requests.count({ verb: "list" })).toBeGreaterThanOrEqual(17);
  });
});
