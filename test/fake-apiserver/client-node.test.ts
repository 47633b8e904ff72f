// @kubernetes/client-node 1.4 against the fake: typed CRUD, custom objects, and server-side apply.
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { KubeConfig, KubernetesObject, V1Deployment } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_KINDS, EXTERNAL_KINDS, FakeApiServer, OOOI_KINDS } from "../support/fake-apiserver/index.js";
import { clientNodeConfigFor } from "../support/fake-apiserver/client-node.js";

let fake: FakeApiServer;
let kc: KubeConfig;

beforeAll(async () => {
  fake = await FakeApiServer.start({ kinds: [...BUILTIN_KINDS, ...EXTERNAL_KINDS, ...OOOI_KINDS] });
  kc = clientNodeConfigFor(fake.url);
});
afterAll(async () => {
  await fake.stop();
});

/** The Status body of a failed client-node call. */
async function failure(p: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiException) {
      const raw: unknown = e.body;
      const status = (typeof raw === "string" ? JSON.parse(raw) : raw) as Record<string, unknown>;
      return { code: e.code, status };
    }
    throw e;
  }
  throw new Error("expected the call to fail");
}

describe("client-node 1.4 typed clients", () => {
  it("refuses a plain-http server unless the kubeconfig skips TLS verification", async () => {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const strict = new KubeConfig();
    strict.loadFromOptions({
      clusters: [{ name: "c", server: fake.url, skipTLSVerify: false }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    await expect(strict.makeApiClient(CoreV1Api).listNamespace()).rejects.toThrow(/HTTP protocol is not allowed/);
    const ok = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(ok.items.map((n) => n.metadata?.name)).toContain("default");
  });

  it("creates, reads, replaces, patches and deletes a ConfigMap", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "cm1", labels: { app: "x" } }, data: { a: "1" } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.resourceVersion).toMatch(/^\d+$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);

    const dup = await failure(
      core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "cm1" } } }),
    );
    expect(dup.code).toBe(409);
    expect(dup.status).toMatchObject({
      kind: "Status",
      reason: "AlreadyExists",
      code: 409,
      details: { name: "cm1", kind: "configmaps" },
    });

    const read = await core.readNamespacedConfigMap({ name: "cm1", namespace: "default" });
    expect(read.data).toEqual({ a: "1" });

    const replaced = await core.replaceNamespacedConfigMap({
      name: "cm1",
      namespace: "default",
      body: {
        metadata: { name: "cm1", labels: { app: "x" }, resourceVersion: read.metadata?.resourceVersion ?? "" },
        data: { a: "2" },
      },
    });
    expect(replaced.data).toEqual({ a: "2" });
    // The old resourceVersion is now stale: optimistic concurrency says 409 Conflict.
    const stale = await failure(
      core.replaceNamespacedConfigMap({
        name: "cm1",
        namespace: "default",
        body: { metadata: { name: "cm1", resourceVersion: read.metadata?.resourceVersion ?? "" }, data: { a: "3" } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.status["reason"]).toBe("Conflict");

    const merged = await core.patchNamespacedConfigMap(
      { name: "cm1", namespace: "default", body: { data: { b: "x" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    expect(merged.data).toEqual({ a: "2", b: "x" });
    const jsonPatched = await core.patchNamespacedConfigMap(
      { name: "cm1", namespace: "default", body: [{ op: "remove", path: "/data/a" }] },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    expect(jsonPatched.data).toEqual({ b: "x" });

    const labelled = await core.listNamespacedConfigMap({ namespace: "default", labelSelector: "app=x" });
    expect(labelled.items.map((c) => c.metadata?.name)).toEqual(["cm1"]);
    expect((await core.listNamespacedConfigMap({ namespace: "default", labelSelector: "app!=x" })).items).toEqual([]);

    await core.deleteNamespacedConfigMap({ name: "cm1", namespace: "default" });
    const gone = await failure(core.readNamespacedConfigMap({ name: "cm1", namespace: "default" }));
    expect(gone.code).toBe(404);
    expect(gone.status).toMatchObject({ reason: "NotFound", message: 'configmaps "cm1" not found' });
  });

  it("answers 404 NotFound for a namespace that does not exist", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const r = await failure(
      core.createNamespacedConfigMap({ namespace: "nowhere", body: { metadata: { name: "x" } } }),
    );
    expect(r.code).toBe(404);
    expect(r.status["message"]).toBe('namespaces "nowhere" not found');
  });

  it("serves custom objects with generation and a status subresource", async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const group = "cluster.x-k8s.io";
    const version = "v1beta1";
    const created = (await custom.createNamespacedCustomObject({
      group,
      version,
      namespace: "default",
      plural: "machines",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "Machine",
        metadata: { name: "m1" },
        spec: { clusterName: "c" },
        status: { phase: "ignored" },
      },
    })) as KubernetesObject & { status?: unknown };
    expect(created.metadata?.generation).toBe(1);
    expect(created.status).toBeUndefined(); // status is dropped on create when it is a subresource

    const withStatus = (await custom.patchNamespacedCustomObjectStatus(
      {
        group,
        version,
        namespace: "default",
        plural: "machines",
        name: "m1",
        body: { status: { addresses: [{ type: "InternalIP", address: "192.0.2.10" }] } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )) as KubernetesObject & { status?: { addresses?: unknown[] } };
    expect(withStatus.status?.addresses).toHaveLength(1);
    expect(withStatus.metadata?.generation).toBe(1);

    const list = (await custom.listClusterCustomObject({ group, version, plural: "machines" })) as {
      items: KubernetesObject[];
    };
    expect(list.items.map((m) => [m.kind, m.metadata?.name])).toEqual([["Machine", "m1"]]);
  });

  it("lists built-in kinds without kind/apiVersion on items, as kube-apiserver does", async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({ namespace: "default", body: deployment("d-list", 1) });
    const res = await fetch(`${fake.url}/apis/apps/v1/namespaces/default/deployments`);
    const body = (await res.json()) as { kind: string; apiVersion: string; items: Record<string, unknown>[] };
    expect(body.kind).toBe("DeploymentList");
    expect(body.items[0]?.["kind"]).toBeUndefined();
    expect(body.items[0]?.["apiVersion"]).toBeUndefined();
  });
});

function deployment(name: string, replicas: number, image = "registry.example/app:1"): V1Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default" },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image }] } },
    },
  };
}

