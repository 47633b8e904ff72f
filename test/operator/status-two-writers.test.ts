// An attachment has two writers: the reconcile pass (its conditions) and another (the apps ingress
// loop's appsIngressStatus, or a user's annotation). When the other write lands between the version
// the pass read and its own status write, the next snapshot can hold that other write without ours.
// The pass must still take its own write as the status (src/operator/writing/unobserved.ts), not
// write it again — even with no cooldown to hide the difference.
import { afterEach, describe, expect, it } from "vitest";
import { KubeRest, type KubeObject } from "../../src/kube/rest.js";
import { renderAll } from "../../src/pipeline/outputs.js";
import { buildObserved, type Observed } from "../../src/watchers/kube/observed.js";
import { kubeConfigFor, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { exampleRaw, INFRA_NAD, leaderReconciler, seededFake, stored, storedList } from "./support.js";

const API = "hostedcluster.densityops.com/v1alpha1";

/** Every example object as the fake stores it now, except those given. */
function snapshot(f: FakeApiServer, seq: number, except: readonly KubeObject[] = []): Observed {
  const raw = exampleRaw((example) => {
    const m = example.metadata ?? {};
    const kept = except.find((o) => o["kind"] === example["kind"] && o.metadata?.name === m.name);
    if (kept !== undefined) return kept;
    return (
      stored(f, String(example["apiVersion"]), String(example["kind"]), m.namespace ?? "", m.name ?? "") ?? example
    );
  });
  raw.networkattachments.set("clusters/vlan100", INFRA_NAD);
  return buildObserved(raw, seq);
}

let fake: FakeApiServer | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

describe("a status write with another writer's change before it", () => {
  it("is not written again from a snapshot holding the other change but not ours", async () => {
    fake = await seededFake();
    const rest = new KubeRest(kubeConfigFor(fake.url));
    const reconciler = leaderReconciler(fake.url, { rest, statusCooldownMs: 0 });
    const attachment: KubeObject | undefined = storedList(fake, API, "InfraClusterAttachment", "clusters")[0];
    const name = attachment?.metadata?.name ?? "";
    expect(name).not.toBe("");

    // Converged first (finalizer, children, statuses); then the user edits the attachment's spec (a
    // new generation, so a new status), the pass reads it, another writer annotates it, and then
    // the pass writes its status.
    const converged = snapshot(fake, 1);
    await reconciler.reconcile(converged, renderAll(converged.state));
    const path = `/apis/${API}/namespaces/clusters/infraclusterattachments/${name}`;
    const patch = (body: object) =>
      rest.request({ method: "PATCH", path, contentType: "application/merge-patch+json", body });
    await patch({ spec: { externalService: { enabled: false, labels: { edited: "yes" } } } });
    const first = snapshot(fake, 2);
    await patch({ metadata: { annotations: { note: "the other writer" } } });
    const annotated: KubeObject | undefined = stored(fake, API, "InfraClusterAttachment", "clusters", name);
    const r1 = await reconciler.reconcile(first, renderAll(first.state));
    expect(r1.statuses).toBe(1);
    const written: KubeObject | undefined = stored(fake, API, "InfraClusterAttachment", "clusters", name);
    expect(Number(written?.metadata?.resourceVersion)).toBeGreaterThan(Number(annotated?.metadata?.resourceVersion));
    expect(annotated?.["status"]).not.toEqual(written?.["status"]);

    // The watch has delivered the annotation, not yet the status write.
    const lagging = snapshot(fake, 3, annotated === undefined ? [] : [annotated]);
    const r2 = await reconciler.reconcile(lagging, renderAll(lagging.state));
    expect(r2.statuses).toBe(0);
    const after: KubeObject | undefined = stored(fake, API, "InfraClusterAttachment", "clusters", name);
    expect(after?.metadata?.resourceVersion).toBe(written?.metadata?.resourceVersion);
  });
});
