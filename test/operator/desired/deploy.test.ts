// deploy/: the RBAC generated from permissions.ts (drift test, UPDATE_DEPLOY=1 regenerates), every
// YAML parses, `kubectl kustomize` builds it, the operator Deployment is hardened, and the
// Containerfile builds a non-root Node 22 image.
import { LEASE_NAME } from "../../../src/operator/process/writers.js";
import { CA_CONFIGMAP } from "../../../src/pki/store.js";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { MANAGED_KINDS } from "../../../src/operator/desired/objects.js";
import {
  clusterRoleYaml,
  leaderElectionRoleYaml,
  METRICS_READER_URLS,
  metricsReaderRoleYaml,
  debuggerRoleYaml,
  debuggerBindingCommand,
  DEBUG_ACCESS,
  NAMESPACE_ROLES,
  NETWORK_POLICY_ROLE,
  OPERATOR_PERMISSIONS,
  policyRules,
  WORKLOADS_ROLE,
} from "../../../src/operator/desired/permissions.js";
import {
  KEA_CAPABILITIES,
  KEA_SCC,
  KEA_SCC_BINDER_PERMISSIONS,
  KEA_SCC_ROLE,
  keaSccYaml,
} from "../../../src/operator/desired/scc.js";
import { keaWorkload } from "../../../src/operator/desired/kea.js";
import { OPERATOR_CONTAINER, XDS_PORT, XDS_SERVICE } from "../../../src/operator/desired/settings.js";
import { skipUnless, toolMissing } from "../../support/peers.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const DEPLOY = join(ROOT, "deploy");
const allRules = () => NAMESPACE_ROLES.flatMap((r) => r.permissions).concat(OPERATOR_PERMISSIONS);
/** Overlay folder, its path up to deploy/, and the resources it adds. */
const OVERLAYS: readonly [string, string, string[]][] = [
  ["overlays/cluster-wide", "../..", ["workloads_cluster_role_binding.yaml"]],
  ["openshift", "..", ["kea_scc.yaml"]],
];
const REGENERATE = "UPDATE_DEPLOY=1 npx vitest run test/operator/desired/deploy.test.ts";
type Json = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".yaml"))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

