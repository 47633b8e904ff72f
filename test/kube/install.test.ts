// docs/install.md on a real control plane (kube-apiserver, etcd, kube-controller-manager; no
// kubelet): its commands, run as written, install the base and the overlays. The base grants the
// workloads nothing until a namespace is bound; the cluster-wide overlay, installed through a user's
// own overlay that sets `images:`, lets the operator — the built CLI with its ServiceAccount's token,
// as one of the Deployment's own Pods — converge with no per-namespace binding and give the
// dhcp-agent sidecars the image it read from that Pod. The uninstall order then removes every
// object, the attachments' cross-namespace ones through their finalizer. The OpenShift overlay's SCC
// is usable by a Kea ServiceAccount once bound as documented.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { bindingCommand, WORKLOADS_ROLE } from "../../src/operator/desired/permissions.js";
import { keaSccBindingCommand } from "../../src/operator/desired/scc.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP, type KubeCluster } from "../support/kube/cluster.js";
import { foreignCrds, openshiftCrds } from "../support/kube/foreign-crds.js";
import { INFRA_NAD } from "../operator/support.js";
import { createNamespaces, GROUP_PATH, list, REPO, serviceAccountToken, useKubeCluster } from "./support.js";

const CLI = join(REPO, "dist", "cli", "main.js");
const INSTALL_MD = readFileSync(join(REPO, "docs", "install.md"), "utf8");
const SA = "system:serviceaccount:oooi-system:oooi-operator";
const OWN_IMAGE = "registry.example.test/oooi:0.1.0";

/** The commands of docs/install.md this suite runs, as they are written there. */
export const DOC_COMMANDS = {
  base: "kubectl apply --server-side -k deploy/",
  bindWorkloads: bindingCommand(WORKLOADS_ROLE, "NS", "oooi-system"),
  clusterWide: "kubectl apply --server-side -k deploy/overlays/cluster-wide/",
  ownOverlay: "kubectl apply --server-side -k my-oooi/",
  openshift: "kubectl apply --server-side -k deploy/openshift/",
  bindKeaScc: keaSccBindingCommand("NS", "<infra>"),
  deleteAttachments: "kubectl delete infraclusterattachments.hostedcluster.densityops.com --all --all-namespaces",
  deleteInfras: "kubectl delete infras.hostedcluster.densityops.com --all --all-namespaces",
  deleteOperator: "kubectl delete -k deploy/overlays/cluster-wide/",
} as const;

/** Runs a documented command: `deploy/` and `my-oooi/` resolved against `cwd`, placeholders replaced. */
async function run(
  cluster: KubeCluster,
  command: string,
  values: Readonly<Record<string, string>> = {},
  cwd = REPO,
): Promise<string> {
  let text: string = command;
  for (const [k, v] of Object.entries(values)) text = text.replaceAll(k, v);
  const [kubectl, ...args] = text.split(" ");
  if (kubectl !== "kubectl") throw new Error(`not a kubectl command: ${text}`);
  return cluster.mustKubectl(args.map((a) => (/^(deploy|my-oooi)\//.test(a) ? join(cwd, a) : a)));
}

/** Whether the operator's ServiceAccount may `verb` `resource` in `namespace` (SubjectAccessReview). */
async function operatorMay(cluster: KubeCluster, verb: string, resource: string, namespace: string): Promise<boolean> {
  const [group, plural] = resource.includes(".")
    ? [resource.slice(resource.indexOf(".") + 1), resource.split(".")[0]]
    : ["", resource];
  const review = await cluster.must<{ status?: { allowed?: boolean } }>(
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: SA,
          groups: ["system:serviceaccounts"],
          resourceAttributes: { verb, group, resource: plural, namespace },
        },
      },
    },
  );
  return review.status?.allowed === true;
}

/** The user's own overlay of docs/install.md (its ```yaml block), pointed at this checkout and a test registry. */
function writeOwnOverlay(): string {
  const found = /^( *)```yaml\n\1# my-oooi\/kustomization\.yaml\n([\s\S]*?)^ *```/m.exec(INSTALL_MD);
  if (found === null) throw new Error("docs/install.md has no my-oooi/kustomization.yaml block");
  const indent = found[1] ?? "";
  const block = (found[2] ?? "")
    .split("\n")
    .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
    .join("\n");
  const dir = mkdtempSync(join(tmpdir(), "oooi-install-"));
  mkdirSync(join(dir, "my-oooi"));
  writeFileSync(
    join(dir, "my-oooi", "kustomization.yaml"),
    // kustomize takes only relative paths to a base.
    block
      .replaceAll("../oooi/", `${relative(join(dir, "my-oooi"), REPO)}/`)
      .replaceAll("REGISTRY/oooi", OWN_IMAGE.slice(0, OWN_IMAGE.lastIndexOf(":"))),
  );
  return dir;
}

