// client-node 1.4 informers (ListWatch) and Watch against the fake: list, watch, resets, 410 recovery, errors.
//
// What these tests pin down about client-node 1.4 (the operator's watchers rely on it):
//  - A watch stream the server ends cleanly (timeout, graceful reset) makes the informer re-watch from
//    its last resourceVersion: "connect" fires again, no re-list.
//  - 410 Expired — as an ERROR event inside the stream (what kube-apiserver sends) or as the HTTP status
//    of the watch request — makes it forget its resourceVersion and re-list, then watch again.
//  - Any other failure stops the informer for good after calling the "error" handlers: a watch answered
//    with 500, a list that fails, and an abruptly reset connection ("Premature close"). The caller must
//    call start() again (the operator does it with jittered backoff).
//  - ListWatch never asks for bookmarks (its query is resourceVersion + selectors only); bookmarks reach
//    only callers that use Watch directly with allowWatchBookmarks.
import { CoreV1Api, makeInformer, Watch } from "@kubernetes/client-node";
import type { KubeConfig, V1ConfigMap } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeApiServer, eventually } from "../support/fake-apiserver/index.js";
import { clientNodeConfigFor } from "../support/fake-apiserver/client-node.js";

let fake: FakeApiServer;
let kc: KubeConfig;
let core: CoreV1Api;

beforeEach(async () => {
  fake = await FakeApiServer.start();
  kc = clientNodeConfigFor(fake.url);
  core = kc.makeApiClient(CoreV1Api);
});
afterEach(async () => {
  await fake.stop();
});

const PATH = "/api/v1/namespaces/default/configmaps";

interface Recorder {
  events: string[];
  errors: unknown[];
  connects: number;
}

function configMapInformer(): { informer: ReturnType<typeof makeInformer<V1ConfigMap>>; rec: Recorder } {
  const informer = makeInformer<V1ConfigMap>(kc, PATH, () => core.listNamespacedConfigMap({ namespace: "default" }));
  const rec: Recorder = { events: [], errors: [], connects: 0 };
  informer.on("add", (o) => rec.events.push(`add ${o.metadata?.name ?? ""}`));
  informer.on("update", (o) => rec.events.push(`update ${o.metadata?.name ?? ""} ${JSON.stringify(o.data ?? {})}`));
  informer.on("delete", (o) => rec.events.push(`delete ${o.metadata?.name ?? ""}`));
  informer.on("error", (e) => rec.errors.push(e));
  informer.on("connect", () => {
    rec.connects++;
  });
  return { informer, rec };
}

const cm = (name: string, data: Record<string, string> = {}): V1ConfigMap => ({ metadata: { name }, data });

