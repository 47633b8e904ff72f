// Status computation on its own (pure): lastTransitionTime moves only when the Ready status flips,
// observedGeneration is the object's generation, only schema-declared fields are written, and
// Deployment availability is read the way the Deployment controller reports it.
import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/api/schema.js";
import { kindDefinition } from "../../src/api/validate.js";
import { NO_DATA_PLANE } from "../../src/operator/status/dataplane.js";
import { desiredState } from "../../src/operator/desired/index.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import {
  deploymentUnavailable,
  dhcpAllocations,
  ownedStatusFields,
  statusUpdates,
  type StatusInput,
  type StatusKey,
} from "../../src/operator/status/object-status.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { buildObserved } from "../../src/watchers/kube/observed.js";
import type { KubeObject } from "../../src/kube/rest.js";
import { exampleRaw } from "./support.js";
import { MISSING_BINDING_REASON } from "../../src/operator/status/conditions.js";
import { WORKLOADS_ROLE } from "../../src/operator/desired/permissions.js";

function observedWith(infraStatus: unknown): ReturnType<typeof buildObserved> {
  const raw = exampleRaw((o) => {
    const meta = { ...o.metadata, uid: `uid-${o.metadata?.name ?? ""}`, generation: 3, resourceVersion: "7" };
    return o["kind"] === "Infra" ? { ...o, metadata: meta, status: infraStatus } : { ...o, metadata: meta };
  });
  return buildObserved(raw, 1);
}

function infraUpdate(infraStatus: unknown, now: number, unobservedStatus?: StatusInput["unobservedStatus"]) {
  const observed = observedWith(infraStatus);
  const outputs = renderAll(observed.state);
  const desired = desiredState({ state: observed.state, outputs, settings: operatorSettings() });
  const u = statusUpdates({
    observed,
    outputs,
    desired,
    dataPlane: NO_DATA_PLANE,
    now,
    ...(unobservedStatus === undefined ? {} : { unobservedStatus }),
  }).find((x) => x.kind === "Infra");
  if (u === undefined) throw new Error("no Infra update");
  return u;
}

const T0 = "2024-05-01T10:00:00Z";
const NOW = Date.parse("2025-01-01T00:00:00Z");

