import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  decodeResource,
  editDistance,
  jsonPointerToField,
  kindDefinition,
  nearestName,
  type FieldError,
} from "../../src/api/validate.js";
import { InfraSpec, type InfraClusterAttachmentSpec, type InfraSpec as InfraSpecT } from "../../src/api/schema.js";

const infra = (spec: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: "hostedcluster.densityops.com/v1alpha1",
  kind: "Infra",
  metadata: { name: "vlan100", namespace: "clusters" },
  spec,
  ...extra,
});

const minimalSpec = () => ({
  networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" },
});

const attachment = (spec: unknown) => ({
  apiVersion: "hostedcluster.densityops.com/v1alpha1",
  kind: "InfraClusterAttachment",
  metadata: { name: "hc1", namespace: "clusters" },
  spec,
});

function decodeInfra(raw: unknown): InfraSpecT {
  const r = decodeResource<InfraSpecT>(raw, "Infra");
  if (!r.ok) throw new Error(`unexpected errors: ${JSON.stringify(r.errors)}`);
  return r.value.spec;
}

function errorsOf(raw: unknown, kind = "Infra"): FieldError[] {
  const r = decodeResource(raw, kind);
  if (r.ok) throw new Error("expected validation errors");
  return r.errors;
}

describe("decodeResource defaults", () => {
  it("fills Infra defaults from an almost empty spec", () => {
    const spec = decodeInfra(infra(minimalSpec()));
    expect(spec.networkConfig.dnsServers).toEqual(["resolv.conf"]);
    expect(spec.infraComponents?.dhcp).toEqual({
      enabled: true,
      leaseTime: "1h",
      unknownClients: "deny",
      interface: "net1",
    });
    expect(spec.infraComponents?.dns).toEqual({ enabled: true });
    expect(spec.infraComponents?.proxy?.enabled).toBe(true);
    expect(spec.infraComponents?.proxy?.externalService).toEqual({ enabled: false, publishAttachmentOAuths: false });
  });

  it("fills defaults inside a partially given section without overriding given values", () => {
    const s = minimalSpec();
    const spec = decodeInfra(
      infra({
        ...s,
        networkConfig: { ...s.networkConfig, dnsServers: ["9.9.9.9"] },
        infraComponents: { dhcp: { enabled: false, leaseTime: "30m" } },
      }),
    );
    expect(spec.networkConfig.dnsServers).toEqual(["9.9.9.9"]);
    expect(spec.infraComponents?.dhcp).toMatchObject({ enabled: false, leaseTime: "30m", interface: "net1" });
    expect(spec.infraComponents?.dns?.enabled).toBe(true);
  });

  it("fills InfraClusterAttachment defaults", () => {
    const r = decodeResource<InfraClusterAttachmentSpec>(
      attachment({
        infraRef: { name: "vlan100" },
        hostedClusterRef: { name: "hc1" },
        dns: { clusterName: "hc1", baseDomain: "example.com" },
      }),
      "InfraClusterAttachment",
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const spec = r.value.spec;
    expect(spec.hostedClusterRef.namespace).toBe("clusters");
    expect(spec.apiServerService).toBe("kube-apiserver");
    expect(spec.controlPlaneNamespace).toBeUndefined();
    expect(spec.appsIngress?.enabled).toBe(false);
    expect(spec.appsIngress?.ports).toEqual({ http: 80, https: 443 });
    expect(spec.appsIngress?.service).toEqual({ name: "oooi-ingress", namespace: "openshift-ingress" });
  });

  it("does not mutate its input nor the schema's defaults", () => {
    const raw = infra(minimalSpec());
    const before = structuredClone(raw);
    const first = decodeInfra(raw);
    expect(raw).toEqual(before);
    // A shared default object mutated by one decode would leak into the next one and into the CRDs.
    if (first.infraComponents?.dhcp) first.infraComponents.dhcp.leaseTime = "5m";
    first.networkConfig.dnsServers?.push("1.1.1.1");
    const second = decodeInfra(infra(minimalSpec()));
    expect(second.infraComponents?.dhcp?.leaseTime).toBe("1h");
    expect(second.networkConfig.dnsServers).toEqual(["resolv.conf"]);
    expect(InfraSpec.properties.infraComponents.default).toEqual({});
    expect(InfraSpec.properties.networkConfig.properties.dnsServers.default).toEqual(["resolv.conf"]);
  });

  it("keeps metadata, status and unknown fields", () => {
    const r = decodeResource(
      infra({ ...minimalSpec(), futureField: { a: 1 } }, { status: { observedGeneration: 3 } }),
      "Infra",
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.metadata).toEqual({ name: "vlan100", namespace: "clusters" });
    expect(r.value.status).toEqual({ observedGeneration: 3 });
    expect((r.value.spec as Record<string, unknown>)["futureField"]).toEqual({ a: 1 });
  });
});

describe("decodeResource errors", () => {
  const fields = (errs: FieldError[]) => errs.map((e) => e.field);

  it.each<[string, unknown, string, RegExp]>([
    [
      "bad cidr",
      { ...minimalSpec(), networkConfig: { ...minimalSpec().networkConfig, cidr: "192.0.2.0/33" } },
      "spec.networkConfig.cidr",
      /"192.0.2.0\/33": must be an IPv4 CIDR such as 192.0.2.0\/24/,
    ],
    [
      "empty resolver",
      { ...minimalSpec(), networkConfig: { ...minimalSpec().networkConfig, dnsServers: [""] } },
      "spec.networkConfig.dnsServers[0]",
      /length|expected/i,
    ],
    ["missing networkConfig", {}, "spec.networkConfig", /required/i],
    [
      "attachment kind outside its enum",
      { networkConfig: { cidr: "192.0.2.0/24", attachment: { kind: "Bridge", name: "n" } } },
      "spec.networkConfig.attachment.kind",
      /must be one of "NetworkAttachmentDefinition", "ClusterUserDefinedNetwork"/,
    ],
    [
      "bad lease time",
      { ...minimalSpec(), infraComponents: { dhcp: { leaseTime: "1 day" } } },
      "spec.infraComponents.dhcp.leaseTime",
      /"1 day": must be a duration such as 1h/,
    ],
    [
      "bad unknownClients",
      { ...minimalSpec(), infraComponents: { dhcp: { unknownClients: "allow" } } },
      "spec.infraComponents.dhcp.unknownClients",
      /must be one of "deny", "pool"/,
    ],
    [
      "wrong type",
      { ...minimalSpec(), infraComponents: { proxy: { enabled: "yes" } } },
      "spec.infraComponents.proxy.enabled",
      /boolean/,
    ],
  ])("%s → %s", (_, spec, field, message) => {
    const errs = errorsOf(infra(spec));
    expect(fields(errs)).toContain(field);
    expect(errs.find((e) => e.field === field)?.message).toMatch(message);
  });

  it("reports one error per field for a union", () => {
    const errs = errorsOf(infra({ ...minimalSpec(), infraComponents: { dhcp: { unknownClients: "allow" } } }));
    expect(fields(errs).filter((f) => f === "spec.infraComponents.dhcp.unknownClients")).toHaveLength(1);
  });

  it("checks apiVersion and metadata.name", () => {
    const errs = errorsOf({ ...infra(minimalSpec()), apiVersion: "hostedcluster.densityops.com/v1", metadata: {} });
    expect(fields(errs)).toEqual(["apiVersion", "metadata.name"]);
  });

  it("reports a missing spec as missing required fields", () => {
    const raw = infra(undefined);
    delete (raw as Record<string, unknown>)["spec"];
    expect(fields(errorsOf(raw))).toContain("spec.networkConfig");
  });

  it("reports attachment field paths", () => {
    const errs = errorsOf(
      attachment({
        infraRef: { name: "" },
        hostedClusterRef: { name: "hc1" },
        dns: { clusterName: "HC_1", baseDomain: "example.com" },
        appsIngress: { ports: { http: 70000 } },
      }),
      "InfraClusterAttachment",
    );
    expect(fields(errs)).toEqual(
      expect.arrayContaining(["spec.infraRef.name", "spec.dns.clusterName", "spec.appsIngress.ports.http"]),
    );
  });

  it("rejects non-objects and unknown kinds without throwing", () => {
    expect(errorsOf("Infra")).toEqual([{ field: "", message: "not an object" }]);
    expect(errorsOf(null)).toEqual([{ field: "", message: "not an object" }]);
    expect(errorsOf(infra(minimalSpec()), "Nope")[0]?.field).toBe("kind");
    expect(fields(errorsOf(infra("a string spec")))).toEqual(["spec"]);
  });
});

describe("manifests of the original Go operator", () => {
  // Legacy fields the original read from the Infra (dns.baseDomain/clusterName, proxy.controlPlaneNamespace/apiServerService).
  const legacy = parse(`
apiVersion: hostedcluster.densityops.com/v1alpha1
kind: Infra
metadata:
  name: infra-sample
  namespace: clusters
spec:
  networkConfig:
    cidr: 192.168.100.0/24
    gateway: 192.168.100.1
    networkAttachmentDefinition: vlan100
    networkAttachmentNamespace: default
    dnsServers:
      - 8.8.8.8
      - 8.8.4.4
  infraComponents:
    dhcp:
      enabled: true
      serverIP: 192.168.100.2
      rangeStart: 192.168.100.10
      rangeEnd: 192.168.100.200
      leaseTime: 24h
    dns:
      enabled: true
      serverIP: 192.168.100.3
      baseDomain: example.com
      clusterName: my-cluster
    proxy:
      enabled: true
      serverIP: 192.168.100.4
      controlPlaneNamespace: clusters-my-cluster
      apiServerService: kube-apiserver
`) as { spec: Record<string, unknown> };

  it("validates unchanged, keeping every field it sets", () => {
    const spec = decodeInfra(legacy);
    expect(spec).toMatchObject(legacy.spec);
    expect(spec.infraComponents?.dns?.baseDomain).toBe("example.com");
    expect(spec.infraComponents?.proxy?.controlPlaneNamespace).toBe("clusters-my-cluster");
  });
});

describe("helpers", () => {
  it.each([
    ["/spec/networkConfig/cidr", "spec.networkConfig.cidr"],
    ["/spec/networkConfig/dnsServers/0", "spec.networkConfig.dnsServers[0]"],
    ["/spec/a~1b/c~0d", "spec.a/b.c~d"],
    ["", ""],
  ])("jsonPointerToField(%j) = %j", (pointer, field) => {
    expect(jsonPointerToField(pointer)).toBe(field);
  });

  it("kindDefinition finds our kinds only", () => {
    expect(kindDefinition("Infra")?.plural).toBe("infras");
    expect(kindDefinition("Service")).toBeUndefined();
  });
});

describe("unknown fields", () => {
  it("are kept out of errors but reported with their path (a mis-indented line is the usual cause)", () => {
    const raw = {
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "Infra",
      metadata: { name: "x", namespace: "n" },
      spec: {
        networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "v" },
        infraComponents: { internalProxyService: "misplaced", proxy: { serverIP: "192.0.2.4" } },
      },
    };
    const r = decodeResource(raw, "Infra");
    expect(r.ok && r.unknown).toEqual([
      { field: "spec.infraComponents.internalProxyService", message: "unknown field, ignored" },
    ]);
  });
});

