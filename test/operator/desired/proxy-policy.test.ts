// No bypass through the proxy's pod-network side: `<infra>-proxy` admits only the namespaces
// spec.infraComponents.proxy.internalClients.namespaceSelector selects (none when unset, which status
// warns about when internalProxyService is set), and allow-infrastructure admits only the proxy pods
// of the Infras attached to that control plane. Table tests of the pure builders and of the model's
// problems; test/kube/rbac.test.ts has the real API server accept the generated policies.
import { describe, expect, it } from "vitest";
import type { Infra, LabelSelector } from "../../../src/api/schema.js";
import { build } from "../../../src/model/build.js";
import { labelKeyError, selectorErrors } from "../../../src/model/selector.js";
import type { OwnerReference } from "../../../src/operator/desired/objects.js";
import { networkPolicies, proxyNetworkPolicy } from "../../../src/operator/desired/policy.js";
import { attachment, combine, hostedCluster, infra, NS } from "../../support/fixtures.js";

const OWNER: OwnerReference = {
  apiVersion: "hostedcluster.densityops.com/v1alpha1",
  kind: "Infra",
  name: "vlan100",
  uid: "u",
  controller: true,
  blockOwnerDeletion: true,
};
const PODS = { "app.kubernetes.io/component": "proxy", "app.kubernetes.io/instance": "vlan100" };
const tcp = (...ports: number[]) => ports.map((port) => ({ protocol: "TCP", port }));

describe("proxyNetworkPolicy", () => {
  const policy = (namespaceSelector: LabelSelector | undefined, publicPorts: number[] = []) =>
    proxyNetworkPolicy({
      infraName: "vlan100",
      namespace: NS,
      labels: { a: "b" },
      podLabels: PODS,
      owner: OWNER,
      ports: [443, 6443, 80],
      namespaceSelector,
      publicPorts,
    });

  it.each([
    { name: "unset: selects the proxy pods and admits nobody", selector: undefined, publicPorts: [], ingress: [] },
    {
      name: "a selector: its namespaces, on the proxy's ports only",
      selector: { matchLabels: { team: "infra" } },
      publicPorts: [],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: "infra" } } }], ports: tcp(443, 6443, 80) }],
    },
    {
      name: "expressions are passed as written",
      selector: { matchExpressions: [{ key: "tier", operator: "In" as const, values: ["a", "b"] }] },
      publicPorts: [],
      ingress: [
        {
          from: [{ namespaceSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] } }],
          ports: tcp(443, 6443, 80),
        },
      ],
    },
    {
      name: "an external LoadBalancer Service: its port is open to everyone, the others are not",
      selector: undefined,
      publicPorts: [443],
      ingress: [{ ports: tcp(443) }],
    },
  ])("$name", ({ selector, publicPorts, ingress }) => {
    const p = policy(selector, publicPorts);
    expect(p.metadata).toMatchObject({ name: "vlan100-proxy", namespace: NS, ownerReferences: [OWNER] });
    expect(p["spec"]).toEqual({ podSelector: { matchLabels: PODS }, policyTypes: ["Ingress"], ingress });
  });

  it("never selects every pod of the namespace, nor admits every source on every port", () => {
    for (const p of [policy(undefined), policy({ matchLabels: { x: "y" } }, [443])]) {
      const spec = p["spec"] as {
        podSelector: { matchLabels?: object };
        ingress: { from?: unknown[]; ports?: unknown[] }[];
      };
      expect(spec.podSelector.matchLabels).toEqual(PODS);
      for (const rule of spec.ingress) expect(rule.ports?.length ?? 0).toBeGreaterThan(0);
    }
  });
});

