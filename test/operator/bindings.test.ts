// Write refusals → missing RoleBindings and the conditions that name them (src/operator/writing/bindings.ts,
// infraConditions' missingBinding). The real API server's side is test/kube/rbac.test.ts.
import { describe, expect, it } from "vitest";
import { MissingBindings, roleOfObject } from "../../src/operator/writing/bindings.js";
import { infraConditions, missingBindingMessage } from "../../src/operator/status/conditions.js";

describe("roleOfObject: which namespace role grants writing a kind", () => {
  it.each([
    ["Deployment", "oooi-workloads"],
    ["ServiceAccount", "oooi-workloads"],
    ["ConfigMap", "oooi-workloads"],
    ["Service", "oooi-workloads"],
    ["PersistentVolumeClaim", "oooi-workloads"],
    ["NetworkAttachmentDefinition", "oooi-workloads"],
    // The proxy's own policy is written where the Infra lives.
    ["NetworkPolicy", "oooi-workloads"],
    // The child CRs are oooi's own kinds, written cluster-wide.
    ["DHCPServer", undefined],
    ["ProxyServer", undefined],
    ["NoSuchKind", undefined],
  ])("%s → %s", (kind, role) => {
    expect(roleOfObject(kind, "tenant-proxy")?.clusterRole).toBe(role);
  });
});

describe("MissingBindings", () => {
  it("allow-infrastructure, the one policy oooi-network-policy names, is that role's", () => {
    expect(roleOfObject("NetworkPolicy", "allow-infrastructure")?.clusterRole).toBe("oooi-network-policy");
  });

  it("a refusal blocks the role's other writes in that namespace only, and gives the command", () => {
    const b = new MissingBindings("oooi-system");
    expect(b.blocked("Deployment", "x", "a")).toBe(false);
    expect(b.refused("Deployment", "x", "a")).toBe(true);
    expect(b.blocked("ConfigMap", "x", "a")).toBe(true);
    expect(b.blocked("ConfigMap", "x", "b")).toBe(false);
    expect(b.blocked("NetworkPolicy", "allow-infrastructure", "a")).toBe(false);
    expect(b.blocked("DHCPServer", "x", "a")).toBe(false);
    expect(b.list()).toEqual([
      {
        namespace: "a",
        role: roleOfObject("Deployment", "x"),
        command:
          "kubectl create rolebinding oooi-workloads --clusterrole=oooi-workloads --serviceaccount=oooi-system:oooi-operator -n a",
      },
    ]);
  });

  it("a refusal of a kind no namespace role grants is not a missing binding", () => {
    const b = new MissingBindings("oooi-system");
    expect(b.refused("DHCPServer", "x", "a")).toBe(false);
    expect(b.refused("Deployment", "x", undefined)).toBe(false);
    expect(b.list()).toEqual([]);
  });

  it("lists by role, then namespace", () => {
    const b = new MissingBindings("ops");
    b.refused("NetworkPolicy", "allow-infrastructure", "cp-b");
    b.refused("Service", "x", "z");
    b.refused("NetworkPolicy", "allow-infrastructure", "cp-a");
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