describe("status", () => {
  it("keeps lastTransitionTime while Ready keeps its status, moves it on a flip", () => {
    const same = infraUpdate(
      { conditions: [{ type: "Ready", status: "False", reason: "Other", message: "x", lastTransitionTime: T0 }] },
      NOW,
    );
    const ready = (same.status["conditions"] as Record<string, unknown>[])[0];
    expect(ready).toMatchObject({
      type: "Ready",
      status: "False",
      reason: "ComponentsNotReady",
      observedGeneration: 3,
      lastTransitionTime: T0,
    });
    expect(same.upToDate).toBe(false);

    const flipped = infraUpdate(
      {
        conditions: [
          { type: "Ready", status: "True", reason: "ReconciliationSucceeded", message: "", lastTransitionTime: T0 },
        ],
      },
      NOW,
    );
    expect((flipped.status["conditions"] as Record<string, unknown>[])[0]?.["lastTransitionTime"]).toBe(
      "2025-01-01T00:00:00Z",
    );
    expect(flipped.status).toMatchObject({
      observedGeneration: 3,
      componentStatus: { dhcpReady: false, dnsReady: false, proxyReady: false },
      attachments: { total: 2 },
    });
  });

  it("is up to date when the observed status equals it, whatever else the status holds", () => {
    const first = infraUpdate({}, NOW);
    const again = infraUpdate({ ...first.status, somethingElse: { by: "another controller" } }, NOW + 60_000);
    expect(again.upToDate).toBe(true);
    expect(again.status).toEqual(first.status);
  });

  it("compares with, and announces against, its own write that the watch has not delivered yet", () => {
    // The cache holds S (what this pass computes again); our last write, not yet seen, said Ready.
    const s = infraUpdate({}, NOW).status;
    const ours = {
      conditions: [
        { type: "Ready", status: "True", reason: "ReconciliationSucceeded", message: "", lastTransitionTime: T0 },
      ],
    };
    const asked: StatusKey[] = [];
    const u = infraUpdate({ ...s, somethingElse: 1 }, NOW, (key) => {
      asked.push(key);
      return key.kind === "Infra" ? ours : undefined;
    });
    expect(asked).toContainEqual({ kind: "Infra", namespace: "clusters", name: "tenant-vlan", resourceVersion: "7" });
    // Not up to date (the server holds ours, not S), and the flip from our Ready is announced.
    expect(u.upToDate).toBe(false);
    expect(u.status).toEqual(s);
    expect(u.events.map((e) => e.message.split(":")[0])).toContain("Ready is False");
    // Without an unobserved write, the same cache is up to date and nothing is announced.
    const plain = infraUpdate({ ...s, somethingElse: 1 }, NOW, () => undefined);
    expect(plain.upToDate).toBe(true);
    expect(plain.events.map((e) => e.message.split(":")[0])).not.toContain("Ready is False");
  });

  it("reuses a pass's up-to-date answer while its facts hold, and computes anew when one changes", () => {
    // One watch cache holding the status a first pass computes; later passes read the same objects.
    const first = infraUpdate({}, NOW);
    const observed = observedWith(first.status);
    const outputs = renderAll(observed.state);
    const desired = desiredState({ state: observed.state, outputs, settings: operatorSettings() });
    const pass = (now: number, extra: Partial<StatusInput> = {}) => {
      const u = statusUpdates({ observed, outputs, desired, dataPlane: NO_DATA_PLANE, now, ...extra }).find(
        (x) => x.kind === "Infra",
      );
      if (u === undefined) throw new Error("no Infra update");
      return u;
    };
    const converged = pass(NOW + 1_000);
    expect(converged.upToDate).toBe(true);
    // Nothing changed: the same answer, not compared again.
    expect(pass(NOW + 2_000)).toBe(converged);
    // A fact changes (the namespace refuses the operator's writes): computed anew, at this pass's clock.
    const refused = pass(NOW + 3_000, {
      missingBindings: [{ namespace: "clusters", role: WORKLOADS_ROLE, command: "kubectl create rolebinding x" }],
    });
    expect(refused.upToDate).toBe(false);
    const ready = (refused.status["conditions"] as Record<string, unknown>[]).find((c) => c["type"] === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: MISSING_BINDING_REASON });
    // A status not yet held is never reused: each pass computes it with its own clock.
    const degraded = (now: number) =>
      (
        pass(now, {
          missingBindings: [{ namespace: "clusters", role: WORKLOADS_ROLE, command: "kubectl create rolebinding x" }],
        }).status["conditions"] as Record<string, unknown>[]
      ).find((c) => c["type"] === "Degraded");
    expect(degraded(NOW + 4_000)?.["lastTransitionTime"]).toBe(
      new Date(NOW + 4_000).toISOString().replace(".000Z", "Z"),
    );
    expect(degraded(NOW + 5_000)?.["lastTransitionTime"]).toBe(
      new Date(NOW + 5_000).toISOString().replace(".000Z", "Z"),
    );
    // And once the binding exists again, the held status is up to date once more.
    expect(pass(NOW + 6_000).upToDate).toBe(true);
  });

  it("does not reuse a held answer once our unobserved write or a field other than the conditions changes", () => {
    // One watch cache whose ProxyServer holds no status; our unobserved write supplies the held one.
    const raw = exampleRaw();
    const proxy = { apiVersion: API_VERSION, kind: "ProxyServer" };
    const meta = { name: "tenant-vlan-proxy", namespace: "clusters", generation: 1, resourceVersion: "7" };
    raw.proxyservers.set("clusters/tenant-vlan-proxy", { ...proxy, metadata: meta });
    const observed = buildObserved(raw, 1);
    const outputs = renderAll(observed.state);
    const desired = desiredState({ state: observed.state, outputs, settings: operatorSettings() });
    const acking = (version: string) => ({ ...NO_DATA_PLANE, ackedVersion: () => version });
    const pass = (acked: string, written: Readonly<Record<string, unknown>> | undefined) => {
      const u = statusUpdates({
        observed,
        outputs,
        desired,
        dataPlane: acking(acked),
        now: NOW,
        unobservedStatus: (k) => (k.kind === "ProxyServer" ? written : undefined),
      }).find((x) => x.kind === "ProxyServer");
      if (u === undefined) throw new Error("no ProxyServer update");
      return u;
    };
    const ours = pass("v1", undefined).status;
    expect(ours["ackedVersion"]).toBe("v1");
    expect(pass("v1", ours).upToDate).toBe(true);
    // Only the acknowledged version moves (the conditions stay): the held status is outdated.
    const moved = pass("v2", ours);
    expect([moved.upToDate, moved.status["ackedVersion"]]).toEqual([false, "v2"]);
    expect(pass("v1", ours).upToDate).toBe(true);
    // Our write is forgotten (another reconciler, a failed write): the cache, holding no status, is behind.
    expect(pass("v1", undefined).upToDate).toBe(false);
  });

  it("writes only fields the CRD schema declares", () => {
    for (const kind of ["Infra", "InfraClusterAttachment", "DHCPServer", "DNSServer", "ProxyServer"]) {
      const declared = Object.keys(kindDefinition(kind)?.status.properties ?? {});
      const owned = ownedStatusFields(kind);
      expect(owned, kind).toContain("conditions");
      for (const f of owned) expect(declared, `${kind}.status.${f}`).toContain(f);
    }
    expect(ownedStatusFields("ProxyServer")).toEqual(expect.arrayContaining(["ackedVersion", "lastNack"]));
  });

  it("reads Deployment availability at the current generation", () => {
    const d = (status: object, generation = 2, replicas = 2): KubeObject => ({
      metadata: { generation },
      spec: { replicas },
      status,
    });
    expect(
      deploymentUnavailable(
        d({
          observedGeneration: 2,
          updatedReplicas: 2,
          availableReplicas: 2,
          conditions: [{ type: "Available", status: "True" }],
        }),
      ),
    ).toBeUndefined();
    expect(deploymentUnavailable(d({ observedGeneration: 1, updatedReplicas: 2, availableReplicas: 2 }))).toMatch(
      /not observed/,
    );
    expect(deploymentUnavailable(d({ observedGeneration: 2, updatedReplicas: 1, availableReplicas: 2 }))).toMatch(
      /rolling out/,
    );
    expect(deploymentUnavailable(d({ observedGeneration: 2, updatedReplicas: 2, availableReplicas: 0 }))).toMatch(
      /no available replica/,
    );
    expect(
      deploymentUnavailable(
        d({
          observedGeneration: 2,
          updatedReplicas: 2,
          availableReplicas: 2,
          conditions: [{ type: "Available", status: "False" }],
        }),
      ),
    ).toMatch(/not Available/);
  });
});