describe("deploy/rbac", () => {
  const generated: [string, string][] = [
    ["rbac/cluster_role.yaml", clusterRoleYaml()],
    ["rbac/leader_election_role.yaml", leaderElectionRoleYaml()],
    ["rbac/workloads_cluster_role.yaml", clusterRoleYaml(WORKLOADS_ROLE)],
    ["rbac/network_policy_cluster_role.yaml", clusterRoleYaml(NETWORK_POLICY_ROLE)],
    ["rbac/metrics_reader_cluster_role.yaml", metricsReaderRoleYaml()],
    ["rbac/debugger_cluster_role.yaml", debuggerRoleYaml()],
    ["openshift/kea_scc.yaml", keaSccYaml()],
  ];

  it.each(generated)("%s equals its generator", (file, text) => {
    const path = join(DEPLOY, file);
    if (process.env["UPDATE_DEPLOY"] === "1") writeFileSync(path, text);
    expect(readFileSync(path, "utf8"), `deploy/${file} is stale; regenerate with: ${REGENERATE}`).toBe(text);
  });

  it("grants apply-and-prune on every kind the desired state emits, where it is bound", () => {
    const rules = policyRules([...OPERATOR_PERMISSIONS, ...NAMESPACE_ROLES.flatMap((r) => r.permissions)]);
    for (const k of MANAGED_KINDS) {
      const group = k.apiVersion.includes("/") ? k.apiVersion.slice(0, k.apiVersion.indexOf("/")) : "";
      // Only deploy/openshift grants it, for server-side apply by name: never listed, never pruned.
      if (k.kind === "RoleBinding") {
        const binder = policyRules(KEA_SCC_BINDER_PERMISSIONS).filter((r) => r.resources.includes(k.plural));
        expect(binder.flatMap((r) => r.verbs)).toEqual(["create", "get", "patch"]);
        continue;
      }
      // Reading is cluster-wide (the watch), writing where a namespace role is bound.
      const verbs = rules
        .filter((r) => r.apiGroups.includes(group) && r.resources.includes(k.plural))
        .flatMap((r) => r.verbs);
      expect(verbs, k.kind).toEqual(expect.arrayContaining(["create", "delete", "get", "list", "patch", "watch"]));
    }
  });

  it("cluster-wide, the operator only reads workloads and policies; it can bind no role and run no pod", () => {
    const writes = ["create", "delete", "deletecollection", "patch", "update"];
    for (const r of policyRules(OPERATOR_PERMISSIONS)) {
      for (const res of [
        "configmaps",
        "deployments",
        "network-attachment-definitions",
        "networkpolicies",
        "persistentvolumeclaims",
        "serviceaccounts",
        "services",
        "secrets",
      ]) {
        if (r.resources.includes(res))
          expect(
            r.verbs.filter((v) => writes.includes(v)),
            res,
          ).toEqual([]);
      }
      expect(r.resources.includes("secrets"), "secrets are read only in Infra namespaces").toBe(false);
    }
    for (const r of policyRules(allRules())) {
      for (const res of [
        "pods",
        "rolebindings",
        "clusterrolebindings",
        "roles",
        "clusterroles",
        "serviceaccounts/token",
      ])
        expect(r.resources, res).not.toContain(res);
    }
    // Named rules are only where RBAC applies them: get/patch/delete, and create via server-side apply.
    for (const r of policyRules(NETWORK_POLICY_ROLE.permissions))
      expect(r).toMatchObject({ resourceNames: ["allow-infrastructure"], verbs: ["create", "delete", "get", "patch"] });
  });

  it("the namespace roles' comments give the binding command", () => {
    expect(clusterRoleYaml(WORKLOADS_ROLE)).toContain(
      "kubectl create rolebinding oooi-workloads --clusterrole=oooi-workloads --serviceaccount=oooi-system:oooi-operator -n <namespace>",
    );
  });

  it.each([
    ["cluster_role.yaml", clusterRoleYaml()],
    ["workloads_cluster_role.yaml", clusterRoleYaml(WORKLOADS_ROLE)],
    ["network_policy_cluster_role.yaml", clusterRoleYaml(NETWORK_POLICY_ROLE)],
  ])("%s grants nothing broad: no wildcards, secrets only by name, no escalate/bind/impersonate", (_file, yaml) => {
    const role = parse(yaml) as Json;
    for (const r of at(role, "rules") as Json[]) {
      expect(r["apiGroups"]).not.toContain("*");
      expect(r["resources"]).not.toContain("*");
      // Secrets by name only, never listed or watched: the HostedCluster's kubeconfig (get) and the
      // xDS certificates oooi issues (create, then get and update in place on rotation; never delete).
      if ((r["resources"] as string[]).includes("secrets")) {
        expect(r["resources"]).toEqual(["secrets"]);
        for (const v of r["verbs"] as string[]) expect(["create", "get", "update"]).toContain(v);
      }
      for (const v of ["*", "escalate", "bind", "impersonate", "deletecollection"]) expect(r["verbs"]).not.toContain(v);
    }
  });

  it("the operator may create TokenReviews and SubjectAccessReviews (--http-auth=kubernetes), nothing more of either", () => {
    const rules = policyRules(OPERATOR_PERMISSIONS).filter((r) =>
      r.apiGroups.some((g) => g === "authentication.k8s.io" || g === "authorization.k8s.io"),
    );
    expect(rules).toEqual([
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ]);
  });

  it("oooi-debugger grants the debug verb the operator asks for, the Lease and CA by name, and the port-forward", () => {
    const role = parse(debuggerRoleYaml()) as Json;
    const rules = at(role, "rules") as {
      apiGroups: string[];
      resources: string[];
      resourceNames?: string[];
      verbs: string[];
    }[];
    expect(rules).toContainEqual({
      apiGroups: [DEBUG_ACCESS.group],
      resources: [DEBUG_ACCESS.resource],
      verbs: [DEBUG_ACCESS.verb],
    });
    expect(rules.find((r) => r.resources.includes("leases"))?.resourceNames).toEqual([LEASE_NAME]);
    expect(rules.find((r) => r.resources.includes("configmaps"))?.resourceNames).toEqual([CA_CONFIGMAP]);
    expect(rules.flatMap((r) => r.resources).sort()).toEqual(["configmaps", "infras", "leases", "pods/portforward"]);
    expect(debuggerBindingCommand("--user=jane")).toBe(
      "kubectl create rolebinding oooi-debugger -n oooi-system --clusterrole=oooi-debugger --user=jane",
    );
  });

  it("oooi-metrics-reader grants get on the status page, its feed and JSON, and /metrics, nothing else", () => {
    const role = parse(metricsReaderRoleYaml()) as Json;
    expect(at(role, "metadata", "name")).toBe("oooi-metrics-reader");
    expect(role["rules"]).toEqual([{ nonResourceURLs: ["/", "/events", "/metrics", "/status.json"], verbs: ["get"] }]);
    expect(METRICS_READER_URLS).not.toContain("/healthz");
    expect(metricsReaderRoleYaml()).toContain(
      "kubectl create clusterrolebinding oooi-metrics-reader --clusterrole=oooi-metrics-reader --serviceaccount=",
    );
  });

  it("children's blockOwnerDeletion needs only update on infras/finalizers", () => {
    const role = parse(clusterRoleYaml()) as Json;
    expect(
      (at(role, "rules") as Json[]).find((r) => (r["resources"] as string[]).includes("infras/finalizers"))?.["verbs"],
    ).toEqual(["update"]);
  });
});

