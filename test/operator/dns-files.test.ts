// The DNS files the operator's next rendering continues from (Reconciler.dnsFiles) after its own
// write of a DNS ConfigMap the watch has not delivered yet: the applied data, not the older data the
// snapshot still holds — asked again for the very snapshot it answered before the write (a watch
// event of another kind renders from it). Otherwise the next rendering would continue the SOA
// serials from the older files and could give other content the serial already written, which
// CoreDNS would never load.
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/rest.js";
import { COMPONENT_LABEL } from "../../src/operator/desired/objects.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { buildObserved, type Observed } from "../../src/watchers/kube/observed.js";
import type { FakeApiServer } from "../support/fake-apiserver/index.js";
import { exampleRaw, INFRA_NAD, leaderReconciler, seededFake, stored, storedList } from "./support.js";

/**
 * The example as the fake stores it (uids included), as a snapshot with its Infra's proxy at
 * `proxyIp` (the DNS answers move with it) and these ConfigMaps.
 */
function snapshot(f: FakeApiServer, seq: number, proxyIp: string, configmaps: readonly KubeObject[]): Observed {
  const raw = exampleRaw((example) => {
    const m = example.metadata ?? {};
    const o: KubeObject =
      stored(f, String(example["apiVersion"]), String(example["kind"]), m.namespace ?? "", m.name ?? "") ?? example;
    if (o["kind"] !== "Infra") return o;
    const spec = o["spec"] as { infraComponents?: { proxy?: Record<string, unknown> } } | undefined;
    const proxy = { ...spec?.infraComponents?.proxy, serverIP: proxyIp };
    return { ...o, spec: { ...spec, infraComponents: { ...spec?.infraComponents, proxy } } };
  });
  raw.networkattachments.set("clusters/vlan100", INFRA_NAD);
  for (const cm of configmaps) raw.configmaps.set(`${cm.metadata?.namespace ?? ""}/${cm.metadata?.name ?? ""}`, cm);
  return buildObserved(raw, seq);
}

let fake: FakeApiServer | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

describe("Reconciler.dnsFiles", () => {
  it("answers its own unobserved write for a snapshot it answered before the write", async () => {
    fake = await seededFake();
    const reconciler = leaderReconciler(fake.url);
    const first = snapshot(fake, 1, "127.0.8.4", []);
    await reconciler.reconcile(first, renderAll(first.state));
    const dns: KubeObject | undefined = storedList(fake, "v1", "ConfigMap", "clusters").find(
      (o: KubeObject) => o.metadata?.labels?.[COMPONENT_LABEL] === "dns",
    );
    const name = dns?.metadata?.name ?? "";
    const v1 = stored(fake, "v1", "ConfigMap", "clusters", name);
    expect(v1, "the first pass wrote the DNS ConfigMap").toBeDefined();
    if (v1 === undefined) return;
    const key = `clusters/${name}`;

    // The watch delivered v1; then the proxy moves, and the pass writes v2.
    const second = snapshot(fake, 2, "127.0.8.9", [v1]);
    expect(reconciler.dnsFiles(second).get(key)).toEqual(v1["data"]);
    await reconciler.reconcile(second, renderAll(second.state, { previous: dataOf(key, v1) }));
    const v2 = stored(fake, "v1", "ConfigMap", "clusters", name);
    expect(v2?.["data"]).not.toEqual(v1["data"]);

    // The same snapshot (v1 still observed) now answers v2's data.
    expect(reconciler.dnsFiles(second).get(key)).toEqual(v2?.["data"]);
  });
});

describe("Reconciler.dnsFiles from one snapshot to the next", () => {
  // Never asked: dnsFiles reads the snapshot and this process's own records only.
  const reconciler = leaderReconciler("http://127.0.0.1:9");
  const cm = (name: string, data: Record<string, string>, dns = true): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      namespace: "clusters",
      name,
      resourceVersion: JSON.stringify(data),
      labels: dns ? { [COMPONENT_LABEL]: "dns" } : {},
    },
    data,
  });
  const observed = (seq: number, configmaps: readonly KubeObject[]): Observed => {
    const raw = exampleRaw((o) => o);
    for (const c of configmaps) raw.configmaps.set(`clusters/${c.metadata?.name ?? ""}`, c);
    return buildObserved(raw, seq);
  };

  it("follows every ConfigMap that changed, appeared, went or stopped being a DNS one", () => {
    const files = (seq: number, configmaps: readonly KubeObject[]) =>
      Object.fromEntries(reconciler.dnsFiles(observed(seq, configmaps)));
    expect(files(1, [cm("a-dns", { Corefile: "1" }), cm("other", { x: "1" }, false)])).toEqual({
      "clusters/a-dns": { Corefile: "1" },
    });
    expect(files(2, [cm("a-dns", { Corefile: "2" }), cm("b-dns", { Corefile: "b" })])).toEqual({
      "clusters/a-dns": { Corefile: "2" },
      "clusters/b-dns": { Corefile: "b" },
    });
    expect(files(3, [cm("a-dns", { Corefile: "2" }, false), cm("b-dns", { Corefile: "b" })])).toEqual({
      "clusters/b-dns": { Corefile: "b" },
    });
    expect(files(4, [])).toEqual({});
  });
});

/** renderAll's `previous` for one ConfigMap's data. */
function dataOf(key: string, cm: KubeObject): ReadonlyMap<string, string> {
  return new Map(Object.entries((cm["data"] ?? {}) as Record<string, string>).map(([k, v]) => [`${key}/${k}`, v]));
}
