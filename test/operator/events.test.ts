// kubectl-native status against the fake API server: the Infra's six conditions, core v1 Events on
// condition transitions and on a NACK (a repeated one counted, not duplicated; none while idle),
// only requests the generated RBAC grants, and oooi_object_ready per object on /metrics.
import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/api/schema.js";
import { allPermissions } from "../../src/operator/desired/permissions.js";
import { EVENT_SOURCE } from "../../src/operator/writing/events.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { markDeploymentsAvailable, seededFake, startOperator, stored, storedList } from "./support.js";

let fake: FakeApiServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  await fake?.stop();
  close = undefined;
  fake = undefined;
});

interface EventObject {
  involvedObject: { kind: string; name: string; namespace: string; uid?: string };
  type: string;
  reason: string;
  message: string;
  count: number;
  source: { component: string };
}

const events = (f: FakeApiServer): EventObject[] => storedList(f, "v1", "Event") as unknown as EventObject[];
const about = (f: FakeApiServer, kind: string, name: string) =>
  events(f).filter((e) => e.involvedObject.kind === kind && e.involvedObject.name === name);

const conditionsOf = (f: FakeApiServer, kind: string, name: string): Record<string, string> =>
  Object.fromEntries(
    (
      (
        (stored(f, API_VERSION, kind, "clusters", name)?.["status"] ?? {}) as {
          conditions?: { type: string; status: string }[];
        }
      ).conditions ?? []
    ).map((c) => [c.type, c.status]),
  );

