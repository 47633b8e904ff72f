// The watch cache's projections (src/watchers/kube/projections.ts): per kind, an object as its
// controllers leave it (managedFields, last-applied, owner references, conditions, node info…)
// builds the same model, renders the same files and statuses and gets the same reconcile
// decisions as its projection, which keeps only what is read.
import { afterEach, describe, expect, it } from "vitest";
import { NODEPOOL_ANNOTATION } from "../../src/api/external.js";
import { holdsManagedFields, observedHash } from "../../src/operator/writing/applied.js";
import { deploymentUnavailable } from "../../src/operator/status/object-status.js";
import { serviceAddress } from "../../src/operator/apps-ingress/hosted.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { SYSTEM_CLOCK } from "../../src/util/clock.js";
import { buildObserved, type RawObjects } from "../../src/watchers/kube/observed.js";
import { project, slice, withoutBookkeeping } from "../../src/watchers/kube/projections.js";
import { Reflector } from "../../src/watchers/kube/reflector.js";
import { WATCHED_RESOURCES, type ResourceName } from "../../src/watchers/kube/resources.js";
import { KubeRest, type KubeObject } from "../../src/kube/rest.js";
import type { JsonObject } from "../support/fake-apiserver/types.js";
import { BUILTIN_KINDS, eventually, FakeApiServer, kubeConfigFor, MACHINE } from "../support/fake-apiserver/index.js";
import { attachment, controlPlaneServices, infra, machine, namespace, nodePool, NS, vmi } from "../support/fixtures.js";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
const json = (o: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;

/** What controllers and kubectl add to an object besides what oooi reads (shapes as the API serves them). */
function dressed(o: object, extra: { spec?: object; status?: object } = {}): KubeObject {
  const base = json(o) as {
    metadata?: Record<string, Record<string, string> | undefined>;
    spec?: object;
    status?: object;
  };
  const meta = base.metadata ?? {};
  const out = {
    ...base,
    metadata: {
      ...meta,
      uid: "8d0c1f7e-2b9a-4c55-9a1e-6f3b2a7c9d10",
      resourceVersion: "4711",
      generation: 3,
      creationTimestamp: "2026-11-30T08:00:00Z",
      labels: { ...meta.labels, "cluster.x-k8s.io/cluster-name": "hc1-x7k2p", "machine-template-hash": "3851472613" },
      annotations: { ...meta.annotations, [LAST_APPLIED]: JSON.stringify(o), "example.com/note": "n".repeat(200) },
      finalizers: ["example.com/cleanup"],
      ownerReferences: [{ apiVersion: "example.com/v1", kind: "Owner", name: "o", uid: "u", controller: true }],
      managedFields: [
        { manager: "controller", operation: "Apply", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } },
      ],
    },
    spec: { ...base.spec, ...extra.spec },
    status: {
      ...base.status,
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-11-30T08:00:00Z" }],
      observedGeneration: 3,
      ...extra.status,
    },
  };
  return out;
}

const CP = `${NS}-hc1`;

/** One hosted cluster on vlan100: its objects by resource, each dressed. */
function cluster(): Record<ResourceName, KubeObject[]> {
  const empty = Object.fromEntries(WATCHED_RESOURCES.map((r) => [r.name, [] as KubeObject[]])) as Record<
    ResourceName,
    KubeObject[]
  >;
  return {
    ...empty,
    infras: [json(infra("vlan100"))],
    attachments: [json(attachment("hc1"))],
    hostedclusters: [
      dressed(
        {
          apiVersion: "hypershift.openshift.io/v1beta1",
          kind: "HostedCluster",
          metadata: { name: "hc1", namespace: NS },
        },
        { spec: { platform: { type: "KubeVirt" } }, status: { kubeconfig: { name: "hc1-admin-kubeconfig" } } },
      ),
    ],
    nodepools: [dressed(nodePool("hc1"), { spec: { replicas: 2 }, status: { replicas: 2 } })],
    machines: [
      dressed(machine(CP, "hc1-worker-0", "hc1-workers", ["192.0.2.100"]), {
        spec: { providerID: "kubevirt://hc1-worker-0", bootstrap: { dataSecretName: "user-data" } },
        status: {
          phase: "Running",
          nodeInfo: { kubeletVersion: "v1.30.5", osImage: "RHCOS" },
          // As CAPI's KubeVirt provider reports them: names and an IPv6 address beside the VLAN one.
          addresses: [
            { type: "Hostname", address: "hc1-worker-0" },
            { type: "InternalIP", address: "192.0.2.100" },
            { type: "InternalIP", address: "fd00::64" },
            { type: "InternalDNS", address: "hc1-worker-0.hc1.example.com" },
          ],
        },
      }),
      // Reports no VLAN address: falls back to its VMI's.
      dressed(machine(CP, "hc1-worker-1", "hc1-workers", ["10.128.0.7"]), { status: { phase: "Running" } }),
    ],
    vmis: [
      dressed(vmi(CP, "hc1-worker-1", "02:00:00:00:00:01", "192.0.2.101", { created: "2026-11-30T08:00:00Z" }), {
        spec: { domain: { cpu: { cores: 4 } } },
        status: { phase: "Running", nodeName: "node-7", guestOSInfo: { id: "rhcos" } },
      }),
      dressed(vmi(CP, "hc1-worker-2", "02:00:00:00:00:02", "192.0.2.102"), { status: { phase: "Scheduled" } }),
    ],
    services: controlPlaneServices(CP, 1).map((s) =>
      dressed(s, { spec: { sessionAffinity: "None", ipFamilies: ["IPv4"] }, status: { loadBalancer: {} } }),
    ),
    namespaces: [dressed(namespace(CP), { spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } })],
  };
}

