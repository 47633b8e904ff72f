// The Kubernetes watchers on their own: bookmarks keep a quiet watch alive while a silent one is
// re-listed by the watchdog; optional CRDs are watched only while served; our kinds pass through
// the schema (invalid → ClusterState.invalid); one snapshot per burst of changes.
import { firstValueFrom, filter } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { API_VERSION } from "../../src/api/schema.js";
import { ClusterWatcher } from "../../src/watchers/kube/cluster.js";
import type { Observed } from "../../src/watchers/kube/observed.js";
import { Reflector } from "../../src/watchers/kube/reflector.js";
import { WATCHED_RESOURCES } from "../../src/watchers/kube/resources.js";
import { KubeRest } from "../../src/kube/rest.js";
import { SYSTEM_CLOCK } from "../../src/util/clock.js";
import {
  BUILTIN_KINDS,
  eventually,
  FakeApiServer,
  kubeConfigFor,
  MACHINE,
  OOOI_KINDS,
} from "../support/fake-apiserver/index.js";
import { quietLogger } from "./support.js";

let fake: FakeApiServer | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await fake?.stop();
  fake = undefined;
});

const CONFIGMAPS = WATCHED_RESOURCES.find((r) => r.name === "configmaps");

describe("Reflector", () => {
  it("asks for bookmarks, so a quiet watch with bookmarks is never re-listed; a silent one is", async () => {
    if (CONFIGMAPS === undefined) throw new Error("no configmaps resource");
    for (const bookmarks of [true, false]) {
      const f = await FakeApiServer.start({ bookmarkIntervalMs: bookmarks ? 50 : 0 });
      fake = f;
      let changes = 0;
      const r = new Reflector(new KubeRest(kubeConfigFor(f.url)), CONFIGMAPS, {
        clock: SYSTEM_CLOCK,
        watchTimeoutSeconds: 60,
        watchdogMs: 250,
        onChange: () => {
          changes++;
        },
      });
      r.start();
      await r.whenSynced();
      await sleep(900);
      expect(f.requests.all({ verb: "watch" })[0]?.query.get("allowWatchBookmarks")).toBe("true");
      if (bookmarks) expect(f.requests.count({ verb: "list" })).toBe(1);
      else expect(f.requests.count({ verb: "list" })).toBeGreaterThanOrEqual(3);
      // Still current after all that: a labelled ConfigMap arrives.
      f.seed({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "x", namespace: "default", labels: { "app.kubernetes.io/managed-by": "oooi" } },
      });
      f.seed({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "unlabelled", namespace: "default" } });
      await eventually(() => {
        expect([...r.items.keys()]).toEqual(["default/x"]);
      });
      expect(changes).toBeGreaterThan(0);
      await r.stop();
      await f.stop();
      fake = undefined;
    }
  });
});

describe("ClusterWatcher", () => {
  it("watches an optional CRD only while served, validates our kinds, and coalesces bursts", async () => {
    const f = await FakeApiServer.start({
      kinds: [...BUILTIN_KINDS, ...OOOI_KINDS],
      namespaces: ["default", "clusters"],
    });
    fake = f;
    f.seed({
      apiVersion: API_VERSION,
      kind: "Infra",
      metadata: { name: "bad", namespace: "clusters" },
      spec: { networkConfig: { cidr: "nope" } },
    });
    f.seed({
      apiVersion: API_VERSION,
      kind: "Infra",
      metadata: { name: "good", namespace: "clusters" },
      spec: { networkConfig: { cidr: "10.0.0.0/24", gateway: "10.0.0.1", networkAttachmentDefinition: "n", typo: 1 } },
    });
    const w = new ClusterWatcher({
      rest: new KubeRest(kubeConfigFor(f.url)),
      logger: quietLogger,
      debounceMs: 200,
      discoveryIntervalMs: 100,
    });
    const seen: Observed[] = [];
    const sub = w.snapshots$.subscribe((o) => seen.push(o));
    closers.push(async () => {
      sub.unsubscribe();
      await w.close();
    });
    w.start();
    await w.ready;
    await eventually(() => {
      expect(seen.length).toBeGreaterThan(0);
    });
    const first = seen[seen.length - 1];
    expect(first?.state.infras.map((i) => i.metadata.name)).toEqual(["good"]);
    expect(first?.state.invalid?.map((i) => i.ref.name)).toEqual(["bad"]);
    expect(first?.state.unknownFields?.[0]?.errors.map((e) => e.field)).toEqual(["spec.networkConfig.typo"]);
    expect(first?.state.machines).toEqual([]);
    expect(f.requests.count({ resource: "machines" })).toBe(0);

    // Machines become served: watched from the next discovery on.
    f.addKind(MACHINE);
    f.seed({
      apiVersion: "cluster.x-k8s.io/v1beta1",
      kind: "Machine",
      metadata: { name: "m0", namespace: "clusters" },
    });
    const withMachine = await firstValueFrom(w.snapshots$.pipe(filter((o) => o.state.machines.length === 1)));
    expect(withMachine.state.machines.at(0)?.metadata.name).toBe("m0");

    // A burst of 20 changes: the first goes out at once, the rest coalesce into few snapshots.
    const before = seen.length;
    for (let i = 0; i < 20; i++)
      f.seed({ apiVersion: "v1", kind: "Service", metadata: { name: `s${i}`, namespace: "clusters" } });
    await eventually(() => {
      expect(seen[seen.length - 1]?.state.services).toHaveLength(20);
    });
    expect(seen.length - before).toBeLessThanOrEqual(3);

    // No longer served: its objects leave the state.
    f.removeKind(MACHINE);
    await firstValueFrom(w.snapshots$.pipe(filter((o) => o.state.machines.length === 0)));
  });
});