describe("makeInformer against the fake", () => {
  it("lists, then sees ADDED, MODIFIED and DELETED from the watch", async () => {
    await core.createNamespacedConfigMap({ namespace: "default", body: cm("before") });
    const { informer, rec } = configMapInformer();
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches({ verb: "watch" })).toBe(1);
    });
    expect(rec.events).toEqual(["add before"]);

    await core.createNamespacedConfigMap({ namespace: "default", body: cm("a") });
    await core.patchNamespacedConfigMap({
      name: "a",
      namespace: "default",
      body: [{ op: "add", path: "/data/k", value: "v" }],
    });
    await core.deleteNamespacedConfigMap({ name: "before", namespace: "default" });
    await eventually(() => {
      expect(rec.events).toEqual(["add before", "add a", 'update a {"k":"v"}', "delete before"]);
    });
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(["a"]);
    expect(rec.errors).toEqual([]);
    await informer.stop();
  });

  it("re-watches from its resourceVersion after a clean server-side close, without re-listing", async () => {
    const { informer, rec } = configMapInformer();
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    const rvBefore = fake.requests.all({ verb: "watch" })[0]?.query.get("resourceVersion");
    expect(rvBefore).toMatch(/^\d+$/);
    expect(fake.resetWatches()).toBe(1);
    await eventually(() => {
      expect(rec.connects).toBe(2);
    });
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    const watches = fake.requests.all({ verb: "watch" });
    expect(watches.map((w) => w.query.get("resourceVersion"))).toEqual([rvBefore, rvBefore]);
    expect(fake.requests.count({ verb: "list" })).toBe(1);
    await core.createNamespacedConfigMap({ namespace: "default", body: cm("after-reset") });
    await eventually(() => {
      expect(rec.events).toEqual(["add after-reset"]);
    });
    expect(rec.errors).toEqual([]);
    await informer.stop();
  });

  it("re-lists after 410 Expired sent inside the watch stream once history was compacted", async () => {
    await core.createNamespacedConfigMap({ namespace: "default", body: cm("keep") });
    const { informer, rec } = configMapInformer();
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    // Writes to another kind move the global resourceVersion past the informer's; then history is compacted.
    await core.createNamespacedSecret({ namespace: "default", body: { metadata: { name: "s" } } });
    fake.compact();
    fake.resetWatches();
    await eventually(() => {
      expect(fake.requests.count({ verb: "list" })).toBe(2);
    });
    // The watch after the re-list follows the list asynchronously: wait for it rather than race it.
    await eventually(() => {
      expect(fake.requests.all({ verb: "watch" }).length).toBeGreaterThanOrEqual(3);
    });
    expect(rec.errors).toEqual([]);
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    await core.createNamespacedConfigMap({ namespace: "default", body: cm("later") });
    await eventually(() => {
      expect(rec.events).toEqual(["add keep", "add later"]);
    });
    await informer.stop();
  });

  it("re-lists after a watch answered with HTTP 410", async () => {
    const { informer, rec } = configMapInformer();
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    fake.expireNextWatch({ as: "http" });
    fake.resetWatches();
    await eventually(() => {
      expect(fake.requests.count({ verb: "list" })).toBe(2);
    });
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    expect(rec.errors).toEqual([]);
    await informer.stop();
  });

  it("stops (error handlers called, no retry) when a watch is answered with 500", async () => {
    const { informer, rec } = configMapInformer();
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    fake.failNext(1, { match: { verb: "watch" } });
    fake.resetWatches();
    await eventually(() => {
      expect(rec.errors).toHaveLength(1);
    });
    expect((rec.errors[0] as { statusCode?: number }).statusCode).toBe(500);
    expect(fake.openWatches()).toBe(0);
    const watchesAfterError = fake.requests.count({ verb: "watch" });
    // Restarting by hand resumes from the kept resourceVersion (no list).
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    expect(fake.requests.count({ verb: "watch" })).toBe(watchesAfterError + 1);
    expect(fake.requests.count({ verb: "list" })).toBe(1);
    await informer.stop();
  });

  it("stops when the connection is reset abruptly, and when its list fails", async () => {
    const { informer, rec } = configMapInformer();
    await informer.start();
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    fake.resetWatches({ abrupt: true });
    await eventually(() => {
      expect(rec.errors).toHaveLength(1);
    });
    expect(String(rec.errors[0])).toMatch(/Premature close/);
    expect(fake.openWatches()).toBe(0);
    await informer.stop();

    const second = configMapInformer();
    fake.failNext(1, { match: { verb: "list" } });
    await second.informer.start();
    expect(second.rec.errors).toHaveLength(1);
    expect(fake.openWatches()).toBe(0);
    await second.informer.stop();
  });
});

describe("Watch with bookmarks and timeoutSeconds", () => {
  it("delivers BOOKMARK events carrying the current resourceVersion, and ends at timeoutSeconds", async () => {
    const watch = new Watch(kc);
    const seen: string[] = [];
    let done: unknown = "not yet";
    const list = await core.listNamespacedConfigMap({ namespace: "default" });
    await watch.watch(
      PATH,
      { allowWatchBookmarks: true, resourceVersion: list.metadata?.resourceVersion, timeoutSeconds: 1 },
      (type: string, obj: { metadata?: { resourceVersion?: string; name?: string } }) => {
        seen.push(`${type} ${obj.metadata?.name ?? obj.metadata?.resourceVersion ?? ""}`);
      },
      (err: unknown) => {
        done = err;
      },
    );
    await eventually(() => {
      expect(fake.openWatches()).toBe(1);
    });
    await core.createNamespacedSecret({ namespace: "default", body: { metadata: { name: "unrelated" } } });
    fake.bookmark();
    const rv = String(fake.store.resourceVersion());
    await eventually(() => {
      expect(seen).toEqual([`BOOKMARK ${rv}`]);
    });
    // The server ends the watch after timeoutSeconds; client-node reports a clean end (null).
    await eventually(() => {
      expect(done).toBeNull();
    }, 10_000);
  });
});
