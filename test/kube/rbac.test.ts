// What deploy/rbac (generated from src/operator/desired/permissions.ts) really grants, asked of a real
// kube-apiserver as the operator's ServiceAccount: the table's rights where the platform engineer
// bound them, and nothing that lets the operator act as someone else or touch what it does not own.
// Then the operator itself: an Infra in a namespace without its RoleBinding is told the command that
// creates it, the Infra beside it converges, and running that command is all it takes.
// (test/kube/operator.test.ts proves every request of the e2e run is granted.)
import { afterAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/api/schema.js";
import { WORKLOADS_ROLE } from "../../src/operator/desired/permissions.js";
import { operatorSettings } from "../../src/operator/desired/settings.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import type { RunningOperator } from "../../src/operator/process/options.js";
import { runOperator } from "../../src/operator/process/run.js";
import { Metrics } from "../../src/metrics/index.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { FakeDataPlane } from "../operator/support.js";
import {
  bindNamespace,
  createNamespaces,
  GROUP_PATH,
  installCrds,
  list,
  operatorToken,
  seedExample,
  useKubeCluster,
} from "./support.js";

interface AccessRow {
  readonly name: string;
  readonly verb: string;
  readonly group?: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly resourceName?: string;
  readonly allowed: boolean;
}

// `clusters` holds the Infra, `clusters-alpha` is a control-plane namespace, `elsewhere` is neither.
const ROWS: readonly AccessRow[] = [
  {
    name: "apply a Deployment in the Infra's namespace",
    verb: "patch",
    group: "apps",
    resource: "deployments",
    namespace: "clusters",
    allowed: true,
  },
  {
    name: "read the HostedCluster's kubeconfig Secret by name",
    verb: "get",
    resource: "secrets",
    namespace: "clusters",
    resourceName: "alpha-admin-kubeconfig",
    allowed: true,
  },
  { name: "watch Deployments cluster-wide", verb: "watch", group: "apps", resource: "deployments", allowed: true },
  {
    name: "apply its NetworkPolicy in a control-plane namespace",
    verb: "patch",
    group: "networking.k8s.io",
    resource: "networkpolicies",
    namespace: "clusters-alpha",
    resourceName: "allow-infrastructure",
    allowed: true,
  },
  {
    name: "create its NetworkPolicy by name (server-side apply)",
    verb: "create",
    group: "networking.k8s.io",
    resource: "networkpolicies",
    namespace: "clusters-alpha",
    resourceName: "allow-infrastructure",
    allowed: true,
  },
  {
    name: "write its Lease",
    verb: "update",
    group: "coordination.k8s.io",
    resource: "leases",
    namespace: "oooi-system",
    resourceName: "oooi-operator",
    allowed: true,
  },
  // --http-auth=kubernetes: who calls the HTTP port, and may they get the path.
  {
    name: "review a bearer token (TokenReview)",
    verb: "create",
    group: "authentication.k8s.io",
    resource: "tokenreviews",
    allowed: true,
  },
  {
    name: "ask whether a user may get a path (SubjectAccessReview)",
    verb: "create",
    group: "authorization.k8s.io",
    resource: "subjectaccessreviews",
    allowed: true,
  },
  // Acting as another identity.
  {
    name: "create a RoleBinding in the Infra's namespace",
    verb: "create",
    group: "rbac.authorization.k8s.io",
    resource: "rolebindings",
    namespace: "clusters",
    allowed: false,
  },
  {
    name: "create a RoleBinding in its own namespace",
    verb: "create",
    group: "rbac.authorization.k8s.io",
    resource: "rolebindings",
    namespace: "oooi-system",
    allowed: false,
  },
  {
    name: "create a ClusterRoleBinding",
    verb: "create",
    group: "rbac.authorization.k8s.io",
    resource: "clusterrolebindings",
    allowed: false,
  },
  {
    name: "bind a ClusterRole",
    verb: "bind",
    group: "rbac.authorization.k8s.io",
    resource: "clusterroles",
    resourceName: "cluster-admin",
    allowed: false,
  },
  {
    name: "escalate a ClusterRole",
    verb: "escalate",
    group: "rbac.authorization.k8s.io",
    resource: "clusterroles",
    resourceName: "oooi-operator",
    allowed: false,
  },
  {
    name: "impersonate a ServiceAccount",
    verb: "impersonate",
    resource: "serviceaccounts",
    namespace: "clusters",
    allowed: false,
  },
  { name: "impersonate a user", verb: "impersonate", resource: "users", resourceName: "admin", allowed: false },
  {
    name: "request a ServiceAccount token",
    verb: "create",
    resource: "serviceaccounts",
    subresource: "token",
    namespace: "clusters",
    allowed: false,
  },
  {
    name: "create a pod in the Infra's namespace",
    verb: "create",
    resource: "pods",
    namespace: "clusters",
    allowed: false,
  },
  {
    name: "exec into a pod",
    verb: "create",
    resource: "pods",
    subresource: "exec",
    namespace: "clusters",
    allowed: false,
  },
  // Touching what it does not own.
  {
    name: "read a Secret outside an Infra namespace",
    verb: "get",
    resource: "secrets",
    namespace: "elsewhere",
    resourceName: "x",
    allowed: false,
  },
  {
    name: "list Secrets in the Infra's namespace",
    verb: "list",
    resource: "secrets",
    namespace: "clusters",
    allowed: false,
  },
  {
    name: "apply a Deployment outside an Infra namespace",
    verb: "patch",
    group: "apps",
    resource: "deployments",
    namespace: "elsewhere",
    allowed: false,
  },
  {
    name: "apply a Deployment in a control-plane namespace",
    verb: "patch",
    group: "apps",
    resource: "deployments",
    namespace: "clusters-alpha",
    allowed: false,
  },
  {
    name: "create a ServiceAccount outside an Infra namespace",
    verb: "create",
    resource: "serviceaccounts",
    namespace: "elsewhere",
    allowed: false,
  },
  {
    name: "delete a Service outside an Infra namespace",
    verb: "delete",
    resource: "services",
    namespace: "kube-system",
    resourceName: "kube-dns",
    allowed: false,
  },
  {
    name: "patch another NetworkPolicy in a control-plane namespace",
    verb: "patch",
    group: "networking.k8s.io",
    resource: "networkpolicies",
    namespace: "clusters-alpha",
    resourceName: "hypershift-default",
    allowed: false,
  },
  {
    name: "create a NetworkPolicy without a name (POST)",
    verb: "create",
    group: "networking.k8s.io",
    resource: "networkpolicies",
    namespace: "clusters-alpha",
    allowed: false,
  },
  {
    name: "its NetworkPolicy in a namespace that is no control plane",
    verb: "patch",
    group: "networking.k8s.io",
    resource: "networkpolicies",
    namespace: "elsewhere",
    resourceName: "allow-infrastructure",
    allowed: false,
  },
  {
    name: "the proxy's own NetworkPolicy in the Infra's namespace",
    verb: "create",
    group: "networking.k8s.io",
    resource: "networkpolicies",
    namespace: "clusters",
    resourceName: "tenant-vlan-proxy",
    allowed: true,
  },
  { name: "delete a namespace", verb: "delete", resource: "namespaces", resourceName: "clusters", allowed: false },
  { name: "patch a node", verb: "patch", resource: "nodes", resourceName: "n1", allowed: false },
];

describe.skipIf(KUBE_SKIP !== undefined)("deploy/rbac on a real API server", () => {
  let token = "";
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    await seedExample(cluster);
    await createNamespaces(cluster, ["elsewhere", "unbound"]);
    token = await operatorToken(cluster);
  });

  it.each(ROWS)("$name: allowed=$allowed", async (row) => {
    const review = await kube().must<{ status?: { allowed?: boolean; reason?: string } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      {
        token,
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: {
            resourceAttributes: {
              verb: row.verb,
              group: row.group ?? "",
              resource: row.resource,
              ...(row.subresource === undefined ? {} : { subresource: row.subresource }),
              ...(row.namespace === undefined ? {} : { namespace: row.namespace }),
              ...(row.resourceName === undefined ? {} : { name: row.resourceName }),
            },
          },
        },
      },
    );
    expect(review.status?.allowed ?? false, JSON.stringify(review.status)).toBe(row.allowed);
  });

  // RBAC matches resourceNames against the request's URL: a POST has none, server-side apply has one.
  const policy = (name: string) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace: "clusters-alpha" },
    spec: { podSelector: {}, policyTypes: ["Ingress"] },
  });
  const policies = "/apis/networking.k8s.io/v1/namespaces/clusters-alpha/networkpolicies";
  const apply = (name: string) =>
    kube().call("PATCH", `${policies}/${name}`, {
      token,
      contentType: "application/apply-patch+yaml",
      query: { fieldManager: "rbac-test" },
      body: policy(name),
    });

  it("creating its own NetworkPolicy works by server-side apply only; any other name is refused", async () => {
    expect((await kube().call("POST", policies, { token, body: policy("allow-infrastructure") })).status).toBe(403);
    expect((await apply("hypershift-default")).status).toBe(403);
    expect((await apply("allow-infrastructure")).status).toBe(201);
    expect((await kube().call("DELETE", `${policies}/allow-infrastructure`, { token })).status).toBe(200);
  });

  describe("an Infra whose namespace lacks its RoleBinding", () => {
    let op: RunningOperator | undefined;
    afterAll(async () => {
      await op?.close();
    });
    const degraded = async () => {
      const infra = await kube().must<{
        status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
      }>("GET", `${GROUP_PATH}/namespaces/unbound/infras/lonely`);
      return infra.status?.conditions?.find((c) => c.type === "Degraded");
    };
    const deployments = async (ns: string) =>
      (
        await kube().must<{ items: { metadata: { name: string } }[] }>(
          "GET",
          `/apis/apps/v1/namespaces/${ns}/deployments`,
        )
      ).items
        .map((d) => d.metadata.name)
        .sort();

    it("is Degraded with the command that creates it; the Infra beside it converges; the command fixes it", async () => {
      await kube().mustKubectl(
        ["apply", "--server-side", "-f", "-"],
        list([
          {
            apiVersion: API_VERSION,
            kind: "Infra",
            metadata: { name: "lonely", namespace: "unbound" },
            spec: {
              networkConfig: {
                cidr: "127.0.9.0/24",
                gateway: "127.0.9.1",
                networkAttachmentDefinition: "vlan100",
                networkAttachmentNamespace: "clusters",
              },
              infraComponents: {
                dhcp: { serverIP: "127.0.9.2", rangeStart: "127.0.9.100", rangeEnd: "127.0.9.199" },
                dns: { serverIP: "127.0.9.3" },
                proxy: {
                  serverIP: "127.0.9.4",
                  internalClients: {
                    namespaceSelector: {
                      matchExpressions: [{ key: "tier", operator: "In", values: ["platform"] }],
                    },
                  },
                },
              },
            },
          },
        ]),
      );
      op = runOperator({
        kubeConfig: kube().kubeConfigFor("operator", token),
        settings: operatorSettings({ namespace: "oooi-system" }),
        dataPlane: new FakeDataPlane(),
        dnsProbe: false,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
        metrics: new Metrics().recorder(OPERATOR_METRICS),
        leaderElection: false,
        debounceMs: 20,
        resyncMs: 500,
        backoff: { initialMs: 50, maxMs: 500 },
        watch: { timeoutSeconds: 30, discoveryIntervalMs: 1000 },
      });
      await op.ready;
      const command =
        "kubectl create rolebinding oooi-workloads --clusterrole=oooi-workloads --serviceaccount=oooi-system:oooi-operator -n unbound";
      await eventually(async () => {
        expect(await degraded()).toMatchObject({ status: "True", reason: "MissingNamespaceBinding" });
        expect((await degraded())?.message).toContain(command);
        // The example's Infra is not harmed: its workloads are there, the lonely one's child CRs too.
        expect(await deployments("clusters")).toEqual(["tenant-vlan-dhcp", "tenant-vlan-dns", "tenant-vlan-proxy"]);
        await kube().must("GET", `${GROUP_PATH}/namespaces/unbound/proxyservers/lonely-proxy`);
      }, 60_000);
      expect(await deployments("unbound")).toEqual([]);

      await bindNamespace(kube(), WORKLOADS_ROLE, "unbound");
      await eventually(async () => {
        expect(await deployments("unbound")).toEqual(["lonely-dhcp", "lonely-dns", "lonely-proxy"]);
        expect(await degraded()).toMatchObject({ status: "False" });
      }, 60_000);
      // The real API server took the proxy's policy as generated: only the selected namespaces come in.
      const policy = await kube().must<{ spec: Record<string, unknown> }>(
        "GET",
        "/apis/networking.k8s.io/v1/namespaces/unbound/networkpolicies/lonely-proxy",
      );
      expect(policy.spec["ingress"]).toEqual([
        {
          from: [{ namespaceSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["platform"] }] } }],
          ports: [443, 6443, 80].map((port) => ({ protocol: "TCP", port })),
        },
      ]);
    }, 180_000);
  });
});