describe("server-side apply through KubernetesObjectApi", () => {
  it("creates, tracks managers, reports conflicts with the fields, and takes them with force", async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const first = await objects.patch(
      deployment("ssa", 2),
      undefined,
      undefined,
      "oooi",
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(first.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([["oooi", "Apply"]]);
    const fields = first.metadata?.managedFields?.[0]?.fieldsV1 as Record<string, Record<string, unknown>>;
    expect(Object.keys(fields["f:spec"] ?? {})).toEqual(
      expect.arrayContaining(["f:replicas", "f:selector", "f:template"]),
    );

    // Applying the same configuration again is a no-op: same resourceVersion.
    const again = await objects.patch(
      deployment("ssa", 2),
      undefined,
      undefined,
      "oooi",
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);

    // Another manager setting the same value shares ownership; a different value conflicts.
    await objects.patch(deployment("ssa", 2), undefined, undefined, "hpa", false, PatchStrategy.ServerSideApply);
    const conflict = await failure(
      objects.patch(deployment("ssa", 5), undefined, undefined, "other", false, PatchStrategy.ServerSideApply),
    );
    expect(conflict.code).toBe(409);
    expect(conflict.status["reason"]).toBe("Conflict");
    expect(conflict.status["message"]).toMatch(
      /^Apply failed with 2 conflicts: conflict with "oooi" using apps\/v1: \.spec\.replicas\nconflict with "hpa"/,
    );
    const causes = (conflict.status["details"] as { causes: { type: string; field: string; message: string }[] })
      .causes;
    expect(causes).toContainEqual({
      type: "FieldManagerConflict",
      message: 'conflict with "oooi" using apps/v1',
      field: ".spec.replicas",
    });

    // force takes the field: the others lose it, the value changes, generation moves.
    const forced = await objects.patch(
      deployment("ssa", 5),
      undefined,
      undefined,
      "other",
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(forced.spec?.replicas).toBe(5);
    expect(forced.metadata?.generation).toBe(2);
    const owners = (forced.metadata?.managedFields ?? [])
      .filter((m) => JSON.stringify(m.fieldsV1).includes('"f:replicas"'))
      .map((m) => m.manager);
    expect(owners).toEqual(["other"]);

    // A container list element is keyed by name: a second manager adds its own container without conflict.
    const sidecar = deployment("ssa", 5);
    const podSpec = sidecar.spec?.template.spec;
    if (podSpec) podSpec.containers = [{ name: "sidecar", image: "registry.example/side:1" }];
    const both = await objects.patch(sidecar, undefined, undefined, "other", true, PatchStrategy.ServerSideApply);
    expect(both.spec?.template.spec?.containers.map((c) => c.name).sort()).toEqual(["app", "sidecar"]);

    // Dropping a field from one's configuration removes it when nobody else owns it.
    const lessLabels = deployment("ssa", 2);
    lessLabels.metadata = { name: "ssa", namespace: "default", labels: { keep: "yes" } };
    const withLabel = await objects.patch(
      lessLabels,
      undefined,
      undefined,
      "oooi",
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(withLabel.metadata?.labels).toEqual({ keep: "yes" });
    const dropped = await objects.patch(
      deployment("ssa", 2),
      undefined,
      undefined,
      "oooi",
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(dropped.metadata?.labels).toBeUndefined();
  });

  it("requires a fieldManager and ignores status on the main resource", async () => {
    const res = await fetch(`${fake.url}/apis/apps/v1/namespaces/default/deployments/nofm`, {
      method: "PATCH",
      headers: { "Content-Type": "application/apply-patch+yaml" },
      body: JSON.stringify(deployment("nofm", 1)),
    });
    expect(res.status).toBe(400);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const withStatus = deployment("st", 1);
    withStatus.status = { replicas: 7 };
    const applied = await objects.patch(withStatus, undefined, undefined, "oooi", true, PatchStrategy.ServerSideApply);
    expect(applied.status).toBeUndefined();
  });
});