describe("conditions and Events", () => {
  it("writes every condition, records transitions and NACKs as Events, counts a repeat, and is quiet when idle", async () => {
    fake = await seededFake();
    const f = fake;
    const { op, dataPlane, metrics } = startOperator(f, { httpListen: { host: "127.0.0.1", port: 0 } });
    close = () => op.close();
    await op.ready;

    // Before any workload is available: Progressing, not Degraded; nothing Ready yet.
    await eventually(() => {
      expect(conditionsOf(f, "Infra", "tenant-vlan")).toEqual({
        Ready: "False",
        Degraded: "False",
        Progressing: "True",
        DHCPReady: "False",
        DNSReady: "False",
        ProxyReady: "False",
      });
    }, 15_000);

    markDeploymentsAvailable(f);
    await eventually(() => {
      expect(conditionsOf(f, "Infra", "tenant-vlan")).toEqual({
        Ready: "True",
        Degraded: "False",
        Progressing: "False",
        DHCPReady: "True",
        DNSReady: "True",
        ProxyReady: "True",
      });
    }, 15_000);
    const infraUid = (stored(f, API_VERSION, "Infra", "clusters", "tenant-vlan")?.["metadata"] as { uid: string }).uid;
    await eventually(() => {
      const ready = about(f, "Infra", "tenant-vlan").find((e) => e.reason === "ReconciliationSucceeded");
      expect(ready).toMatchObject({ type: "Normal", message: "Ready is True: configuration rendered", count: 1 });
      expect(ready?.involvedObject).toMatchObject({ namespace: "clusters", uid: infraUid });
      expect(ready?.source.component).toBe(EVENT_SOURCE);
    });

    // A NACK: a Warning on the ProxyServer carrying Envoy's text, and the Infra's ProxyReady/Degraded flip.
    const nack = () => {
      dataPlane.update((d) => d.nacks.set("clusters/tenant-vlan-proxy", "duplicate filter chain"));
    };
    const clear = () => {
      dataPlane.update((d) => {
        d.nacks.clear();
      });
    };
    nack();
    await eventually(() => {
      const onProxy = about(f, "ProxyServer", "tenant-vlan-proxy").filter((e) => e.type === "Warning");
      expect(onProxy.map((e) => [e.reason, e.message, e.count])).toEqual(
        expect.arrayContaining([
          ["ConfigurationRejected", "the data plane rejected the configuration: duplicate filter chain", 1],
        ]),
      );
      expect(conditionsOf(f, "Infra", "tenant-vlan")).toMatchObject({ Degraded: "True", ProxyReady: "False" });
      const onInfra = about(f, "Infra", "tenant-vlan").filter((e) => e.type === "Warning");
      expect(onInfra.map((e) => e.message)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^ProxyReady is False: data plane clusters\/tenant-vlan-proxy rejected/),
          expect.stringMatching(/^Degraded is True:/),
        ]),
      );
    });

    // Recovery, then the same NACK again: the same Event objects, counted twice.
    clear();
    await eventually(() => {
      expect(conditionsOf(f, "Infra", "tenant-vlan")).toMatchObject({ Ready: "True", Degraded: "False" });
      expect(conditionsOf(f, "ProxyServer", "tenant-vlan-proxy")).toMatchObject({ Ready: "True" });
    });
    nack();
    await eventually(() => {
      const rejected = about(f, "ProxyServer", "tenant-vlan-proxy").filter((e) => e.reason === "ConfigurationRejected");
      // The NACK's own Event and the ProxyServer's Ready transition, both seen for the second time.
      expect(rejected.map((e) => [e.message.split(":")[0], e.count]).sort()).toEqual([
        ["Ready is False", 2],
        ["the data plane rejected the configuration", 2],
      ]);
    });
    // Every Event of the NACK (Ready, Degraded and ProxyReady on the Infra) is counted a second time.
    await eventually(() => {
      const rejected = about(f, "Infra", "tenant-vlan").filter((e) => e.message.includes("duplicate filter chain"));
      expect(rejected.map((e) => [e.message.split(" ")[0], e.count])).toEqual(
        expect.arrayContaining([
          ["Ready", 2],
          ["Degraded", 2],
          ["ProxyReady", 2],
        ]),
      );
      expect(rejected).toHaveLength(3);
    });

    // Idle: no more Events and no more writes over several resyncs (250 ms each).
    const before = JSON.stringify(events(f).map((e) => [e.reason, e.count]));
    const requests = f.requests.all().length;
    await new Promise((r) => setTimeout(r, 1_200));
    expect(JSON.stringify(events(f).map((e) => [e.reason, e.count]))).toBe(before);
    expect(
      f.requests
        .all()
        .slice(requests)
        .filter((r) => r.verb !== "get" && r.verb !== "list" && r.verb !== "watch" && r.verb !== "discovery")
        .filter((r) => r.resource !== "leases"),
    ).toEqual([]);

    // Every request is granted by the generated RBAC, the Event ones included.
    const grants = allPermissions();
    const eventVerbs = new Set<string>();
    for (const r of f.requests.all()) {
      if (r.verb === "discovery" || r.resource === undefined) continue;
      if (r.resource === "events") eventVerbs.add(r.verb);
      const ok = grants.some(
        (g) => g.apiGroup === (r.group ?? "") && g.resources.includes(r.resource ?? "") && g.verbs.includes(r.verb),
      );
      expect(ok, `${r.verb} ${r.group ?? ""}/${r.resource}`).toBe(true);
    }
    expect([...eventVerbs].sort()).toEqual(["create", "get", "patch"]);

    // oooi_object_ready per object on /metrics: 0 for the NACKed ProxyServer, 1 for a serving child.
    const addr = op.httpAddress();
    if (addr === undefined) throw new Error("no probe server");
    const text = await (await fetch(`http://127.0.0.1:${addr.port}/metrics`)).text();
    expect(text).toContain('oooi_object_ready{kind="ProxyServer",namespace="clusters",name="tenant-vlan-proxy"} 0');
    expect(text).toContain('oooi_object_ready{kind="DNSServer",namespace="clusters",name="tenant-vlan-dns"} 1');
    expect(text).toContain('oooi_object_ready{kind="Infra",namespace="clusters",name="tenant-vlan"} 0');
    clear();
    await eventually(async () => {
      expect(await metrics.render()).toContain(
        'oooi_object_ready{kind="Infra",namespace="clusters",name="tenant-vlan"} 1',
      );
    });
  }, 60_000);
});
