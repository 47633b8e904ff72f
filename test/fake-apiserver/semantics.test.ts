// kube-apiserver semantics the fake reproduces: generation, status subresource, finalizers, garbage
// collection, namespaces, selectors, paging, watch replay/410, discovery, CRD registration.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crdObject } from "../../src/api/crd.js";
import { KINDS } from "../../src/api/schema.js";
import { BUILTIN_KINDS, EXTERNAL_KINDS, FakeApiServer, MACHINE, eventually } from "../support/fake-apiserver/index.js";
import { call, openWatch } from "./http.js";

let fake: FakeApiServer;
beforeEach(async () => {
  fake = await FakeApiServer.start({ kinds: [...BUILTIN_KINDS, ...EXTERNAL_KINDS] });
});
afterEach(async () => {
  await fake.stop();
});

type Meta = { name?: string };
const MACHINES = "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machines";
const CMS = "/api/v1/namespaces/default/configmaps";
const meta = (r: { body: Record<string, unknown> }): Record<string, unknown> =>
  r.body["metadata"] as Record<string, unknown>;
const machine = (
  name: string,
  spec: Record<string, unknown> = { clusterName: "c" },
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: "cluster.x-k8s.io/v1beta1",
  kind: "Machine",
  metadata: { name, ...extra },
  spec,
});

