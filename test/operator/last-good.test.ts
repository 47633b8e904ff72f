// Last good per object in the operator, against the fake API server: an Infra edited into an
// invalid spec keeps its DNS ConfigMap, ProxyServer (listeners), DHCPServer and Kea config as they
// were, and its status says it is serving the configuration accepted earlier.
import { afterEach, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { API_VERSION } from "../../src/api/schema.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { readyOf, seededFake, startOperator, stored } from "./support.js";

let fake: FakeApiServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await fake?.stop();
  close = undefined;
  fake = undefined;
});

describe("operator: last good per object", () => {
  it("an Infra edited into an invalid spec keeps serving what was accepted", async () => {
    fake = await seededFake();
    const f = fake;
    const { op, states } = startOperator(f, { leaderElection: false });
    close = () => op.close();
    const served = () => ({
      dns: stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")?.["data"],
      proxy: stored(f, API_VERSION, "ProxyServer", "clusters", "tenant-vlan-proxy")?.["spec"],
      dhcp: stored(f, API_VERSION, "DHCPServer", "clusters", "tenant-vlan-dhcp")?.["spec"],
      envoy: states.last()?.outputs.infras[0]?.envoy?.listeners,
      kea: states.last()?.outputs.infras[0]?.kea,
    });
    await eventually(() => {
      const s = served();
      expect(s.dns).toBeDefined();
      expect(s.proxy).toBeDefined();
      expect(s.dhcp).toBeDefined();
      expect(s.envoy?.length).toBeGreaterThan(0);
      expect(s.kea).toBeDefined();
    }, 15_000);
    const before = served();

    const infra = stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");
    if (infra === undefined) throw new Error("example Infra missing");
    const spec = infra["spec"] as { networkConfig: Record<string, unknown> };
    f.seed({ ...infra, spec: { ...spec, networkConfig: { ...spec.networkConfig, gateway: "10.9.9.1" } } });

    await eventually(() => {
      const ready = readyOf(stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan"));
      expect(ready).toMatchObject({ status: "False", reason: "InvalidSpec" });
      expect(ready?.["message"]).toMatch(/the configuration accepted at \S+ is still served/);
      expect(ready?.["message"]).toMatch(/spec\.networkConfig\.gateway: 10\.9\.9\.1 is not a usable host address/);
    }, 15_000);
    expect(served()).toEqual(before);
  });
});

describe("operator: an Infra that exists without a desired state", () => {
  const NP = ["networking.k8s.io/v1", "NetworkPolicy", "clusters-alpha", "allow-infrastructure"] as const;

  it("keeps its attachments' NetworkPolicies after a restart finds it invalid, prunes them once it is gone", async () => {
    fake = await seededFake();
    const f = fake;
    const first = startOperator(f, { leaderElection: false });
    close = () => first.op.close();
    await eventually(() => {
      expect(stored(f, ...NP)).toBeDefined();
    }, 15_000);
    await first.op.close();

    // A refused edit, then a restart: the new process has no last good to serve for this Infra.
    const infra = stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan");
    if (infra === undefined) throw new Error("example Infra missing");
    const spec = infra["spec"] as { networkConfig: Record<string, unknown> };
    f.seed({ ...infra, spec: { ...spec, networkConfig: { ...spec.networkConfig, gateway: "10.9.9.1" } } });
    const second = startOperator(f, { leaderElection: false });
    close = () => second.op.close();
    await eventually(() => {
      const ready = readyOf(stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan"));
      expect(ready).toMatchObject({ status: "False", reason: "InvalidSpec" });
      expect(ready?.["message"]).not.toMatch(/is still served/);
    }, 15_000);
    // The pass that wrote that status pruned before it; a few resyncs (250 ms) later it is still there.
    await sleep(1_000);
    expect(stored(f, ...NP)).toBeDefined();

    // The Infra gone: nothing holds the policy any more.
    const kind = f.store.kindByGvk(API_VERSION, "Infra");
    if (kind === undefined) throw new Error("not served");
    f.store.delete(kind, "clusters", "tenant-vlan", {});
    await eventually(() => {
      expect(stored(f, ...NP)).toBeUndefined();
    }, 15_000);
  });
});
