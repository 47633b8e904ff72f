// Operator settings: defaults, environment overrides, and the original operator's image ignored.
import { describe, expect, it } from "vitest";
import { imageOverride, operatorSettings, ownImage, settingsFromEnv } from "../../../src/operator/desired/settings.js";

describe("operator settings", () => {
  it("defaults the xDS address to the operator's Service in its namespace", () => {
    const s = operatorSettings({ namespace: "ops" });
    expect(s.xdsAddress).toBe("oooi-xds.ops.svc:18000");
    expect(s.fieldManager).toBe("oooi");
    expect(s.images.envoy).toBe("envoyproxy/envoy:v1.36.4");
    expect(s.images.coredns).toBe("registry.k8s.io/coredns/coredns:v1.12.0");
    expect(s.keaHooksDirectory).toBe("/usr/lib/x86_64-linux-gnu/kea/hooks");
  });

  it("reads the Deployment's environment; empty values count as unset", () => {
    const s = settingsFromEnv({
      POD_NAMESPACE: "oooi-system",
      OOOI_IMAGE: "example.org/oooi:1",
      OOOI_KEA_IMAGE: " ",
      OOOI_PIN_USER_IDS: "false",
      OOOI_LEASE_STORAGE_CLASS: "fast",
    });
    expect(s.namespace).toBe("oooi-system");
    expect(s.xdsAddress).toBe("oooi-xds.oooi-system.svc:18000");
    expect(s.images.oooi).toBe("example.org/oooi:1");
    expect(s.images.kea).toBe(operatorSettings().images.kea);
    expect(s.pinUserIds).toBe(false);
    expect(s.leaseStorageClass).toBe("fast");
    expect(settingsFromEnv({}).pinUserIds).toBe(true);
  });

  it.each([
    { name: "the Pod's image", env: {}, pod: "r.example/oooi:2", image: "r.example/oooi:2" },
    {
      name: "OOOI_IMAGE over the Pod's",
      env: { OOOI_IMAGE: "o.example/oooi:3" },
      pod: "r.example/oooi:2",
      image: "o.example/oooi:3",
    },
    { name: "the default outside a Pod", env: {}, pod: undefined, image: operatorSettings().images.oooi },
  ])("the sidecars' image: $name", ({ env, pod, image }) => {
    expect(settingsFromEnv(env, undefined, pod).images.oooi).toBe(image);
  });

  it.each([
    {
      name: "the operator container",
      containers: [
        { name: "sidecar", image: "s" },
        { name: "operator", image: "o" },
      ],
      image: "o",
    },
    { name: "the only container", containers: [{ name: "main", image: "m" }], image: "m" },
    {
      name: "none of several",
      containers: [
        { name: "a", image: "a" },
        { name: "b", image: "b" },
      ],
      image: undefined,
    },
    { name: "an empty image", containers: [{ name: "operator", image: " " }], image: undefined },
    { name: "no containers", containers: [], image: undefined },
  ])("ownImage reads $name", ({ containers, image }) => {
    expect(ownImage({ spec: { containers } })).toBe(image);
  });

  it.each([
    { name: "plain Kubernetes", env: {}, groups: ["apps", "batch"], pin: true },
    { name: "OpenShift, discovered", env: {}, groups: ["apps", "security.openshift.io"], pin: false },
    {
      name: "OpenShift, pinned by the environment",
      env: { OOOI_PIN_USER_IDS: "true" },
      groups: ["security.openshift.io"],
      pin: true,
    },
    { name: "discovery unavailable", env: {}, groups: undefined, pin: true },
  ])("uids on $name: pinned = $pin", ({ env, groups, pin }) => {
    expect(settingsFromEnv(env, groups === undefined ? undefined : new Set(groups)).pinUserIds).toBe(pin);
  });

  it("Kea's SCC is reported on OpenShift until the operator finds it may bind it (kea-scc-grant.ts)", () => {
    expect(settingsFromEnv({}, new Set(["apps"])).keaScc).toBe("none");
    expect(settingsFromEnv({}, new Set(["security.openshift.io"])).keaScc).toBe("report");
    expect(settingsFromEnv({}).keaScc).toBe("none");
  });

  it.each([
    [undefined, undefined],
    ["", undefined],
    ["quay.io/cldmnky/oooi:latest", undefined],
    ["quay.io/cldmnky/oooi@sha256:abc", undefined],
    ["quay.io/cldmnky/oooi", undefined],
    ["quay.io/cldmnky/oooi-fork:1", "quay.io/cldmnky/oooi-fork:1"],
    ["registry.k8s.io/coredns/coredns:v1.11.1", "registry.k8s.io/coredns/coredns:v1.11.1"],
  ])("imageOverride(%s) = %s", (value, expected) => {
    expect(imageOverride(value)).toBe(expected);
  });
});