describe("deploy/openshift: Kea's SCC", () => {
  it("lets the operator bind that one role and write RoleBindings by name: no list, update or delete", () => {
    expect(policyRules(KEA_SCC_BINDER_PERMISSIONS)).toEqual([
      {
        apiGroups: ["rbac.authorization.k8s.io"],
        resources: ["clusterroles"],
        resourceNames: [KEA_SCC_ROLE],
        verbs: ["bind"],
      },
      { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create", "get", "patch"] },
    ]);
  });

  it("allows uid 0 and NET_RAW/NET_BIND_SERVICE, and nothing restricted-v2 forbids besides", () => {
    expect(KEA_SCC).toMatchObject({
      allowPrivilegedContainer: false,
      allowPrivilegeEscalation: false,
      allowHostDirVolumePlugin: false,
      allowHostIPC: false,
      allowHostNetwork: false,
      allowHostPID: false,
      allowHostPorts: false,
      requiredDropCapabilities: ["ALL"],
      allowedCapabilities: ["NET_BIND_SERVICE", "NET_RAW"],
      runAsUser: { type: "RunAsAny" },
      seccompProfiles: ["runtime/default"],
    });
    expect(KEA_SCC.volumes).not.toContain("hostPath");
    expect(KEA_SCC.volumes).not.toContain("*");
  });

  it("admits the generated Kea pod: capabilities, volumes, no escalation", () => {
    const owner = {
      apiVersion: "x/v1",
      kind: "Infra",
      name: "i",
      uid: "u",
      controller: true,
      blockOwnerDeletion: true,
    } as const;
    const objects = keaWorkload({
      infraName: "i",
      namespace: "ns",
      labels: {},
      podLabels: {},
      networksAnnotation: "[]",
      owner,
      node: "ns/i-dhcp",
      xdsAddress: "x:1",
      keaImage: "kea",
      agentImage: "oooi",
      hooksDirectory: "/hooks",
      interfaceName: "net1",
      leaseStorage: "1Gi",
      leaseStorageClass: undefined,
      // With the mounted client-certificate Secret: the SCC must admit that volume too.
      xdsTls: true,
    });
    const pod = at(
      objects.find((o) => o.kind === "Deployment"),
      "spec",
      "template",
      "spec",
    ) as Json;
    const containers = [...(pod["initContainers"] as Json[]), ...(pod["containers"] as Json[])];
    for (const c of containers) {
      const sc = c["securityContext"] as Json;
      expect(sc["allowPrivilegeEscalation"], String(c["name"])).toBe(false);
      expect(at(sc, "capabilities", "drop"), String(c["name"])).toEqual(["ALL"]);
      for (const cap of (at(sc, "capabilities", "add") as string[] | undefined) ?? [])
        expect(KEA_CAPABILITIES as readonly string[]).toContain(cap);
    }
    for (const v of pod["volumes"] as Json[]) {
      const kind = Object.keys(v).find((k) => k !== "name") ?? "";
      expect(KEA_SCC.volumes as readonly string[], kind).toContain(kind);
    }
  });
});

describe("deploy/ manifests", () => {
  it("every YAML file parses", () => {
    const files = yamlFiles(DEPLOY);
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      for (const doc of parseAllDocuments(readFileSync(f, "utf8"))) expect(doc.errors, f).toEqual([]);
    }
  });

  it("every kustomization lists files that exist", () => {
    for (const f of yamlFiles(DEPLOY).filter((p) => p.endsWith("kustomization.yaml"))) {
      const k = parse(readFileSync(f, "utf8")) as Json;
      const dir = f.slice(0, f.lastIndexOf("/"));
      for (const r of k["resources"] as string[]) {
        expect(existsSync(join(dir, r)), `${f}: ${r}`).toBe(true);
      }
    }
    expect((parse(readFileSync(join(DEPLOY, "kustomization.yaml"), "utf8")) as Json)["resources"]).toEqual([
      "crds",
      "rbac",
      "operator",
    ]);
  });

  it("the overlays list the base's folders and its images: kustomize refuses a base that contains its overlay", () => {
    const read = (dir: string) => parse(readFileSync(join(DEPLOY, dir, "kustomization.yaml"), "utf8")) as Json;
    const base = read(".");
    expect(base["images"]).toEqual([
      { name: "ghcr.io/oooi-project/oooi", newName: "ghcr.io/oooi-project/oooi", newTag: "0.1.0" },
    ]);
    for (const [dir, up, own] of OVERLAYS) {
      const overlay = read(dir);
      expect(overlay["images"], dir).toEqual(base["images"]);
      expect(overlay["resources"], dir).toEqual([...(base["resources"] as string[]).map((r) => `${up}/${r}`), ...own]);
    }
  });

  const kubectl = skipUnless(toolMissing("kubectl", "apt-get install kubernetes-client")) === undefined;
  const build = (dir: string) =>
    parseAllDocuments(execFileSync("kubectl", ["kustomize", join(DEPLOY, dir)], { encoding: "utf8" })).map(
      (d) => d.toJS() as Json,
    );
  const names = (objects: Json[]) => objects.map((o) => `${String(o["kind"])}/${String(at(o, "metadata", "name"))}`);

  it.skipIf(!kubectl)("each overlay builds into the base's objects plus its own", () => {
    const base = names(build("."));
    const added: Record<string, string[]> = {
      "overlays/cluster-wide": ["ClusterRoleBinding/oooi-workloads"],
      openshift: [
        "ClusterRole/oooi-kea-scc",
        "ClusterRole/oooi-kea-scc-binder",
        "ClusterRoleBinding/oooi-kea-scc-binder",
        "SecurityContextConstraints/oooi-kea",
      ],
    };
    for (const [dir] of OVERLAYS)
      expect(names(build(dir)).sort(), dir).toEqual([...base, ...(added[dir] ?? [])].sort());
    const binding = build("overlays/cluster-wide").find(
      (o) => o["kind"] === "ClusterRoleBinding" && at(o, "metadata", "name") === "oooi-workloads",
    );
    expect(at(binding, "roleRef", "name")).toBe(WORKLOADS_ROLE.clusterRole);
    expect(at(binding, "subjects")).toEqual([
      { kind: "ServiceAccount", name: "oooi-operator", namespace: "oooi-system" },
    ]);
  });

  it.skipIf(!kubectl)("deploy/openshift serves the HTTP port on the service CA's certificate for oooi-metrics", () => {
    const objects = build("openshift");
    const service = objects.find((o) => o["kind"] === "Service" && at(o, "metadata", "name") === "oooi-metrics");
    const secret = at(service, "metadata", "annotations", "service.beta.openshift.io/serving-cert-secret-name");
    const dep = objects.find((o) => o["kind"] === "Deployment");
    const pod = at(dep, "spec", "template", "spec") as Json;
    const volume = (pod["volumes"] as Json[]).find((v) => at(v, "secret", "secretName") === secret);
    expect(secret).toBe("oooi-metrics-tls");
    const operator = (pod["containers"] as Json[])[0] ?? {};
    const mount = (operator["volumeMounts"] as Json[]).find((m) => m["name"] === volume?.["name"]);
    const args = operator["args"] as string[];
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect([flag("--http-tls-cert"), flag("--http-tls-key")]).toEqual([
      `${String(mount?.["mountPath"])}/tls.crt`,
      `${String(mount?.["mountPath"])}/tls.key`,
    ]);
  });

  it.skipIf(!kubectl)("`images:` sets the operator's image, the only image the Deployment names", () => {
    const dep = build(".").find((o) => o["kind"] === "Deployment");
    const containers = at(dep, "spec", "template", "spec", "containers") as Json[];
    expect(containers.map((c) => c["image"])).toEqual(["ghcr.io/oooi-project/oooi:0.1.0"]);
    expect(JSON.stringify(dep).match(/ghcr\.io\/oooi-project\/oooi:/g)).toHaveLength(1);
  });

  it.skipIf(!kubectl)("a PodDisruptionBudget lets a drain evict one of the operator's replicas at a time", () => {
    const objects = build(".");
    const pdb = objects.find((o) => o["kind"] === "PodDisruptionBudget");
    const dep = objects.find((o) => o["kind"] === "Deployment");
    expect(at(pdb, "spec", "maxUnavailable")).toBe(1);
    expect(at(pdb, "spec", "selector", "matchLabels")).toEqual(at(dep, "spec", "selector", "matchLabels"));
    expect(at(dep, "spec", "replicas")).toBeGreaterThan(1);
  });

  it.skipIf(!kubectl)("kubectl kustomize builds deploy/ into the expected objects", () => {
    const objects = build(".");
    const kinds = objects.map((o) => `${String(o["kind"])}/${String(at(o, "metadata", "name"))}`).sort();
    expect(kinds).toEqual(
      expect.arrayContaining([
        "ClusterRole/oooi-debugger",
        "ClusterRole/oooi-metrics-reader",
        "ClusterRole/oooi-network-policy",
        "ClusterRole/oooi-operator",
        "ClusterRole/oooi-workloads",
        "ClusterRoleBinding/oooi-operator",
        "Deployment/oooi-operator",
        "Namespace/oooi-system",
        "Role/oooi-leader-election",
        "RoleBinding/oooi-leader-election",
        `Service/${XDS_SERVICE}`,
        "Service/oooi-metrics",
        "ServiceAccount/oooi-operator",
        "PodDisruptionBudget/oooi-operator",
      ]),
    );
    expect(objects.filter((o) => o["kind"] === "CustomResourceDefinition")).toHaveLength(5);
    for (const o of objects) {
      if (!["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"].includes(String(o["kind"]))) {
        expect(at(o, "metadata", "namespace"), String(o["kind"])).toBe("oooi-system");
      }
    }
  });
});

