// Kea's SCC binding on a real control plane with OpenShift's SecurityContextConstraints kind served
// (a CRD of the test's own): the built CLI as deploy/'s ServiceAccount. With the base alone it
// binds nothing and each DHCP Infra says which command to run; once deploy/openshift grants it
// `bind` on oooi-kea-scc it writes each Infra's RoleBinding, leaving a user's of the same name alone
// (reported unless it already grants Kea), and the Kea ServiceAccount may then `use` the SCC. The
// grant binds that role only: the operator still cannot bind any other, and its binding goes with
// the Infra.
import { describe, expect, it } from "vitest";
import { keaSccBindingCommand } from "../../src/operator/desired/scc.js";
import { OperatorProcess } from "../support/cli.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP, type KubeCluster } from "../support/kube/cluster.js";
import { openshiftCrds } from "../support/kube/foreign-crds.js";
import { GROUP_PATH, installCrds, list, operatorToken, REPO, seedExample, useKubeCluster } from "./support.js";

const NS = "clusters";
const INFRA = "tenant-vlan";
const BINDING = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/${INFRA}-dhcp-scc`;
const SA = "system:serviceaccount:oooi-system:oooi-operator";

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** Whether `user` (with `groups`) may `verb` the resource (SubjectAccessReview, as `kubectl auth can-i --as`). */
async function may(
  cluster: KubeCluster,
  user: string,
  groups: readonly string[],
  attributes: Record<string, string>,
): Promise<boolean> {
  const review = await cluster.must<{ status?: { allowed?: boolean } }>(
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: { user, groups, resourceAttributes: attributes },
      },
    },
  );
  return review.status?.allowed === true;
}

const keaMayUseScc = (cluster: KubeCluster) =>
  may(
    cluster,
    `system:serviceaccount:${NS}:${INFRA}-dhcp`,
    ["system:serviceaccounts", `system:serviceaccounts:${NS}`],
    {
      verb: "use",
      group: "security.openshift.io",
      resource: "securitycontextconstraints",
      name: "oooi-kea",
      namespace: NS,
    },
  );

async function infraConditions(cluster: KubeCluster): Promise<Condition[]> {
  const infra = await cluster.must<{ status?: { conditions?: Condition[] } }>(
    "GET",
    `${GROUP_PATH}/namespaces/${NS}/infras/${INFRA}`,
  );
  return infra.status?.conditions ?? [];
}

/** A RoleBinding of `role` in the Infras' namespace, as a user (or the operator's token) would create it. */
function roleBinding(name: string, role: string, subject: string): Record<string, unknown> {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, namespace: NS },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name: subject, namespace: NS }],
  };
}

describe.skipIf(KUBE_SKIP !== undefined)("Kea's SCC binding on a real API server (OpenShift's kind served)", () => {
  let kubeconfig = "";
  let token = "";
  // The garbage collector removes the operator's binding with its Infra.
  const kube = useKubeCluster({ controllers: ["garbagecollector", "namespace"] }, async (cluster) => {
    await installCrds(cluster);
    await cluster.mustKubectl(["apply", "--server-side", "-f", "-"], list(openshiftCrds()));
    await cluster.mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    await seedExample(cluster);
    // The base's RBAC (deploy/rbac), its namespace roles bound as documented.
    token = await operatorToken(cluster);
    kubeconfig = cluster.writeKubeconfig("oooi-operator", token);
  });

  it("base install: the operator binds nothing and the Infra names the command", async () => {
    expect(
      await may(kube(), SA, [], {
        verb: "bind",
        group: "rbac.authorization.k8s.io",
        resource: "clusterroles",
        name: "oooi-kea-scc",
      }),
    ).toBe(false);
    const op = new OperatorProcess(kubeconfig, ["--xds-plaintext", "--http-auth", "none"]);
    try {
      await eventually(
        async () => {
          const ready = (await infraConditions(kube())).find((c) => c.type === "Ready");
          expect(ready?.reason, op.log).toBe("KeaSccBindingNeeded");
          expect(ready?.message).toContain(keaSccBindingCommand(NS, INFRA));
        },
        60_000,
        200,
      );
      expect((await kube().call("GET", BINDING)).status).toBe(404);
      expect(await keaMayUseScc(kube())).toBe(false);
    } finally {
      await op.stop();
    }
  }, 120_000);

  it("deploy/openshift: a user's binding of the name is left alone (reported unless it grants Kea); then the operator binds Kea", async () => {
    await kube().mustKubectl(["apply", "--server-side", "-k", `${REPO}deploy/openshift/`]);
    // The API server's RBAC authorizer sees a new binding through its informers, a moment later.
    await eventually(
      async () => {
        expect(
          await may(kube(), SA, [], {
            verb: "bind",
            group: "rbac.authorization.k8s.io",
            resource: "clusterroles",
            name: "oooi-kea-scc",
          }),
        ).toBe(true);
      },
      10_000,
      100,
    );
    // A binding the user made with the base's command does the job: left alone, nothing reported.
    const [kubectl, ...args] = keaSccBindingCommand(NS, INFRA).split(" ");
    expect(kubectl).toBe("kubectl");
    await kube().mustKubectl(args);
    const first = new OperatorProcess(kubeconfig, ["--xds-plaintext", "--http-auth", "none"]);
    try {
      await eventually(
        () => {
          expect(first.log).toMatch(/left alone: not ours, and already grants what ours would/);
        },
        60_000,
        200,
      );
      // The status still holds what the previous test's operator wrote until this one's first write.
      await eventually(
        async () => {
          const reasons = (await infraConditions(kube())).map((c) => c.reason);
          expect(reasons, first.log).not.toContain("KeaSccBindingConflict");
          expect(reasons, first.log).not.toContain("KeaSccBindingNeeded");
        },
        60_000,
        200,
      );
      const theirs = await kube().must<{ metadata: { labels?: Record<string, string> } }>("GET", BINDING);
      expect(theirs.metadata.labels?.["app.kubernetes.io/managed-by"]).toBeUndefined();
    } finally {
      await first.stop();
    }
    await kube().mustKubectl(["delete", "rolebinding", `${INFRA}-dhcp-scc`, "-n", NS]);

    // Someone else's binding under the operator's name, granting another ServiceAccount: reported.
    await kube().mustKubectl(
      ["apply", "--server-side", "--field-manager", "someone", "-f", "-"],
      list([roleBinding(`${INFRA}-dhcp-scc`, "oooi-kea-scc", "someone-else")]),
    );
    const op = new OperatorProcess(kubeconfig, ["--xds-plaintext", "--http-auth", "none"]);
    try {
      await eventually(
        async () => {
          expect(op.log).toMatch(/this operator binds Kea's SCC role per Infra/);
          const ready = (await infraConditions(kube())).find((c) => c.type === "Ready");
          expect(ready?.reason, op.log).toBe("KeaSccBindingConflict");
          expect(ready?.message).toContain(`RoleBinding ${NS}/${INFRA}-dhcp-scc exists and was not written by oooi`);
        },
        60_000,
        200,
      );
      const theirs = await kube().must<{ metadata: { labels?: Record<string, string> }; subjects: { name: string }[] }>(
        "GET",
        BINDING,
      );
      expect(theirs.subjects.map((s) => s.name)).toEqual(["someone-else"]);
      expect(theirs.metadata.labels?.["app.kubernetes.io/managed-by"]).toBeUndefined();
      expect(await keaMayUseScc(kube())).toBe(false);

      // Once theirs is gone, the next pass (an edit of the Infra starts one) writes the operator's.
      await kube().mustKubectl(["delete", "rolebinding", `${INFRA}-dhcp-scc`, "-n", NS]);
      await kube().mustKubectl([
        "annotate",
        "--overwrite",
        "infras.hostedcluster.densityops.com",
        INFRA,
        "-n",
        NS,
        "test/poke=1",
      ]);
      await eventually(
        async () => {
          const ours = await kube().call<{
            metadata: { labels?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
          }>("GET", BINDING);
          expect(ours.status, op.log).toBe(200);
          expect(ours.body.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("oooi");
          expect(ours.body.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([`Infra/${INFRA}`]);
        },
        60_000,
        200,
      );
      expect(await keaMayUseScc(kube())).toBe(true);
      await eventually(
        async () => {
          const reasons = (await infraConditions(kube())).map((c) => c.reason);
          expect(reasons).not.toContain("KeaSccBindingConflict");
          expect(reasons).not.toContain("KeaSccBindingNeeded");
        },
        30_000,
        200,
      );

      // The grant binds that one role: any other holding a permission the operator lacks is refused
      // (RBAC's escalation check), as is a cluster-wide binding. (admin, edit and view are empty here:
      // no aggregation controller runs; a role of the test's own stands for them.)
      await kube().mustKubectl(["create", "clusterrole", "secret-reader", "--verb=get,list", "--resource=secrets"]);
      for (const role of ["cluster-admin", "secret-reader"]) {
        const refused = await kube().call("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
          token,
          body: roleBinding(`escalate-${role}`, role, "someone-else"),
        });
        expect(refused.status, role).toBe(403);
      }
      const clusterWide = await kube().call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        token,
        body: {
          ...roleBinding("escalate", "oooi-kea-scc", "someone-else"),
          kind: "ClusterRoleBinding",
          metadata: { name: "escalate" },
        },
      });
      expect(clusterWide.status).toBe(403);
      // Nor may it delete a binding, its own or anyone's: the garbage collector removes its own.
      expect((await kube().call("DELETE", BINDING, { token })).status).toBe(403);

      await kube().mustKubectl(["delete", "infras.hostedcluster.densityops.com", INFRA, "-n", NS]);
      await eventually(
        async () => {
          expect((await kube().call("GET", BINDING)).status).toBe(404);
        },
        60_000,
        200,
      );
    } finally {
      await op.stop();
    }
  }, 180_000);
});