describe("allow-infrastructure", () => {
  it("admits only the claiming proxies' pods (pod and namespace selector each), never podSelector {} as a peer", () => {
    const [p] = networkPolicies([
      { controlPlaneNamespace: "cp", attachment: "a/x", proxyNamespace: "a", proxyPodLabels: { i: "one" } },
      { controlPlaneNamespace: "cp", attachment: "b/y", proxyNamespace: "b", proxyPodLabels: { i: "two" } },
    ]);
    const from = (p?.["spec"] as { ingress: { from: Record<string, unknown>[] }[] }).ingress[0]?.from;
    expect(from).toEqual([
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "a" } },
        podSelector: { matchLabels: { i: "one" } },
      },
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "b" } },
        podSelector: { matchLabels: { i: "two" } },
      },
    ]);
  });
});

describe("internalClients.namespaceSelector in the model", () => {
  const FIELD = "spec.infraComponents.proxy.internalClients.namespaceSelector";
  const withSelector = (selector: LabelSelector | undefined, internalProxyService = "10.96.0.44"): Infra => {
    const i = structuredClone(infra("vlan100", { infraComponents: { proxy: { internalProxyService } } }));
    const proxy = i.spec.infraComponents?.proxy;
    if (proxy?.internalClients === undefined) throw new Error("fixture without internalClients");
    if (selector === undefined) delete proxy.internalClients.namespaceSelector;
    else proxy.internalClients.namespaceSelector = selector;
    return i;
  };
  const problems = (i: Infra) =>
    build(combine({ infras: [i], attachments: [attachment("alpha")] }, hostedCluster("alpha", 1, [])))
      .problems.filter((p) => p.object.kind === "Infra")
      .map((p) => `${p.field} ${p.reason} ${p.severity}`);

  it.each([
    { name: "set and valid: nothing to say", selector: { matchLabels: { team: "infra" } }, want: [] },
    { name: "{} selects every namespace: allowed as written", selector: {}, want: [] },
    {
      name: "unset with internalProxyService: a warning naming the field",
      selector: undefined,
      want: [`${FIELD} NoInternalClients warning`],
    },
    {
      name: "In without values is refused with its path",
      selector: { matchExpressions: [{ key: "tier", operator: "In" as const }] },
      want: [`${FIELD}.matchExpressions[0].values InvalidSpec error`],
    },
    {
      name: "Exists with values is refused",
      selector: { matchExpressions: [{ key: "tier", operator: "Exists" as const, values: ["x"] }] },
      want: [`${FIELD}.matchExpressions[0].values InvalidSpec error`],
    },
    {
      name: "a label key with a space is refused",
      selector: { matchLabels: { "my team": "infra" } },
      want: [`${FIELD}.matchLabels.my team InvalidSpec error`],
    },
  ])("$name", ({ selector, want }) => {
    expect(problems(withSelector(selector))).toEqual(want);
  });

  it("unset without internalProxyService: nobody is meant to come in, nothing to say", () => {
    const i = withSelector(undefined);
    const proxy = i.spec.infraComponents?.proxy;
    if (proxy !== undefined) delete proxy.internalProxyService;
    expect(problems(i)).toEqual([]);
  });
});

describe("selector syntax (apimachinery's rules)", () => {
  it.each([
    ["team", undefined],
    ["example.com/team", undefined],
    ["kubernetes.io/metadata.name", undefined],
    ["-team", "name"],
    ["Example.com/team", "prefix"],
    ["a".repeat(64), "name"],
    ["/team", "prefix"],
  ])("key %s", (key, wrong) => {
    const e = labelKeyError(key);
    if (wrong === undefined) expect(e).toBeUndefined();
    else expect(e).toContain(wrong);
  });

  it("values: empty allowed, 64 characters not", () => {
    expect(selectorErrors({ matchLabels: { a: "" } })).toEqual([]);
    expect(selectorErrors({ matchLabels: { a: "x".repeat(64) } }).map((e) => e.field)).toEqual(["matchLabels.a"]);
    expect(
      selectorErrors({ matchExpressions: [{ key: "a", operator: "NotIn", values: ["ok", "not ok"] }] }).map(
        (e) => e.field,
      ),
    ).toEqual(["matchExpressions[0].values[1]"]);
  });
});