describe("the operator Deployment", () => {
  const docs = parseAllDocuments(readFileSync(join(DEPLOY, "operator", "deployment.yaml"), "utf8")).map(
    (d) => d.toJS() as Json,
  );
  const dep = docs[0] ?? {};
  const pod = at(dep, "spec", "template", "spec") as Json;
  const container = (pod["containers"] as Json[])[0] ?? {};

  it("runs 2 replicas of `oooi operator` under its ServiceAccount", () => {
    expect(at(dep, "spec", "replicas")).toBe(2);
    expect(container["args"]).toEqual(expect.arrayContaining(["operator"]));
    expect(pod["serviceAccountName"]).toBe("oooi-operator");
    expect(at(dep, "spec", "selector", "matchLabels")).toEqual(at(dep, "spec", "template", "metadata", "labels"));
  });

  it("is hardened: non-root, read-only root, no escalation, no capabilities, RuntimeDefault seccomp", () => {
    expect(container["securityContext"]).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    });
    expect(pod["securityContext"]).toEqual({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(at(container, "resources", "requests")).toEqual({ cpu: "100m", memory: "128Mi" });
  });

  it("probes /healthz and /readyz, gets its identity from the downward API, serves xDS where the Service points", () => {
    expect(at(container, "livenessProbe", "httpGet", "path")).toBe("/healthz");
    expect(at(container, "readinessProbe", "httpGet", "path")).toBe("/readyz");
    // --http-auth=kubernetes (the default, the args give no other) serves HTTPS: so must the probes ask.
    expect(container["args"]).not.toContain("--http-auth");
    expect(at(container, "livenessProbe", "httpGet", "scheme")).toBe("HTTPS");
    expect(at(container, "readinessProbe", "httpGet", "scheme")).toBe("HTTPS");
    const env = container["env"] as Json[];
    expect(env.find((e) => e["name"] === "POD_NAME")?.["valueFrom"]).toEqual({
      fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" },
    });
    expect(env.find((e) => e["name"] === "POD_NAMESPACE")?.["valueFrom"]).toEqual({
      fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" },
    });
    // The sidecars' image is read from the Pod (own-image.ts), so the image is set once, by `images:`.
    expect(env.map((e) => e["name"])).not.toContain("OOOI_IMAGE");
    expect(container["name"]).toBe(OPERATOR_CONTAINER);
    const services = parseAllDocuments(readFileSync(join(DEPLOY, "operator", "services.yaml"), "utf8")).map(
      (d) => d.toJS() as Json,
    );
    const xds = services.find((s) => at(s, "metadata", "name") === XDS_SERVICE);
    expect(at(xds, "spec", "ports", 0, "port")).toBe(XDS_PORT);
    const ports = (container["ports"] as Json[]).map((p) => p["name"]);
    for (const s of services) {
      expect(at(s, "spec", "selector")).toEqual(at(dep, "spec", "template", "metadata", "labels"));
      for (const p of at(s, "spec", "ports") as Json[]) expect(ports).toContain(p["targetPort"]);
    }
  });
});

