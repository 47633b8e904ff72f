// Fault hooks the operator's fault tests use: injected 500s and 409s, going down and coming back, request counts.
import { CoreV1Api, makeInformer } from "@kubernetes/client-node";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeApiServer, eventually } from "../support/fake-apiserver/index.js";
import { clientNodeConfigFor } from "../support/fake-apiserver/client-node.js";
import { call } from "./http.js";

let fake: FakeApiServer;
beforeEach(async () => {
  fake = await FakeApiServer.start();
});
afterEach(async () => {
  await fake.stop();
});

const CMS = "/api/v1/namespaces/default/configmaps";

describe("fault injection", () => {
  it("fails the next N matching requests with a 500 Status, then serves normally", async () => {
    fake.failNext(2, { match: { path: /configmaps$/, verb: "list" } });
    expect((await call(fake, "GET", "/api/v1/namespaces")).status).toBe(200); // not matched
    const first = await call(fake, "GET", CMS);
    expect(first.status).toBe(500);
    expect(first.body).toMatchObject({
      kind: "Status",
      reason: "InternalError",
      code: 500,
      message: "Internal error occurred: injected failure",
    });
    expect((await call(fake, "GET", CMS)).status).toBe(500);
    expect((await call(fake, "GET", CMS)).status).toBe(200);
    fake.failNext(1, { code: 503 });
    expect((await call(fake, "GET", CMS)).body).toMatchObject({ code: 503, reason: "ServiceUnavailable" });
  });

  it("answers the next write with a 409 Conflict and leaves the data alone", async () => {
    fake.conflictNext(1);
    const r = await call(fake, "POST", CMS, { metadata: { name: "c" } });
    expect(r.status).toBe(409);
    expect(r.body["reason"]).toBe("Conflict");
    expect((await call(fake, "GET", `${CMS}/c`)).status).toBe(404);
    expect((await call(fake, "POST", CMS, { metadata: { name: "c" } })).status).toBe(201);
  });

  it("goes down (connections refused) and comes back on the same port with the same data", async () => {
    await call(fake, "POST", CMS, { metadata: { name: "survivor" } });
    const url = fake.url;
    await fake.goDown();
    expect(fake.isDown()).toBe(true);
    await expect(fetch(`${url}${CMS}`)).rejects.toThrow();
    await fake.goUp();
    expect(fake.url).toBe(url);
    expect((await call(fake, "GET", `${CMS}/survivor`)).status).toBe(200);

    await fake.goDown(50);
    await eventually(() => {
      expect(fake.isDown()).toBe(false);
    });
    expect((await call(fake, "GET", `${CMS}/survivor`)).status).toBe(200);
  });

  it("an informer cut off by an outage reports an error; restarted after the outage it converges", async () => {
    const kc = clientNodeConfigFor(fake.url);
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(kc, CMS, () => core.listNamespacedConfigMap({ namespace: "default" }));
    const errors: unknown[] = [];
    informer.on("error", (e) => errors.push(e));
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    await fake.goDown();
    await eventually(() => {
      expect(errors.length).toBeGreaterThan(0);
    });
    // Changes made while the informer was away (seeded straight into the store).
    fake.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "while-down", namespace: "default" } });
    await fake.goUp();
    await informer.start();
    await eventually(() => {
      expect(informer.list().map((o) => o.metadata?.name)).toEqual(["while-down"]);
    });
    await informer.stop();
  });

  it("counts every request by verb and resource, so idleness can be asserted", async () => {
    await call(fake, "POST", CMS, { metadata: { name: "a" } });
    await call(fake, "GET", `${CMS}/a`);
    await call(fake, "GET", CMS);
    await call(fake, "PATCH", `${CMS}/a?fieldManager=oooi`, { data: { x: "1" } }, "application/merge-patch+json");
    await call(fake, "GET", "/apis");
    expect(fake.requests.summary()).toEqual({
      "create configmaps": 1,
      "get configmaps": 1,
      "list configmaps": 1,
      "patch configmaps": 1,
      "discovery /apis": 1,
    });
    expect(fake.requests.writes().map((r) => [r.verb, r.name, r.fieldManager, r.status])).toEqual([
      ["create", undefined, undefined, 201],
      ["patch", "a", "oooi", 200],
    ]);
    fake.requests.clear();
    expect(fake.requests.count()).toBe(0);
  });
});