describe("typos: did you mean, in the same pass as every other error", () => {
  // A missing gateway is the model's to judge (src/model/network.ts): some networks need none.
  it("reports a typo'd gateway with its fix together with an invalid value", () => {
    const r = decodeResource(
      infra(
        {
          networkConfig: { cidr: "300.0.2.0/24", gatway: "192.0.2.1", networkAttachmentDefinition: "v" },
          infraComponents: { dns: { serverIP: "192.0.2.3", enabeld: true } },
        },
        { sepc: {} },
      ),
      "Infra",
    );
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.errors.map((e) => e.field).sort()).toEqual(["spec.networkConfig.cidr"]);
    expect(r.unknown).toEqual([
      { field: "sepc", message: "unknown field — did you mean spec?" },
      { field: "spec.networkConfig.gatway", message: "unknown field — did you mean gateway?" },
      { field: "spec.infraComponents.dns.enabeld", message: "unknown field — did you mean enabled?" },
    ]);
  });

  it.each([
    ["gatway", ["cidr", "gateway", "dnsServers"], "gateway"],
    ["GATEWAY", ["gateway"], "gateway"],
    ["ciddr", ["cidr", "gateway"], "cidr"],
    ["enabeld", ["enabled", "image"], "enabled"],
    ["zzz", ["cidr", "gateway"], undefined],
    ["dns", ["dhcp", "proxy"], undefined],
  ])("nearestName(%s) = %s", (name, known, expected) => {
    expect(nearestName(name, known)).toBe(expected);
  });

  it.each([
    ["", "", 0],
    ["abc", "abc", 0],
    ["gatway", "gateway", 1],
    ["ab", "ba", 1],
    ["kitten", "sitting", 3],
  ])("editDistance(%s, %s) = %i", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });
});