const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

function raw(objects: Record<ResourceName, KubeObject[]>): RawObjects {
  return Object.fromEntries(
    Object.entries(objects).map(([r, list]) => [r, new Map(list.map((o) => [keyOf(o), o]))]),
  ) as unknown as RawObjects;
}

const projectionOf = (name: ResourceName): ((o: KubeObject) => KubeObject) => {
  const r = WATCHED_RESOURCES.find((x) => x.name === name);
  if (r === undefined) throw new Error(`no resource ${name}`);
  return r.project;
};

/** What renderAll makes of the objects: model, files, statuses (the operator's inputs). */
function rendered(objects: Record<ResourceName, KubeObject[]>) {
  const obs = buildObserved(raw(objects), 1);
  const out = renderAll(obs.state, { now: Date.parse("2026-12-01T00:00:00Z") });
  return { topologies: out.model.topologies, problems: out.model.problems, files: out.files, status: out.status };
}

type Read = Record<string, Record<string, unknown> | undefined>;
const read = (o: KubeObject): Read => o as unknown as Read;

/** Per kind, the fields its readers use (src/model, src/operator/apps-ingress): kept as they are. */
const MODEL_KINDS: readonly { resource: ResourceName; kept: (o: KubeObject) => unknown }[] = [
  {
    resource: "machines",
    // The addresses the model can use: IPv4 ones (names and IPv6 are dropped).
    kept: (o) => [
      o.metadata?.annotations?.[NODEPOOL_ANNOTATION],
      ((read(o)["status"]?.["addresses"] ?? []) as { address?: string }[]).filter((a) =>
        /^\d+\.\d+\.\d+\.\d+$/.test(a.address ?? ""),
      ),
    ],
  },
  { resource: "nodepools", kept: (o) => [read(o)["spec"]?.["clusterName"], read(o)["spec"]?.["platform"]] },
  { resource: "hostedclusters", kept: (o) => read(o)["status"]?.["kubeconfig"] },
  {
    resource: "vmis",
    kept: (o) => [
      read(o)["spec"]?.["networks"],
      (read(o)["spec"]?.["domain"] as Record<string, unknown> | undefined)?.["devices"],
      read(o)["status"]?.["interfaces"],
      (o.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp,
    ],
  },
  {
    resource: "services",
    kept: (o) => [read(o)["spec"]?.["type"], read(o)["spec"]?.["clusterIP"], read(o)["spec"]?.["ports"]],
  },
  { resource: "namespaces", kept: (o) => o.metadata?.name },
];

describe("projections of the kinds the model reads", () => {
  const full = cluster();
  const before = rendered(full);

  it("the scenario exercises every kind (routes from Machine and VMI addresses, DHCP reservations)", () => {
    const t = before.topologies[0];
    expect(t?.attachments.map((a) => [a.domain, a.served])).toEqual([["hc1.example.com", true]]);
    expect(t?.attachments[0]?.workerAddresses).toEqual(["192.0.2.100", "192.0.2.101", "192.0.2.102"]);
    expect(t?.dhcp?.reservations.map((r) => r.hwAddress)).toEqual(["02:00:00:00:00:01", "02:00:00:00:00:02"]);
  });

  it.each(MODEL_KINDS)("$resource: the projection builds the same model, files and statuses", ({ resource, kept }) => {
    const projection = projectionOf(resource);
    const projected = full[resource].map(projection);
    const after = rendered({ ...full, [resource]: projected });
    expect(after.topologies).toEqual(before.topologies);
    expect(after.problems).toEqual(before.problems);
    expect([...after.files]).toEqual([...before.files]);
    expect(after.status).toEqual(before.status);
    for (const [i, p] of projected.entries()) {
      const o = full[resource][i] as KubeObject;
      // Identity and what is read stay; the bookkeeping and every unread field go.
      expect(p.metadata).toMatchObject({ name: o.metadata?.name, resourceVersion: "4711", uid: o.metadata?.uid });
      expect(kept(p)).toEqual(kept(o));
      expect(JSON.stringify(p)).not.toMatch(/managedFields|last-applied|ownerReferences|conditions|example\.com/);
      expect(JSON.stringify(p).length).toBeLessThan(JSON.stringify(o).length / 2);
      // Projecting again changes nothing.
      expect(projection(p)).toEqual(p);
    }
  });

  it("Machines of one NodePool share one annotations object; a Machine with no IPv4 address keeps no status", () => {
    const [a, b] = ["hc1-worker-0", "hc1-worker-9"].map((name) =>
      project.machine(dressed(machine(CP, name, "hc1-workers", ["fd00::9"]))),
    );
    expect(a?.metadata?.annotations).toBe(b?.metadata?.annotations);
    expect(Object.isFrozen(a?.metadata?.annotations)).toBe(true);
    expect(a?.metadata?.annotations).toEqual({ [NODEPOOL_ANNOTATION]: `${NS}/hc1-workers` });
    expect(a?.["status"]).toBeUndefined();
    const other = project.machine(dressed(machine(CP, "hc2-worker-0", "hc2-workers", [" 192.0.2.7 "])));
    expect(other.metadata?.annotations).not.toBe(a?.metadata?.annotations);
    // The model trims what it parses: a padded address is kept as it was written.
    expect(other["status"]).toEqual({ addresses: [{ type: "InternalIP", address: " 192.0.2.7 " }] });
  });

  it("keeps what the operator reads beyond the model: the HostedCluster's kubeconfig Secret, a Service's address", () => {
    const hc = projectionOf("hostedclusters")(full.hostedclusters[0] as KubeObject);
    expect(hc["status"]).toEqual({ kubeconfig: { name: "hc1-admin-kubeconfig" } });
    const svc = full.services[0] as KubeObject;
    expect(serviceAddress(projectionOf("services")(svc))).toEqual(serviceAddress(svc));
    expect(serviceAddress(projectionOf("services")(svc))).toEqual({ host: "10.96.1.1", port: 6443 });
  });

  it("keeps the creation time that orders VMIs claiming one MAC (oldest wins)", () => {
    const twin = dressed(vmi(CP, "hc1-twin", "02:00:00:00:00:01", undefined, { created: "2026-11-29T00:00:00Z" }));
    const objects = { ...full, vmis: [...full.vmis, twin] };
    const projected = { ...objects, vmis: objects.vmis.map(projectionOf("vmis")) };
    expect(rendered(projected).problems).toEqual(rendered(objects).problems);
    expect(rendered(projected).problems.map((p) => p.reason)).toContain("DuplicateMAC");
  });

  it("never throws on fields of unexpected types: it drops them, as the model skips them", () => {
    const odd = {
      apiVersion: "cluster.x-k8s.io/v1beta1",
      kind: "Machine",
      metadata: { name: "odd", namespace: CP, annotations: "not a map" },
      status: { addresses: { type: "InternalIP" } },
    } as unknown as KubeObject;
    expect(project.machine(odd)).toEqual({
      apiVersion: "cluster.x-k8s.io/v1beta1",
      kind: "Machine",
      metadata: { name: "odd", namespace: CP },
    });
    expect(slice<{ a?: number }>(null, { a: true })).toBeUndefined();
    // A shared string is kept as it is; a shared field that is not a string too.
    expect(slice<{ a?: string; b?: string }>({ a: "x", b: 5 }, { a: "shared", b: "shared" })).toEqual({ a: "x", b: 5 });
    expect(slice<{ a?: number }[]>([1, { a: 2, b: 3 }], [{ a: true }])).toEqual([{}, { a: 2 }]);
  });
});

describe("projections of the objects oooi applies or writes status on", () => {
  const live = dressed(
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "vlan100-proxy",
        namespace: NS,
        labels: { "app.kubernetes.io/managed-by": "oooi" },
        annotations: { "hostedcluster.densityops.com/applied-hash": "abc" },
      },
      spec: { type: "ClusterIP", selector: { app: "envoy" }, ports: [{ name: "tls", port: 443, targetPort: 8443 }] },
    },
    { spec: { clusterIP: "10.96.9.9", sessionAffinity: "None" } },
  );
  const desired = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "vlan100-proxy", namespace: NS, labels: { "app.kubernetes.io/managed-by": "oooi" } },
    spec: { type: "ClusterIP", selector: { app: "envoy" }, ports: [{ name: "tls", port: 443, targetPort: 8443 }] },
  };

  it("a Service oooi manages keeps every field it applies (drift is still seen), not the bookkeeping", () => {
    const p = projectionOf("services")(live);
    expect(holdsManagedFields(desired, p)).toBe(true);
    expect(observedHash(p)).toBe("abc");
    expect(p.metadata).not.toHaveProperty("managedFields");
    expect(p.metadata?.annotations).not.toHaveProperty(LAST_APPLIED);
    const edited = projectionOf("services")({ ...live, spec: { ...(live["spec"] as object), selector: { app: "x" } } });
    expect(holdsManagedFields(desired, edited)).toBe(false);
  });

  it("children, workloads and our own kinds keep all but managedFields and last-applied", () => {
    const deployment = dressed(
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: NS }, spec: { replicas: 1 } },
      { status: { observedGeneration: 3, updatedReplicas: 1, availableReplicas: 1 } },
    );
    for (const name of ["deployments", "configmaps", "proxyservers", "infras", "attachments"] as const) {
      const p = projectionOf(name)(deployment);
      const { managedFields, ...meta } = deployment.metadata as Record<string, unknown>;
      expect(managedFields).toBeDefined();
      const annotations = Object.fromEntries(
        Object.entries(meta["annotations"] as Record<string, string>).filter(([k]) => k !== LAST_APPLIED),
      );
      expect(p).toEqual({ ...deployment, metadata: { ...meta, annotations } });
    }
    expect(deploymentUnavailable(projectionOf("deployments")(deployment))).toBe(deploymentUnavailable(deployment));
    // Nothing to drop: the same object.
    const plain = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: NS } };
    expect(withoutBookkeeping(plain)).toBe(plain);
  });

  it("every watched resource has its projection: the model's kinds their slice, the rest all but bookkeeping", () => {
    const sliced = WATCHED_RESOURCES.filter((r) => r.project !== project.whole).map((r) => r.name);
    expect(sliced.sort()).toEqual(["hostedclusters", "machines", "namespaces", "nodepools", "services", "vmis"]);
  });
});

