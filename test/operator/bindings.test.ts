// Write refusals → missing RoleBindings and the conditions that name them (src/operator/bindings.ts,
// infraConditions' missingBinding). The real API server's side is test/kube/rbac.test.ts.
import { describe, expect, it } from "vitest";
import { MissingBindings, roleOfKind } from "../../src/operator/bindings.js";
import { infraConditions, missingBindingMessage } from "../../src/operator/conditions.js";

describe("roleOfKind: which namespace role grants writing a kind", () => {
  it.each([
    ["Deployment", "oooi-workloads"],
    ["ServiceAccount", "oooi-workloads"],
    ["ConfigMap", "oooi-workloads"],
    ["Service", "oooi-workloads"],
    ["PersistentVolumeClaim", "oooi-workloads"],
    ["NetworkAttachmentDefinition", "oooi-workloads"],
    ["NetworkPolicy", "oooi-network-policy"],
    // The child CRs are oooi's own kinds, written cluster-wide.
    ["DHCPServer", undefined],
    ["ProxyServer", undefined],
    ["NoSuchKind", undefined],
  ])("%s → %s", (kind, role) => {
    expect(roleOfKind(kind)?.clusterRole).toBe(role);
  });
});

describe("MissingBindings", () => {
  it("a refusal blocks the role's other writes in that namespace only, and gives the command", () => {
    const b = new MissingBindings("oooi-system");
    expect(b.blocked("Deployment", "a")).toBe(false);
    expect(b.refused("Deployment", "a")).toBe(true);
    expect(b.blocked("ConfigMap", "a")).toBe(true);
    expect(b.blocked("ConfigMap", "b")).toBe(false);
    expect(b.blocked("NetworkPolicy", "a")).toBe(false);
    expect(b.blocked("DHCPServer", "a")).toBe(false);
    expect(b.list()).toEqual([
      {
        namespace: "a",
        role: roleOfKind("Deployment"),
        command:
          "kubectl create rolebinding oooi-workloads --clusterrole=oooi-workloads --serviceaccount=oooi-system:oooi-operator -n a",
      },
    ]);
  });

  it("a refusal of a kind no namespace role grants is not a missing binding", () => {
    const b = new MissingBindings("oooi-system");
    expect(b.refused("DHCPServer", "a")).toBe(false);
    expect(b.refused("Deployment", undefined)).toBe(false);
    expect(b.list()).toEqual([]);
  });

  it("lists by role, then namespace", () => {
    const b = new MissingBindings("ops");
    b.refused("NetworkPolicy", "cp-b");
    b.refused("Service", "z");
    b.refused("NetworkPolicy", "cp-a");
    expect(b.list().map((m) => `${m.role.clusterRole} ${m.namespace}`)).toEqual([
      "oooi-network-policy cp-a",
      "oooi-network-policy cp-b",
      "oooi-workloads z",
    ]);
  });
});

describe("infraConditions with a missing binding", () => {
  const ok = { type: "Ready", status: "True", reason: "ReconciliationSucceeded", message: "ok" } as const;
  const message = missingBindingMessage("its workloads in namespace a", ["kubectl create rolebinding x"]);

  it("Ready=False and Degraded=True with reason MissingNamespaceBinding and the command", () => {
    const c = infraConditions(
      ok,
      false,
      [{ component: "dns", reason: "DeploymentMissing", why: "no Deployment" }],
      message,
    );
    expect(c.find((x) => x.type === "Ready")).toMatchObject({ status: "False", reason: "MissingNamespaceBinding" });
    expect(c.find((x) => x.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "MissingNamespaceBinding",
      message: expect.stringContaining("kubectl create rolebinding x") as unknown,
    });
  });

  it("an invalid Infra keeps its own Ready reason; the binding still leads Degraded", () => {
    const invalid = { type: "Ready", status: "False", reason: "InvalidSpec", message: "bad cidr" } as const;
    const c = infraConditions(invalid, true, undefined, message);
    expect(c.find((x) => x.type === "Ready")?.reason).toBe("InvalidSpec");
    expect(c.find((x) => x.type === "Degraded")?.reason).toBe("MissingNamespaceBinding");
  });

  it("without one, nothing changes", () => {
    expect(infraConditions(ok, false, [])).toEqual(infraConditions(ok, false, [], undefined));
    expect(infraConditions(ok, false, []).find((x) => x.type === "Degraded")?.reason).toBe("AsExpected");
  });
});