describe("dhcpAllocations", () => {
  it("finds a DHCPServer's address table through its Infra label, else among every topology", () => {
    const outputs = renderAll(observedWith(undefined).state);
    const t = outputs.model.topologies.find((x) => x.dhcp !== undefined);
    const dhcp = t?.dhcp;
    if (t === undefined || dhcp === undefined) throw new Error("the example has a DHCP model");
    const server = (labels: Record<string, string>): KubeObject => ({
      apiVersion: API_VERSION,
      kind: "DHCPServer",
      metadata: { name: dhcp.name.split("/")[1] ?? "", namespace: t.infra.namespace, labels },
    });
    const label = "hostedcluster.densityops.com/infra";
    // Through the label: its Infra's rendering alone.
    const noTopologies = { ...outputs, model: { ...outputs.model, topologies: [] } };
    expect(dhcpAllocations(noTopologies, dhcp.name, server({ [label]: t.infra.name }))).toBe(dhcp.allocations);
    // A label someone changed or removed: found among every topology all the same.
    expect(dhcpAllocations(outputs, dhcp.name, server({ [label]: "other" }))).toBe(dhcp.allocations);
    expect(dhcpAllocations(outputs, dhcp.name, server({}))).toBe(dhcp.allocations);
    // No DHCP model of that name this round: none (the status keeps the table it holds).
    expect(dhcpAllocations(outputs, `${t.infra.namespace}/gone`, server({ [label]: t.infra.name }))).toBeUndefined();
  });
});
