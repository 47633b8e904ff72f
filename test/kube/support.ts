// Shared steps of the real-cluster suites: install deploy/'s CRDs (and our minimal foreign ones),
// seed the standalone example, and give the operator the identity deploy/ gives it — the
// ServiceAccount oooi-system/oooi-operator, bound only by deploy/rbac, with a TokenRequest token.
import { fileURLToPath } from "node:url";
import { foreignCrds } from "../support/kube/foreign-crds.js";
import { afterAll, beforeAll } from "vitest";
import { KubeCluster, type KubeClusterOptions } from "../support/kube/cluster.js";
import { INFRA_NAD } from "../operator/support.js";
import {
  bindingCommand,
  NETWORK_POLICY_ROLE,
  WORKLOADS_ROLE,
  type NamespaceRole,
} from "../../src/operator/desired/permissions.js";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const GROUP_PATH = "/apis/hostedcluster.densityops.com/v1alpha1";

/** A v1 List of objects, as kubectl reads from stdin. */
export function list(items: readonly unknown[]): string {
  return JSON.stringify({ apiVersion: "v1", kind: "List", items });
}

/** deploy/crds and the foreign kinds, applied and Established. */
export async function installCrds(cluster: KubeCluster): Promise<void> {
  await cluster.mustKubectl(["apply", "--server-side", "-k", `${REPO}deploy/crds`]);
  await cluster.mustKubectl(["apply", "--server-side", "-f", "-"], list(foreignCrds()));
  await cluster.mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
}

export async function createNamespaces(cluster: KubeCluster, names: readonly string[]): Promise<void> {
  await cluster.mustKubectl(
    ["apply", "--server-side", "-f", "-"],
    list(names.map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } }))),
  );
}

/** The standalone example (Infra, attachments, what HyperShift/CAPI/KubeVirt report) plus the Infra's NAD. */
export async function seedExample(cluster: KubeCluster): Promise<void> {
  await createNamespaces(cluster, ["clusters"]);
  await cluster.mustKubectl(["apply", "--server-side", "-f", `${REPO}examples/standalone/`]);
  await cluster.mustKubectl(["apply", "--server-side", "-f", "-"], list([INFRA_NAD]));
}

/** Where the platform engineer bound the namespace roles (permissions.ts NAMESPACE_ROLES). */
export interface Bindings {
  /** Namespaces holding an Infra: `oooi-workloads`. */
  readonly infraNamespaces: readonly string[];
  /** Control-plane namespaces: `oooi-network-policy`. */
  readonly controlPlaneNamespaces: readonly string[];
}

/** The example's namespaces. */
export const EXAMPLE_BINDINGS: Bindings = {
  infraNamespaces: ["clusters"],
  controlPlaneNamespaces: ["clusters-alpha", "clusters-beta"],
};

/** Runs the very command a MissingNamespaceBinding condition gives (bindingCommand), namespaces created first. */
export async function bindNamespace(cluster: KubeCluster, role: NamespaceRole, namespace: string): Promise<void> {
  await createNamespaces(cluster, [namespace]);
  const [kubectl, ...args] = bindingCommand(role, namespace, "oooi-system").split(" ");
  if (kubectl !== "kubectl") throw new Error(`not a kubectl command: ${kubectl ?? ""}`);
  await cluster.mustKubectl(args);
}

/**
 * Applies deploy/rbac, binds its namespace roles as the README tells the platform engineer to, and
 * returns a token of its ServiceAccount (TokenRequest API).
 */
export async function operatorToken(cluster: KubeCluster, bindings: Bindings = EXAMPLE_BINDINGS): Promise<string> {
  await createNamespaces(cluster, ["oooi-system"]);
  await cluster.mustKubectl(["apply", "--server-side", "-k", `${REPO}deploy/rbac`]);
  for (const ns of bindings.infraNamespaces) await bindNamespace(cluster, WORKLOADS_ROLE, ns);
  for (const ns of bindings.controlPlaneNamespaces) await bindNamespace(cluster, NETWORK_POLICY_ROLE, ns);
  return serviceAccountToken(cluster, "oooi-system", "oooi-operator");
}

/** A token of the ServiceAccount `namespace/name` (TokenRequest API). */
export async function serviceAccountToken(cluster: KubeCluster, namespace: string, name: string): Promise<string> {
  const tr = await cluster.must<{ status?: { token?: string } }>(
    "POST",
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } } },
  );
  const token = tr.status?.token;
  if (token === undefined) throw new Error("TokenRequest gave no token");
  return token;
}

/**
 * One cluster for the enclosing describe (started in beforeAll, with `setup` run on it; stopped in
 * afterAll): call inside a describe that skips on KUBE_SKIP. Returns its getter.
 */
export function useKubeCluster(
  opts: KubeClusterOptions,
  setup?: (cluster: KubeCluster) => Promise<void>,
): () => KubeCluster {
  let cluster: KubeCluster | undefined;
  beforeAll(async () => {
    cluster = await KubeCluster.start(opts);
    await setup?.(cluster);
  }, 300_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);
  return () => {
    if (cluster === undefined) throw new Error("the cluster did not start");
    return cluster;
  };
}