describe("Containerfile", () => {
  const text = readFileSync(join(ROOT, "Containerfile"), "utf8");
  // Instructions with continuation lines joined and comments dropped, split by stage.
  const lines = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const stages: string[][] = [];
  for (const l of lines) {
    if (/^FROM\s/i.test(l)) stages.push([l]);
    else stages.at(-1)?.push(l);
  }
  const final = stages.at(-1) ?? [];

  it("builds on Node 22 LTS with npm ci, npm run build and a production-only prune", () => {
    expect(stages[0]?.[0]).toMatch(/^FROM\s+(docker\.io\/library\/)?node:22-bookworm-slim\s+AS\s+build$/i);
    expect(final[0]).toMatch(/^FROM\s+(docker\.io\/library\/)?node:22-bookworm-slim$/i);
    const build = (stages[0] ?? []).join("\n");
    expect(build).toMatch(/npm ci/);
    expect(build).toMatch(/npm run build/);
    expect(build).toMatch(/npm prune --omit=dev/);
  });

  it("runs the CLI as a numeric non-root user", () => {
    const user = final.filter((l) => /^USER\s/i.test(l)).at(-1) ?? "";
    const uid = /^USER\s+(\d+)(:\d+)?$/.exec(user)?.[1];
    expect(uid, user).toBeDefined();
    expect(Number(uid)).toBeGreaterThan(0);
    expect(final.filter((l) => /^ENTRYPOINT/i.test(l)).at(-1)).toBe('ENTRYPOINT ["node", "/app/dist/cli/main.js"]');
    expect(final.some((l) => /^COPY --from=build \/src\/dist/.test(l))).toBe(true);
  });

  it("has a kea stage with Debian's Kea 2.2", () => {
    const kea = stages.find((s) => /\sAS\s+kea$/i.test(s[0] ?? "")) ?? [];
    expect(kea[0]).toMatch(/debian:bookworm/);
    expect(kea.join("\n")).toMatch(/kea-dhcp4-server/);
  });
});