describe("the reflector caches the projection", () => {
  let fake: FakeApiServer | undefined;
  afterEach(async () => {
    await fake?.stop();
    fake = undefined;
  });

  it("a listed and a watched Machine are both held as their slice", async () => {
    const f = await FakeApiServer.start({ kinds: [...BUILTIN_KINDS, MACHINE], namespaces: [CP] });
    fake = f;
    const heavy = (name: string, address: string): KubeObject =>
      dressed(machine(CP, name, "hc1-workers", [address]), { status: { phase: "Running" } });
    f.seed(json(heavy("listed", "192.0.2.100")) as JsonObject);
    const machines = WATCHED_RESOURCES.find((r) => r.name === "machines");
    if (machines === undefined) throw new Error("no machines resource");
    const r = new Reflector(new KubeRest(kubeConfigFor(f.url)), machines, { clock: SYSTEM_CLOCK, onChange: () => {} });
    r.start();
    await r.whenSynced();
    f.seed(json(heavy("watched", "192.0.2.101")) as JsonObject);
    await eventually(() => {
      expect([...r.items.keys()].sort()).toEqual([`${CP}/listed`, `${CP}/watched`]);
    });
    for (const [key, o] of r.items) {
      expect(Object.keys(o).sort()).toEqual(["apiVersion", "kind", "metadata", "status"]);
      expect(o.metadata?.annotations).toEqual({ [NODEPOOL_ANNOTATION]: `${NS}/hc1-workers` });
      expect(o["status"]).toEqual({
        addresses: [{ type: "InternalIP", address: key.endsWith("listed") ? "192.0.2.100" : "192.0.2.101" }],
      });
    }
    await r.stop();
  });
});