describe.skipIf(KUBE_SKIP !== undefined)("docs/install.md's commands on a real API server", () => {
  // The Deployment controller makes the operator's Pods; pvc-protection lets the Kea PVC go.
  const controllers = ["garbagecollector", "namespace", "deployment", "replicaset", "pvc-protection"];
  const kube = useKubeCluster({ controllers }, async (cluster) => {
    await cluster.mustKubectl(["apply", "--server-side", "-f", "-"], list(foreignCrds()));
  });

  it("every command this suite runs is in docs/install.md as written", () => {
    for (const c of Object.values(DOC_COMMANDS)) expect(INSTALL_MD, c).toContain(c);
  });

  it("the base installs with no workload rights until a namespace is bound", async () => {
    await run(kube(), DOC_COMMANDS.base);
    await kube().mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    for (const path of [
      "/apis/apps/v1/namespaces/oooi-system/deployments/oooi-operator",
      "/apis/policy/v1/namespaces/oooi-system/poddisruptionbudgets/oooi-operator",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/infras.hostedcluster.densityops.com`,
    ])
      expect((await kube().call("GET", path)).status, path).toBe(200);
    await createNamespaces(kube(), ["tenant-a"]);
    expect(await operatorMay(kube(), "create", "deployments.apps", "tenant-a")).toBe(false);
    await run(kube(), DOC_COMMANDS.bindWorkloads, { NS: "tenant-a" });
    expect(await operatorMay(kube(), "create", "deployments.apps", "tenant-a")).toBe(true);
    expect(await operatorMay(kube(), "create", "deployments.apps", "clusters")).toBe(false);
  }, 120_000);

  it("cluster-wide, through the user's overlay: the operator converges unbound, with its Pod's image", async () => {
    await run(kube(), DOC_COMMANDS.clusterWide);
    expect(await operatorMay(kube(), "create", "deployments.apps", "clusters")).toBe(true);
    expect(await operatorMay(kube(), "patch", "networkpolicies.networking.k8s.io", "clusters-alpha")).toBe(true);
    await run(kube(), DOC_COMMANDS.ownOverlay, {}, writeOwnOverlay());

    // The Deployment controller makes the operator's Pods from the applied template (restricted
    // pod security admits them); with no kubelet they stay Pending, and this process plays one.
    let pod = "";
    await eventually(
      async () => {
        const pods = await kube().must<{
          items: { metadata: { name: string }; spec: { containers: { image: string }[] } }[];
        }>("GET", "/api/v1/namespaces/oooi-system/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Doperator");
        const own = pods.items.find((p) => p.spec.containers[0]?.image === OWN_IMAGE);
        expect(own).toBeDefined();
        pod = own?.metadata.name ?? "";
      },
      60_000,
      200,
    );

    await createNamespaces(kube(), ["clusters"]);
    await kube().mustKubectl(["apply", "--server-side", "-f", `${REPO}examples/standalone/`]);
    await kube().mustKubectl(["apply", "--server-side", "-f", "-"], list([INFRA_NAD]));
    const kubeconfig = kube().writeKubeconfig(
      "oooi-operator",
      await serviceAccountToken(kube(), "oooi-system", "oooi-operator"),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: pod };
    delete env["OOOI_IMAGE"];
    const child = spawn(
      process.execPath,
      [
        CLI,
        "operator",
        "--kubeconfig",
        kubeconfig,
        "--xds-listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        "--xds-plaintext",
        "--http-auth",
        "none",
      ],
      { stdio: ["ignore", "ignore", "pipe"], env },
    );
    let log = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      log += d;
    });
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    try {
      let agentImage: string | undefined;
      await eventually(
        async () => {
          const dep = await kube().call<{
            spec: { template: { spec: { containers: { name: string; image: string }[] } } };
          }>("GET", "/apis/apps/v1/namespaces/clusters/deployments/tenant-vlan-dhcp");
          expect(dep.status, log).toBe(200);
          agentImage = dep.body.spec.template.spec.containers.find((c) => c.name === "dhcp-agent")?.image;
        },
        60_000,
        200,
      );
      expect(agentImage).toBe(OWN_IMAGE);
      // allow-infrastructure in each control-plane namespace: no oooi-network-policy binding needed.
      for (const ns of ["clusters-alpha", "clusters-beta"])
        await eventually(
          async () => {
            expect(
              (
                await kube().call(
                  "GET",
                  `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/allow-infrastructure`,
                )
              ).status,
              log,
            ).toBe(200);
          },
          30_000,
          200,
        );
      await eventually(
        async () => {
          const infra = await kube().must<{ status?: { conditions?: { type: string; reason?: string }[] } }>(
            "GET",
            `${GROUP_PATH}/namespaces/clusters/infras/tenant-vlan`,
          );
          expect(infra.status?.conditions?.length ?? 0).toBeGreaterThan(0);
          expect(infra.status?.conditions?.map((c) => c.reason)).not.toContain("MissingNamespaceBinding");
        },
        30_000,
        200,
      );
      expect(log).not.toMatch(/cannot read the operator's own Pod/);

      // Uninstall in order: the attachments (their finalizer needs the operator), the Infras, then the rest.
      await run(kube(), DOC_COMMANDS.deleteAttachments);
      for (const ns of ["clusters-alpha", "clusters-beta"])
        expect(
          (await kube().call("GET", `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/allow-infrastructure`))
            .status,
          `${ns}: the finalizer removed it before the attachment went`,
        ).toBe(404);
      await run(kube(), DOC_COMMANDS.deleteInfras);
      await eventually(
        async () => {
          for (const path of [
            "/apis/apps/v1/namespaces/clusters/deployments/tenant-vlan-dhcp",
            "/api/v1/namespaces/clusters/persistentvolumeclaims/tenant-vlan-dhcp-leases",
            `${GROUP_PATH}/namespaces/clusters/dhcpservers/tenant-vlan-dhcp`,
          ])
            expect((await kube().call("GET", path)).status, path).toBe(404);
        },
        60_000,
        200,
      );
      await run(kube(), DOC_COMMANDS.deleteOperator);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      for (const path of [
        "/api/v1/namespaces/oooi-system",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/oooi-workloads",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/oooi-operator",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/infras.hostedcluster.densityops.com",
      ])
        expect((await kube().call("GET", path)).status, path).toBe(404);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 300_000);

  it("OpenShift: the overlay's SCC is usable by an Infra's Kea ServiceAccount bound as documented", async () => {
    // The operator binds it itself under the overlay (test/kube/kea-scc.test.ts); this is the base's manual command.
    // Only now: with security.openshift.io served, an operator takes the cluster for OpenShift.
    await kube().mustKubectl(["apply", "--server-side", "-f", "-"], list(openshiftCrds()));
    await kube().mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    await run(kube(), DOC_COMMANDS.openshift);
    const scc = await kube().must<{ allowedCapabilities?: string[] }>(
      "GET",
      "/apis/security.openshift.io/v1/securitycontextconstraints/oooi-kea",
    );
    expect(scc.allowedCapabilities).toEqual(["NET_BIND_SERVICE", "NET_RAW"]);
    await createNamespaces(kube(), ["tenant-b"]);
    await kube().mustKubectl(["create", "serviceaccount", "vlan-dhcp", "-n", "tenant-b"]);
    const mayUse = async () =>
      (
        await kube().must<{ status?: { allowed?: boolean } }>(
          "POST",
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          {
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SubjectAccessReview",
              spec: {
                user: "system:serviceaccount:tenant-b:vlan-dhcp",
                resourceAttributes: {
                  verb: "use",
                  group: "security.openshift.io",
                  resource: "securitycontextconstraints",
                  name: "oooi-kea",
                  namespace: "tenant-b",
                },
              },
            },
          },
        )
      ).status?.allowed === true;
    expect(await mayUse()).toBe(false);
    await run(kube(), DOC_COMMANDS.bindKeaScc, { NS: "tenant-b", "<infra>": "vlan" });
    expect(await mayUse()).toBe(true);
  }, 120_000);
});