describe("generation and the status subresource", () => {
  it("bumps generation on spec changes only; /status changes only status; the main endpoint ignores status", async () => {
    const created = await call(fake, "POST", MACHINES, machine("m"));
    expect(meta(created)["generation"]).toBe(1);
    const labelled = await call(
      fake,
      "PATCH",
      `${MACHINES}/m`,
      { metadata: { labels: { a: "b" } } },
      "application/merge-patch+json",
    );
    expect(meta(labelled)["generation"]).toBe(1);
    const status = await call(
      fake,
      "PATCH",
      `${MACHINES}/m/status`,
      { spec: { clusterName: "ignored" }, status: { phase: "Running" } },
      "application/merge-patch+json",
    );
    expect(status.body["status"]).toEqual({ phase: "Running" });
    expect(status.body["spec"]).toEqual({ clusterName: "c" });
    expect(meta(status)["generation"]).toBe(1);
    // A PUT on the main endpoint that only changes status is a no-op: same resourceVersion.
    const putStatusOnly = await call(fake, "PUT", `${MACHINES}/m`, { ...status.body, status: { phase: "Failed" } });
    expect(putStatusOnly.body["status"]).toEqual({ phase: "Running" });
    expect(meta(putStatusOnly)["resourceVersion"]).toBe(meta(status)["resourceVersion"]);
    const spec = await call(
      fake,
      "PATCH",
      `${MACHINES}/m`,
      { spec: { clusterName: "d" } },
      "application/merge-patch+json",
    );
    expect(meta(spec)["generation"]).toBe(2);
    // ConfigMaps have no generation, as in kube-apiserver.
    const cm = await call(fake, "POST", CMS, { metadata: { name: "c" }, data: { a: "1" } });
    expect(meta(cm)["generation"]).toBeUndefined();
  });

  it("keeps one global resourceVersion across kinds and answers PUT with a stale one with 409", async () => {
    const a = await call(fake, "POST", CMS, { metadata: { name: "a" } });
    const m = await call(fake, "POST", MACHINES, machine("m"));
    expect(Number(meta(m)["resourceVersion"])).toBe(Number(meta(a)["resourceVersion"]) + 1);
    await call(fake, "PUT", `${CMS}/a`, { ...a.body, data: { x: "1" } });
    const stale = await call(fake, "PUT", `${CMS}/a`, { ...a.body, data: { x: "2" } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Conflict", code: 409 });
  });

  it("answers a failed JSON-patch test with 422 and an unknown patch type with 415", async () => {
    await call(fake, "POST", CMS, { metadata: { name: "p" }, data: { a: "1" } });
    const bad = await call(
      fake,
      "PATCH",
      `${CMS}/p`,
      [{ op: "test", path: "/data/a", value: "2" }],
      "application/json-patch+json",
    );
    expect(bad.status).toBe(422);
    const unknown = await call(fake, "PATCH", `${CMS}/p`, {}, "text/plain");
    expect(unknown.status).toBe(415);
  });
});

describe("finalizers and deletion", () => {
  it("keeps an object with finalizers, marked with deletionTimestamp, until they are removed", async () => {
    await call(fake, "POST", MACHINES, machine("f", { clusterName: "c" }, { finalizers: ["oooi/cleanup"] }));
    const w = openWatch(fake, `${MACHINES}?watch=true&resourceVersion=${fake.store.resourceVersion()}`);
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    const del = await call(fake, "DELETE", `${MACHINES}/f`);
    expect(del.status).toBe(200);
    expect(meta(del)["deletionTimestamp"]).toEqual(expect.any(String));
    expect(meta(del)["generation"]).toBe(2);
    const still = await call(fake, "GET", `${MACHINES}/f`);
    expect(still.status).toBe(200);
    // deletionTimestamp cannot be cleared by a client.
    const undelete = await call(
      fake,
      "PATCH",
      `${MACHINES}/f`,
      { metadata: { deletionTimestamp: null } },
      "application/merge-patch+json",
    );
    expect(meta(undelete)["deletionTimestamp"]).toEqual(meta(del)["deletionTimestamp"]);
    await call(fake, "PATCH", `${MACHINES}/f`, { metadata: { finalizers: null } }, "application/merge-patch+json");
    expect((await call(fake, "GET", `${MACHINES}/f`)).status).toBe(404);
    await eventually(() => {
      expect(w.events.map((e) => e.type)).toEqual(["MODIFIED", "DELETED"]);
    });
    w.abort();
  });

  it("cascades deletion to ownerReference dependents, respecting their finalizers (background)", async () => {
    const owner = await call(fake, "POST", MACHINES, machine("owner"));
    const ref = { apiVersion: "cluster.x-k8s.io/v1beta1", kind: "Machine", name: "owner", uid: meta(owner)["uid"] };
    await call(fake, "POST", CMS, { metadata: { name: "dep1", ownerReferences: [ref] } });
    await call(fake, "POST", CMS, { metadata: { name: "dep2", ownerReferences: [ref], finalizers: ["x/hold"] } });
    await call(fake, "POST", CMS, { metadata: { name: "unrelated" } });
    await call(fake, "DELETE", `${MACHINES}/owner`);
    expect((await call(fake, "GET", `${CMS}/dep1`)).status).toBe(404);
    const dep2 = await call(fake, "GET", `${CMS}/dep2`);
    expect(meta(dep2)["deletionTimestamp"]).toEqual(expect.any(String));
    expect((await call(fake, "GET", `${CMS}/unrelated`)).status).toBe(200);
  });

  it("foreground deletion holds the owner until its dependents are gone; orphan keeps them", async () => {
    const owner = await call(fake, "POST", MACHINES, machine("fg"));
    const ref = {
      apiVersion: "cluster.x-k8s.io/v1beta1",
      kind: "Machine",
      name: "fg",
      uid: meta(owner)["uid"],
      blockOwnerDeletion: true,
    };
    await call(fake, "POST", CMS, { metadata: { name: "held", ownerReferences: [ref], finalizers: ["x/hold"] } });
    const del = await call(fake, "DELETE", `${MACHINES}/fg`, { propagationPolicy: "Foreground" });
    expect(meta(del)["finalizers"]).toEqual(["foregroundDeletion"]);
    expect((await call(fake, "GET", `${MACHINES}/fg`)).status).toBe(200);
    await call(fake, "PATCH", `${CMS}/held`, { metadata: { finalizers: null } }, "application/merge-patch+json");
    expect((await call(fake, "GET", `${CMS}/held`)).status).toBe(404);
    expect((await call(fake, "GET", `${MACHINES}/fg`)).status).toBe(404);

    const o2 = await call(fake, "POST", MACHINES, machine("orph"));
    await call(fake, "POST", CMS, {
      metadata: { name: "kept", ownerReferences: [{ ...ref, name: "orph", uid: meta(o2)["uid"] }] },
    });
    await call(fake, "DELETE", `${MACHINES}/orph?propagationPolicy=Orphan`);
    const kept = await call(fake, "GET", `${CMS}/kept`);
    expect(kept.status).toBe(200);
    expect(meta(kept)["ownerReferences"]).toBeUndefined();
  });

  it("checks namespaces: 404 when missing, 403 while terminating, contents deleted, then the namespace", async () => {
    const missing = await call(fake, "POST", "/api/v1/namespaces/nope/configmaps", { metadata: { name: "x" } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      reason: "NotFound",
      message: 'namespaces "nope" not found',
      details: { name: "nope", kind: "namespaces" },
    });
    await call(fake, "POST", "/api/v1/namespaces", { metadata: { name: "ns1" } });
    await call(fake, "POST", "/api/v1/namespaces/ns1/configmaps", {
      metadata: { name: "held", finalizers: ["x/hold"] },
    });
    await call(fake, "POST", "/api/v1/namespaces/ns1/configmaps", { metadata: { name: "free" } });
    const del = await call(fake, "DELETE", "/api/v1/namespaces/ns1");
    expect(del.body["status"]).toEqual({ phase: "Terminating" });
    expect((await call(fake, "GET", "/api/v1/namespaces/ns1/configmaps/free")).status).toBe(404);
    const forbidden = await call(fake, "POST", "/api/v1/namespaces/ns1/configmaps", { metadata: { name: "new" } });
    expect(forbidden.status).toBe(403);
    await call(
      fake,
      "PATCH",
      "/api/v1/namespaces/ns1/configmaps/held",
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    expect((await call(fake, "GET", "/api/v1/namespaces/ns1")).status).toBe(404);
  });

  it("can skip namespace checks", async () => {
    const loose = await FakeApiServer.start({ requireNamespaces: false });
    try {
      expect(
        (await call(loose, "POST", "/api/v1/namespaces/anything/configmaps", { metadata: { name: "x" } })).status,
      ).toBe(201);
    } finally {
      await loose.stop();
    }
  });
});

describe("lists and watches", () => {
  it("filters by label and field selectors and pages with limit/continue", async () => {
    for (const [n, l] of [
      ["a", "x"],
      ["b", "y"],
      ["c", "x"],
    ] as const) {
      await call(fake, "POST", CMS, { metadata: { name: n, labels: { tier: l } } });
    }
    const names = (r: { body: Record<string, unknown> }): unknown[] =>
      (r.body["items"] as { metadata: { name: string } }[]).map((i) => i.metadata.name);
    expect(names(await call(fake, "GET", `${CMS}?labelSelector=${encodeURIComponent("tier in (x)")}`))).toEqual([
      "a",
      "c",
    ]);
    expect(names(await call(fake, "GET", `${CMS}?labelSelector=tier!%3Dx`))).toEqual(["b"]);
    expect(names(await call(fake, "GET", `/api/v1/configmaps?fieldSelector=metadata.name%3Db`))).toEqual(["b"]);
    expect((await call(fake, "GET", `${CMS}?fieldSelector=spec.foo%3Db`)).status).toBe(400);
    const p1 = await call(fake, "GET", `${CMS}?limit=2`);
    expect(names(p1)).toEqual(["a", "b"]);
    const cont = meta(p1)["continue"] as string;
    expect(meta(p1)["remainingItemCount"]).toBe(1);
    expect(names(await call(fake, "GET", `${CMS}?limit=2&continue=${cont}`))).toEqual(["c"]);
  });

  it("replays history after a resourceVersion, synthesizes ADDED from 0, and turns selector exits into DELETED", async () => {
    const a = await call(fake, "POST", CMS, { metadata: { name: "a", labels: { on: "1" } } });
    await call(fake, "PATCH", `${CMS}/a`, { data: { k: "v" } }, "application/merge-patch+json");
    const replay = openWatch(
      fake,
      `${CMS}?watch=true&labelSelector=on&resourceVersion=${meta(a)["resourceVersion"] as string}`,
    );
    const fromZero = openWatch(fake, `${CMS}?watch=1&labelSelector=on&resourceVersion=0`);
    await eventually(() => {
      expect(fake.openWatches()).toBe(2);
    });
    await call(fake, "PATCH", `${CMS}/a`, { metadata: { labels: null } }, "application/merge-patch+json");
    await eventually(() => {
      expect(replay.events.map((e) => e.type)).toEqual(["MODIFIED", "DELETED"]);
    });
    await eventually(() => {
      expect(fromZero.events.map((e) => e.type)).toEqual(["ADDED", "DELETED"]);
    });
    expect(replay.events[0]?.object).toMatchObject({ kind: "ConfigMap", apiVersion: "v1", data: { k: "v" } });
    replay.abort();
    fromZero.abort();
  });

  it("answers a watch from a compacted resourceVersion with an ERROR 410 event in a 200 stream", async () => {
    const rv = fake.store.resourceVersion();
    await call(fake, "POST", CMS, { metadata: { name: "x" } });
    fake.compact();
    const w = openWatch(fake, `${CMS}?watch=true&resourceVersion=${rv}`);
    await w.closed;
    expect(w.events).toEqual([
      {
        type: "ERROR",
        object: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `too old resource version: ${rv} (${rv + 2})`,
          reason: "Expired",
          code: 410,
        },
      },
    ]);
    // A list asking for that exact version is 410 too; a plain list works.
    expect((await call(fake, "GET", `${CMS}?resourceVersion=${rv}&resourceVersionMatch=Exact`)).status).toBe(410);
    expect((await call(fake, "GET", CMS)).status).toBe(200);
  });

  it("keeps a sliding window of history: a watch from a retained resourceVersion replays the later events of its kind only, an older one is 410", async () => {
    const small = await FakeApiServer.start({ historyLimit: 4 });
    try {
      const SECRETS = "/api/v1/namespaces/default/secrets";
      // 12 writes alternating ConfigMaps and Secrets: the window (the last 4) moves past its own size twice.
      const rvs: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await call(small, "POST", i % 2 === 0 ? CMS : SECRETS, { metadata: { name: `o${String(i)}` } });
        rvs.push(meta(r)["resourceVersion"] as string);
      }
      const names = async (from: string): Promise<unknown[]> => {
        const w = openWatch(small, `${CMS}?watch=true&resourceVersion=${from}&timeoutSeconds=1`);
        await w.closed;
        return w.events.map((e) => (e.type === "ERROR" ? e.object["code"] : (e.object["metadata"] as Meta).name));
      };
      // Retained: the events of writes 8..11; a watch from write 7's version needs none older.
      expect(await names(rvs[7] ?? "")).toEqual(["o8", "o10"]);
      expect(await names(rvs[8] ?? "")).toEqual(["o10"]);
      expect(await names(rvs[11] ?? "")).toEqual([]);
      expect(await names(rvs[6] ?? "")).toEqual([410]);
      expect(await names(rvs[0] ?? "")).toEqual([410]);
    } finally {
      await small.stop();
    }
  });

  it("serves the same object on get, list and watch, whatever a caller does with the copy it was given", async () => {
    await call(fake, "POST", CMS, {
      metadata: { name: "a", labels: { l: "1" } },
      data: JSON.parse('{"__proto__":"x","k":"v"}') as unknown,
    });
    const configMaps = fake.store.kindByGvk("v1", "ConfigMap");
    if (configMaps === undefined) throw new Error("ConfigMaps are not served");
    const copy = fake.store.get(configMaps, "default", "a");
    (copy["data"] as Record<string, string>)["k"] = "changed";
    const w = openWatch(fake, `${CMS}?watch=true&resourceVersion=0&timeoutSeconds=1`);
    const got = (await call(fake, "GET", `${CMS}/a`)).body;
    const listed = (await call(fake, "GET", CMS)).body["items"] as Record<string, unknown>[];
    await w.closed;
    expect(Object.keys(got["data"] as object)).toEqual(["__proto__", "k"]);
    expect(got["data"]).toEqual(JSON.parse('{"__proto__":"x","k":"v"}'));
    expect(w.events).toEqual([{ type: "ADDED", object: got }]);
    // Built-in kinds' list items carry no apiVersion/kind; otherwise the same object.
    expect(listed).toEqual(
      [{ ...got, apiVersion: undefined, kind: undefined }].map((o) => JSON.parse(JSON.stringify(o)) as unknown),
    );
  });

  it("compacts on its own once the bounded history is full", async () => {
    const small = await FakeApiServer.start({ historyLimit: 2 });
    try {
      const rv = small.store.resourceVersion();
      for (const n of ["a", "b", "c"]) await call(small, "POST", CMS, { metadata: { name: n } });
      const w = openWatch(small, `${CMS}?watch=true&resourceVersion=${rv}`);
      await w.closed;
      expect(w.events[0]?.object["code"]).toBe(410);
    } finally {
      await small.stop();
    }
  });
});

describe("apply configurations", () => {
  const apply = async (name: string, text: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${fake.url}${CMS}/${name}?fieldManager=t`, {
      method: "PATCH",
      headers: { "Content-Type": "application/apply-patch+yaml" },
      body: text,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("reads YAML block and flow syntax as well as JSON, and answers 400 to what is neither", async () => {
    const block = await apply("block", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: block\ndata:\n  k: v\n");
    const flow = await apply("flow", "{apiVersion: v1, kind: ConfigMap, metadata: {name: flow}, data: {k: v}}");
    const json = await apply(
      "json",
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "json" }, data: { k: "v" } }),
    );
    for (const r of [block, flow, json]) {
      expect(r.status).toBe(201);
      expect(r.body["data"]).toEqual({ k: "v" });
    }
    const broken = await apply("broken", '{"apiVersion": "v1", kind: [');
    expect(broken.status).toBe(400);
    expect(broken.body["message"]).toMatch(/^error decoding request body/);
    expect((await call(fake, "GET", `${CMS}/broken`)).status).toBe(404);
  });
});

describe("discovery and the kind registry", () => {
  it("publishes legacy and aggregated discovery, /version and a Table for kubectl", async () => {
    const v1 = await call(fake, "GET", "/api/v1");
    const resources = v1.body["resources"] as {
      name: string;
      shortNames?: string[];
      verbs: string[];
      namespaced: boolean;
    }[];
    expect(resources.find((r) => r.name === "configmaps")).toMatchObject({ shortNames: ["cm"], namespaced: true });
    expect(resources.find((r) => r.name === "services/status")?.verbs).toEqual(["get", "patch", "update"]);
    const machines = await call(fake, "GET", "/apis/cluster.x-k8s.io/v1beta1");
    expect(machines.body).toMatchObject({ kind: "APIResourceList", groupVersion: "cluster.x-k8s.io/v1beta1" });
    const agg = await call(
      fake,
      "GET",
      "/apis",
      undefined,
      undefined,
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    );
    expect(agg.contentType).toContain("as=APIGroupDiscoveryList");
    const apps = (
      agg.body["items"] as {
        metadata: { name: string };
        versions: { resources: { resource: string; scope: string }[] }[];
      }[]
    ).find((g) => g.metadata.name === "apps");
    expect(apps?.versions[0]?.resources[0]).toMatchObject({ resource: "deployments", scope: "Namespaced" });
    expect((await call(fake, "GET", "/version")).body).toMatchObject({ major: "1", minor: "31" });
    await call(fake, "POST", CMS, { metadata: { name: "t" } });
    const table = await call(
      fake,
      "GET",
      CMS,
      undefined,
      undefined,
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    );
    expect(table.body).toMatchObject({ kind: "Table", rows: [{ cells: ["t", expect.any(String)] }] });
  });

  it("adds and removes optional kinds at runtime", async () => {
    fake.removeKind(MACHINE);
    expect((await call(fake, "GET", "/apis/cluster.x-k8s.io/v1beta1")).status).toBe(404);
    expect((await call(fake, "GET", MACHINES)).status).toBe(404);
    const groups = (await call(fake, "GET", "/apis")).body["groups"] as { name: string }[];
    expect(groups.map((g) => g.name)).not.toContain("cluster.x-k8s.io");
    fake.addKind(MACHINE);
    expect((await call(fake, "GET", MACHINES)).status).toBe(200);
  });

  it("serves the kinds of a CustomResourceDefinition once it is created, and stops when it is deleted", async () => {
    const def = KINDS.find((k) => k.kind === "Infra");
    if (def === undefined) throw new Error("no Infra kind");
    const infras = "/apis/hostedcluster.densityops.com/v1alpha1/namespaces/default/infras";
    expect((await call(fake, "GET", infras)).status).toBe(404);
    const crd = await call(fake, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crdObject(def));
    expect(crd.status).toBe(201);
    const created = await call(fake, "POST", infras, {
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "Infra",
      metadata: { name: "i" },
      spec: {},
    });
    expect(meta(created)["generation"]).toBe(1);
    await call(
      fake,
      "DELETE",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/infras.hostedcluster.densityops.com",
    );
    expect((await call(fake, "GET", infras)).status).toBe(404);
  });
});
