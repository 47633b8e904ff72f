// The OLM bundle: bundle/ is exactly what bundle/generate.js writes from deploy/ (the drift test),
// its ClusterServiceVersion holds what OLM's CSV documentation requires
// (https://olm.operatorframework.io/docs/concepts/crds/clusterserviceversion/, and the registry+v1
// bundle format, https://olm.operatorframework.io/docs/tasks/creating-operator-bundle/), and a real
// API server accepts its CRDs, its permissions as the Role and ClusterRole OLM makes of them, and
// each alm-examples object against those CRDs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { skipUnless, toolMissing } from "../support/peers.js";
import { createNamespaces, list, REPO, useKubeCluster } from "../kube/support.js";

type Json = Record<string, unknown>;
const BUNDLE = join(REPO, "bundle");
const KUBECTL = skipUnless(toolMissing("kubectl", "apt-get install kubernetes-client")) === undefined;
const files = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
const read = (file: string) => parse(readFileSync(join(BUNDLE, file), "utf8")) as Json;

interface Csv {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations: Record<string, string> };
  spec: {
    version: string;
    installModes: { type: string; supported: boolean }[];
    customresourcedefinitions: { owned: { name: string; version: string; kind: string; description: string }[] };
    install: {
      strategy: string;
      spec: {
        deployments: { name: string; spec: { selector: Json; template: { spec: { serviceAccountName: string } } } }[];
        clusterPermissions: { serviceAccountName: string; rules: Json[] }[];
        permissions: { serviceAccountName: string; rules: Json[] }[];
      };
    };
  };
}
const CSV_FILE = "manifests/oooi.clusterserviceversion.yaml";
const csv = () => read(CSV_FILE) as unknown as Csv;

describe("bundle/", () => {
  it.skipIf(!KUBECTL)("is what bundle/generate.js writes from deploy/ (regenerate: node bundle/generate.js)", () => {
    const out = mkdtempSync(join(tmpdir(), "oooi-bundle-"));
    execFileSync(process.execPath, [join(BUNDLE, "generate.js"), out]);
    expect(files(BUNDLE).filter((f) => f !== "generate.js")).toEqual(files(out));
    for (const f of files(out))
      expect(
        readFileSync(join(BUNDLE, f), "utf8"),
        `bundle/${f} drifted from deploy/; run node bundle/generate.js`,
      ).toBe(readFileSync(join(out, f), "utf8"));
  });

  it("has the registry+v1 metadata, naming the package and the CSV's channel", () => {
    const annotations = read("metadata/annotations.yaml")["annotations"] as Record<string, string>;
    expect(annotations).toMatchObject({
      "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
      "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
      "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
      "operators.operatorframework.io.bundle.package.v1": "oooi",
    });
    const channels = annotations["operators.operatorframework.io.bundle.channels.v1"]?.split(",") ?? [];
    expect(channels).toContain(annotations["operators.operatorframework.io.bundle.channel.default.v1"]);
  });

  it("its CSV has OLM's required fields: name.vVERSION, semver, the four install modes, a deployment strategy", () => {
    const c = csv();
    const version = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
    expect([c.apiVersion, c.kind]).toEqual(["operators.coreos.com/v1alpha1", "ClusterServiceVersion"]);
    expect(c.spec.version).toBe(version);
    expect(c.spec.version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(c.metadata.name).toBe(`oooi.v${version}`);
    expect(c.spec.installModes.map((m) => m.type).sort()).toEqual([
      "AllNamespaces",
      "MultiNamespace",
      "OwnNamespace",
      "SingleNamespace",
    ]);
    expect(c.spec.installModes.filter((m) => m.supported).map((m) => m.type)).toEqual(["AllNamespaces"]);
    expect(c.spec.install.strategy).toBe("deployment");
    const [dep] = c.spec.install.spec.deployments;
    expect(dep?.spec.selector).toBeDefined();
    const sa = dep?.spec.template.spec.serviceAccountName;
    expect(c.spec.install.spec.clusterPermissions.map((p) => p.serviceAccountName)).toEqual([sa]);
    expect(c.spec.install.spec.permissions.map((p) => p.serviceAccountName)).toEqual([sa]);
    expect(c.metadata.annotations["containerImage"]).toBe(
      (dep?.spec.template.spec as unknown as { containers: { image: string }[] }).containers[0]?.image,
    );
  });

  it("owns every CRD it ships, each with a description, and every alm-example is of an owned kind", () => {
    const c = csv();
    const crds = files(BUNDLE)
      .filter((f) => f.startsWith("manifests/") && f !== CSV_FILE)
      .map(read)
      .filter((o) => o["kind"] === "CustomResourceDefinition") as unknown as {
      metadata: { name: string };
      spec: { group: string; names: { kind: string }; versions: { name: string; storage: boolean }[] };
    }[];
    expect(crds).toHaveLength(5);
    expect(c.spec.customresourcedefinitions.owned.map((o) => [o.name, o.version, o.kind]).sort()).toEqual(
      crds.map((d) => [d.metadata.name, d.spec.versions.find((v) => v.storage)?.name, d.spec.names.kind]).sort(),
    );
    for (const o of c.spec.customresourcedefinitions.owned) expect(o.description.length, o.kind).toBeGreaterThan(10);
    const examples = JSON.parse(c.metadata.annotations["alm-examples"] ?? "[]") as {
      apiVersion: string;
      kind: string;
    }[];
    expect(examples.map((e) => e.kind).sort()).toEqual(expect.arrayContaining(["Infra", "InfraClusterAttachment"]));
    for (const e of examples)
      expect(crds.some((d) => `${d.spec.group}/v1alpha1` === e.apiVersion && d.spec.names.kind === e.kind)).toBe(true);
  });
});

describe.skipIf(KUBE_SKIP !== undefined)("bundle/ on a real API server", () => {
  const kube = useKubeCluster({ controllerManager: false });

  it("accepts its CRDs, its permissions as OLM's Role and ClusterRole, and each alm-example", async () => {
    const manifests = files(BUNDLE)
      .filter((f) => f.startsWith("manifests/") && f !== CSV_FILE)
      .map(read);
    await kube().mustKubectl(
      ["apply", "--server-side", "-f", "-"],
      list(manifests.filter((o) => o["kind"] === "CustomResourceDefinition")),
    );
    await kube().mustKubectl(["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
    await createNamespaces(kube(), ["oooi-system", "clusters"]);
    const c = csv();
    const role = (kind: string, rules: Json[]) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind,
      metadata: { name: `oooi-olm-${kind.toLowerCase()}`, ...(kind === "Role" ? { namespace: "oooi-system" } : {}) },
      rules,
    });
    await kube().mustKubectl(
      ["apply", "--server-side", "-f", "-"],
      list([
        ...c.spec.install.spec.clusterPermissions.map((p) => role("ClusterRole", p.rules)),
        ...c.spec.install.spec.permissions.map((p) => role("Role", p.rules)),
        ...manifests
          .filter((o) => o["kind"] !== "CustomResourceDefinition")
          .map((o) => ({ ...o, metadata: { ...(o["metadata"] as Json), namespace: "oooi-system" } })),
      ]),
    );
    const examples = JSON.parse(c.metadata.annotations["alm-examples"] ?? "[]") as Json[];
    const out = await kube().mustKubectl(["create", "--dry-run=server", "-o", "name", "-f", "-"], list(examples));
    expect(out.trim().split("\n")).toHaveLength(examples.length);
  }, 120_000);
});
