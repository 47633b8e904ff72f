// Drift repair: a child object edited by hand — its hash annotation left as it was — or deleted is
// restored by the leader within one resync, by comparing the fields oooi manages.
import { afterEach, describe, expect, it } from "vitest";
import { APPLIED_HASH_ANNOTATION } from "../../src/operator/writing/applied.js";
import { eventually, type FakeApiServer } from "../support/fake-apiserver/index.js";
import { seededFake, startOperator, stored } from "./support.js";

let fake: FakeApiServer | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  await fake?.stop();
  fake = undefined;
});

describe("drift", () => {
  it("restores a hand-edited ConfigMap (annotation kept) and a deleted Deployment", async () => {
    fake = await seededFake();
    const f = fake;
    const { op } = startOperator(f, { resyncMs: 200 });
    close = () => op.close();
    await eventually(() => {
      expect(stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")?.["data"]).toBeDefined();
      expect(stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")).toBeDefined();
    });
    const cm = stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns");
    const data = cm?.["data"] as Record<string, string>;
    const hash = (cm?.["metadata"] as { annotations?: Record<string, string> }).annotations?.[APPLIED_HASH_ANNOTATION];
    expect(hash).toBeDefined();
    // Wait until the operator has observed its own writes, then edit by hand.
    await new Promise((r) => setTimeout(r, 500));
    f.seed({ ...cm, apiVersion: "v1", kind: "ConfigMap", data: { ...data, Corefile: ". { whoami }\n" } });
    expect(
      (stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")?.["data"] as Record<string, string>).Corefile,
    ).toBe(". { whoami }\n");
    await eventually(() => {
      expect(stored(f, "v1", "ConfigMap", "clusters", "tenant-vlan-dns")?.["data"]).toEqual(data);
    });

    const k = f.store.kindByGvk("apps/v1", "Deployment");
    if (k === undefined) throw new Error("not served");
    const spec = stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")?.["spec"];
    f.store.delete(k, "clusters", "tenant-vlan-proxy", {});
    await eventually(() => {
      expect(stored(f, "apps/v1", "Deployment", "clusters", "tenant-vlan-proxy")?.["spec"]).toEqual(spec);
    });
  });
});
