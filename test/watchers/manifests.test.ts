import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  formatManifestError,
  loadManifestDir,
  parseManifests,
  summarizeIgnored,
  type ManifestError,
  type ManifestFile,
  type ManifestLoad,
} from "../../src/watchers/manifests.js";
import { EMPTY_STATE, type ClusterState } from "../../src/model/types.js";
import { ManifestSources } from "../../src/watchers/manifest-sources.js";

const infra = (name: string, ns?: string, cidr = "192.0.2.0/24") => `
apiVersion: hostedcluster.densityops.com/v1alpha1
kind: Infra
metadata:
  name: ${name}
${ns === undefined ? "" : `  namespace: ${ns}\n`}spec:
  networkConfig:
    cidr: ${cidr}
    gateway: 192.0.2.1
    networkAttachmentDefinition: vlan100
`;

const attachment = (name: string, ns: string) => `
apiVersion: hostedcluster.densityops.com/v1alpha1
kind: InfraClusterAttachment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  infraRef: {name: vlan100}
  hostedClusterRef: {name: ${name}}
  dns: {clusterName: ${name}, baseDomain: example.com}
`;

const obj = (apiVersion: string, kind: string, name: string, ns?: string) =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${ns === undefined ? "" : `  namespace: ${ns}\n`}`;

function ok(load: ManifestLoad): Extract<ManifestLoad, { ok: true }> {
  if (!load.ok) throw new Error(`unexpected load error: ${formatManifestError(load.error)}`);
  return load;
}
function fail(load: ManifestLoad): ManifestError {
  if (load.ok) throw new Error("expected the load to fail");
  return load.error;
}
const names = (xs: Iterable<{ metadata: { namespace: string; name: string } }>) =>
  Array.from(xs, (x) => `${x.metadata.namespace}/${x.metadata.name}`);
const parse1 = (text: string, path = "m.yaml") => parseManifests([{ path, text }]);

describe("parseManifests: documents", () => {
  it("reads multi-document YAML and skips empty documents", () => {
    const r = ok(
      parse1(
        `---\n# nothing here\n---\n${obj("v1", "Service", "a", "x")}---\n---\n${obj("v1", "Service", "b", "x")}\n---\n`,
      ),
    );
    expect(names(r.state.services)).toEqual(["x/a", "x/b"]);
  });

  it("accepts an empty file", () => {
    expect(ok(parse1("")).state.services).toEqual([]);
    expect(ok(parse1("# just a comment\n")).files).toEqual(["m.yaml"]);
  });

  it("expands List kinds", () => {
    const r = ok(
      parse1(`apiVersion: v1
kind: List
items:
  - ${obj("v1", "Service", "s1", "x").replace(/\n(?=.)/g, "\n    ")}
  - apiVersion: kubevirt.io/v1
    kind: VirtualMachineInstance
    metadata: {name: vm1, namespace: x}
---
apiVersion: v1
kind: NamespaceList
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: x}}
---
apiVersion: v1
kind: ServiceList
items: null
`),
    );
    expect(names(r.state.services)).toEqual(["x/s1"]);
    expect(names(r.state.vmis)).toEqual(["x/vm1"]);
    expect(names(r.state.namespaces)).toEqual(["/x"]);
  });

  it("reads JSON files", () => {
    const r = ok(
      parse1(
        JSON.stringify(
          {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name: "j", namespace: "x" },
            spec: { clusterIP: "10.0.0.1" },
          },
          null,
          2,
        ),
        "svc.json",
      ),
    );
    expect(r.state.services.at(0)?.spec?.clusterIP).toBe("10.0.0.1");
  });
});

describe("parseManifests: unreadable input", () => {
  it.each<[string, string, Omit<ManifestError, "file">]>([
    [
      "unclosed flow sequence",
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  labels: [x, y\nspec: {}\n",
      {
        line: 6,
        column: 1,
        message: "Flow sequence in block collection must be sufficiently indented and end with a ]",
      },
    ],
    [
      "bad indentation in the second document (line counts from the file start)",
      `${obj("v1", "Service", "a")}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n   namespace: x\n`,
      // The over-indented line 10 is the one to fix; the yaml library alone points at line 9's value.
      {
        line: 10,
        column: 4,
        message:
          "Nested mappings are not allowed in compact mappings: this line is indented deeper than the key above it, so it continues the value on line 9",
      },
    ],
    [
      "duplicate key",
      "apiVersion: v1\nkind: Service\nkind: Namespace\n",
      { line: 3, column: 1, message: "Map keys must be unique" },
    ],
    [
      "tab indentation",
      "apiVersion: v1\nmetadata:\n\tname: a\n",
      { line: 3, column: 1, message: "Tabs are not allowed as indentation" },
    ],
    [
      "a sequence document",
      "---\n- a\n- b\n",
      { line: 2, column: 1, message: "document is a sequence, not a mapping (a Kubernetes object)" },
    ],
    [
      "a scalar document",
      `${obj("v1", "Service", "a")}---\nhello\n`,
      { line: 6, column: 1, message: "document is a string scalar, not a mapping (a Kubernetes object)" },
    ],
    [
      "a non-mapping list item",
      "apiVersion: v1\nkind: ServiceList\nitems:\n  - {apiVersion: v1, kind: Service, metadata: {name: a}}\n  - just a string\n",
      { line: 5, column: 5, message: "items[1] is a string scalar, not a mapping" },
    ],
    [
      "List items not a sequence",
      "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
      { line: 3, column: 8, message: "List.items must be a sequence" },
    ],
    [
      "unresolved alias",
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: *x\n",
      { line: 1, column: 1, message: "Unresolved alias (the anchor must be set before the alias): x" },
    ],
    ["missing kind", "\napiVersion: v1\nmetadata: {name: a}\n", { line: 2, column: 1, message: "object has no kind" }],
    // Issue 27, finding 8: a misspelled kind of ours was ignored, the Infra silently gone.
    [
      "a misspelled kind of ours (at the kind, with the kind meant)",
      `${obj("v1", "Service", "a")}---\n${obj("hostedcluster.densityops.com/v1alpha1", "Infar", "vlan100", "clusters")}`,
      {
        line: 7,
        column: 7,
        message: "kind: Infar is no kind of hostedcluster.densityops.com — did you mean Infra?",
      },
    ],
    [
      "a kind of ours in the wrong case",
      obj("hostedcluster.densityops.com/v1alpha1", "infraclusterattachment", "a"),
      {
        line: 2,
        column: 7,
        message:
          "kind: infraclusterattachment is no kind of hostedcluster.densityops.com — did you mean InfraClusterAttachment?",
      },
    ],
    [
      "a kind of our group far from any of ours",
      obj("hostedcluster.densityops.com/v1", "Gateway", "a"),
      {
        line: 2,
        column: 7,
        message:
          "kind: Gateway is no kind of hostedcluster.densityops.com (its kinds: Infra, InfraClusterAttachment, DHCPServer, DNSServer, ProxyServer)",
      },
    ],
    [
      "missing apiVersion",
      "kind: Service\nmetadata: {name: a}\n",
      { line: 1, column: 1, message: "object has no apiVersion" },
    ],
    [
      "consumed kind without a name",
      "apiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n",
      { line: 1, column: 1, message: "Service has no metadata.name" },
    ],
    [
      "metadata not a mapping",
      "apiVersion: v1\nkind: Service\nmetadata: [a]\n",
      { line: 1, column: 1, message: "Service: metadata must be a mapping" },
    ],
    [
      "trailing comma in JSON",
      '{"apiVersion": "v1", "kind": "Service",\n "metadata": {"name": "a"\n}\n',
      { line: 4, column: 1, message: "Flow map must end with a }" },
    ],
  ])("%s", (_, text, expected) => {
    expect(fail(parse1(text, "dir/broken.yaml"))).toEqual({ file: "dir/broken.yaml", ...expected });
  });

  it("names both files of a duplicate object", () => {
    const e = fail(
      parseManifests([
        { path: "b.yaml", text: `# dup\n${infra("vlan100", "clusters")}` },
        { path: "a.yaml", text: `${obj("v1", "Service", "x")}---${infra("vlan100", "clusters")}` },
      ]),
    );
    expect(e).toEqual({
      file: "b.yaml",
      line: 3,
      column: 1,
      message: "duplicate Infra clusters/vlan100: also defined in a.yaml:6",
    });
  });

  it("counts a missing namespace as default when looking for duplicates", () => {
    const e = fail(
      parseManifests([
        { path: "a.yaml", text: obj("v1", "Service", "s") },
        { path: "b.yaml", text: obj("v1", "Service", "s", "default") },
      ]),
    );
    expect(e.message).toBe("duplicate Service default/s: also defined in a.yaml:1");
  });

  it("formats an error as file:line:column: message", () => {
    expect(formatManifestError({ file: "a.yaml", line: 3, column: 2, message: "bad" })).toBe("a.yaml:3:2: bad");
    expect(formatManifestError({ file: "dir", message: "missing" })).toBe("dir: missing");
  });
});

describe("parseManifests: status-only documents", () => {
  const status = (name: string, ns: string, ip = "192.0.2.200") => `
apiVersion: hostedcluster.densityops.com/v1alpha1
kind: InfraClusterAttachment
metadata: {name: ${name}, namespace: ${ns}}
status:
  appsIngressStatus:
    phase: Ready
    externalIP: ${ip}
`;

  it.each([
    ["after", "z-status.yaml"],
    ["before", "0-status.yaml"],
  ])("gives its status to the object defined in another file (status file sorted %s)", (_, statusFile) => {
    const load = ok(
      parseManifests([
        { path: "attachment.yaml", text: attachment("hc1", "clusters") },
        { path: statusFile, text: status("hc1", "clusters") },
      ]),
    );
    expect(load.state.attachments).toHaveLength(1);
    expect(load.state.attachments[0]?.spec.hostedClusterRef.name).toBe("hc1");
    expect(load.state.attachments[0]?.status?.appsIngressStatus).toEqual({ phase: "Ready", externalIP: "192.0.2.200" });
    const ref = { kind: "InfraClusterAttachment", namespace: "clusters", name: "hc1" };
    // A problem on a status field points into the status file, one on the spec into the spec's.
    expect(load.sources.locate(ref, "status.appsIngressStatus.externalIP")).toEqual({
      file: statusFile,
      line: 8,
      column: 5,
    });
    expect(load.sources.locate(ref, "spec.dns")).toMatchObject({ file: "attachment.yaml", line: 8 });
  });

  it("refuses a status given twice, naming both places", () => {
    expect(
      fail(
        parseManifests([
          { path: "attachment.yaml", text: attachment("hc1", "clusters") },
          { path: "a-status.yaml", text: status("hc1", "clusters") },
          { path: "b-status.yaml", text: status("hc1", "clusters", "192.0.2.201") },
        ]),
      ),
    ).toEqual({
      file: "b-status.yaml",
      line: 2,
      column: 1,
      message: "status of InfraClusterAttachment clusters/hc1 given twice: also in a-status.yaml:2",
    });
    const withOwn = `${attachment("hc1", "clusters")}status: {appsIngressStatus: {phase: Pending}}\n`;
    expect(
      fail(
        parseManifests([
          { path: "attachment.yaml", text: withOwn },
          { path: "status.yaml", text: status("hc1", "clusters") },
        ]),
      ).message,
    ).toBe("status of InfraClusterAttachment clusters/hc1 given twice: also in attachment.yaml:2");
  });

  it("refuses a status whose object no manifest defines, naming its file and line", () => {
    expect(
      fail(
        parseManifests([
          { path: "attachment.yaml", text: attachment("hc1", "clusters") },
          { path: "status.yaml", text: status("hc2", "clusters") },
        ]),
      ),
    ).toEqual({
      file: "status.yaml",
      line: 2,
      column: 1,
      message: "status-only InfraClusterAttachment clusters/hc2: no manifest defines its spec",
    });
  });
});

describe("parseManifests: classification", () => {
  const all = [
    infra("vlan100", "clusters"),
    attachment("hc1", "clusters"),
    obj("hypershift.openshift.io/v1beta1", "HostedCluster", "hc1", "clusters"),
    obj("hypershift.openshift.io/v1beta1", "NodePool", "np1", "clusters"),
    obj("cluster.x-k8s.io/v1beta1", "Machine", "m1", "clusters-hc1"),
    obj("kubevirt.io/v1", "VirtualMachineInstance", "vm1", "clusters-hc1"),
    obj("v1", "Service", "kube-apiserver", "clusters-hc1"),
    obj("v1", "Namespace", "clusters-hc1"),
    // Ignored: our generated children, unknown kinds, known kinds of other groups.
    obj("hostedcluster.densityops.com/v1alpha1", "DHCPServer", "vlan100-dhcp", "clusters"),
    obj("hostedcluster.densityops.com/v1alpha1", "ProxyServer", "vlan100-proxy", "clusters"),
    obj("apps/v1", "Deployment", "d", "clusters"),
    obj("example.com/v1", "Service", "not-core", "clusters"),
    obj("example.com/v1", "Infra", "not-ours", "clusters"),
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
  ].join("---\n");

  it("puts every kind in its array", () => {
    const { state } = ok(parse1(all));
    expect(names(state.infras)).toEqual(["clusters/vlan100"]);
    expect(names(state.attachments)).toEqual(["clusters/hc1"]);
    expect(names(state.hostedClusters)).toEqual(["clusters/hc1"]);
    expect(names(state.nodePools)).toEqual(["clusters/np1"]);
    expect(names(state.machines)).toEqual(["clusters-hc1/m1"]);
    expect(names(state.vmis)).toEqual(["clusters-hc1/vm1"]);
    expect(names(state.services)).toEqual(["clusters-hc1/kube-apiserver"]);
    expect(names(state.namespaces)).toEqual(["/clusters-hc1"]);
    expect(state.invalid).toEqual([]);
  });

  it("lists ignored objects, sorted, with a summary for the log", () => {
    const { ignored } = ok(parse1(all, "all.yaml"));
    expect(ignored.map((o) => `${o.kind} ${o.namespace}/${o.name}`)).toEqual([
      "DHCPServer clusters/vlan100-dhcp",
      "Deployment clusters/d",
      "Infra clusters/not-ours",
      "Kustomization default/",
      "ProxyServer clusters/vlan100-proxy",
      "Service clusters/not-core",
    ]);
    expect(ignored[0]).toEqual({
      apiVersion: "hostedcluster.densityops.com/v1alpha1",
      kind: "DHCPServer",
      namespace: "clusters",
      name: "vlan100-dhcp",
      file: "all.yaml",
    });
    expect(summarizeIgnored(ignored)).toBe(
      "6 objects of kinds DHCPServer, Deployment, Infra, Kustomization, ProxyServer, Service",
    );
    expect(summarizeIgnored(ignored.slice(0, 1))).toBe("1 object of kind DHCPServer");
    expect(summarizeIgnored([])).toBe("");
  });

  it("applies schema defaults to our kinds and keeps others as-is", () => {
    const { state } = ok(parse1(all));
    expect(state.infras[0]?.spec.networkConfig.dnsServers).toEqual(["resolv.conf"]);
    expect(state.infras[0]?.spec.infraComponents?.dhcp?.leaseTime).toBe("1h");
    expect(state.attachments[0]?.spec.apiServerService).toBe("kube-apiserver");
    expect(state.hostedClusters.at(0)).toEqual({
      apiVersion: "hypershift.openshift.io/v1beta1",
      kind: "HostedCluster",
      metadata: { name: "hc1", namespace: "clusters" },
    });
  });

  it("reports an invalid Infra without dropping the others", () => {
    const { state } = ok(
      parse1(
        [
          infra("good", "a"),
          infra("bad", "a", "192.0.2.0/33"),
          infra("also-good", "b"),
          attachment("", "a").replace("name: , ", "name: broken, ").replace("clusterName: ,", "clusterName: Bad_Name,"),
        ].join("---\n"),
      ),
    );
    expect(names(state.infras)).toEqual(["a/good", "b/also-good"]);
    expect(state.invalid).toEqual([
      {
        ref: { kind: "Infra", namespace: "a", name: "bad" },
        errors: [
          { field: "spec.networkConfig.cidr", message: expect.stringMatching(/must be an IPv4 CIDR/) as string },
        ],
      },
      {
        ref: { kind: "InfraClusterAttachment", namespace: "a", name: "broken" },
        errors: expect.arrayContaining([expect.objectContaining({ field: "spec.dns.clusterName" })]) as unknown,
      },
    ]);
  });

  it("reports a wrong version of our kind as invalid", () => {
    const { state } = ok(parse1(infra("v", "a").replace("v1alpha1", "v1beta1")));
    expect(state.infras).toEqual([]);
    expect(state.invalid?.[0]?.errors).toEqual([
      { field: "apiVersion", message: "must be hostedcluster.densityops.com/v1alpha1" },
    ]);
  });

  it("defaults the namespace to default, except for Namespaces", () => {
    const { state } = ok(
      parse1([infra("v"), obj("v1", "Service", "s"), obj("v1", "Namespace", "n", "ignored-ns")].join("---\n")),
    );
    expect(state.infras[0]?.metadata.namespace).toBe("default");
    expect(state.services.at(0)?.metadata.namespace).toBe("default");
    expect(state.namespaces.at(0)?.metadata).toEqual({ name: "n", namespace: "" });
  });

  it("does not treat the same name in another namespace or kind as a duplicate", () => {
    const r = ok(
      parse1(
        [
          obj("v1", "Service", "s", "a"),
          obj("v1", "Service", "s", "b"),
          obj("kubevirt.io/v1", "VirtualMachineInstance", "s", "a"),
        ].join("---\n"),
      ),
    );
    expect(names(r.state.services)).toEqual(["a/s", "b/s"]);
  });

  it("sorts by namespace/name whatever the file and document order", () => {
    const docs = [
      obj("v1", "Service", "b", "y"),
      obj("v1", "Service", "a", "y"),
      obj("v1", "Service", "z", "x"),
      infra("i2", "n1"),
      infra("i1", "n2"),
      infra("i3", "n1"),
    ];
    const files: ManifestFile[] = docs.map((text, i) => ({ path: `f${i}.yaml`, text }));
    const forward = ok(parseManifests(files));
    const backward = ok(parseManifests([...files].reverse()));
    const oneFile = ok(parse1([...docs].reverse().join("---\n")));
    expect(names(forward.state.services)).toEqual(["x/z", "y/a", "y/b"]);
    expect(names(forward.state.infras)).toEqual(["n1/i2", "n1/i3", "n2/i1"]);
    expect(backward.state).toEqual(forward.state);
    expect(oneFile.state).toEqual(forward.state);
    expect(backward.files).toEqual(forward.files);
  });
});

describe("loadManifestDir", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oooi-manifests-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const put = async (rel: string, text: string) => {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text);
  };

  it("reads *.yaml, *.yml and *.json recursively, sorted, skipping other and hidden files", async () => {
    await put("z.yaml", infra("z", "n"));
    await put("sub/deeper/a.yml", obj("v1", "Service", "svc", "n"));
    await put("b.json", JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" } }));
    await put("README.md", "not: [a manifest");
    await put("notes.txt", "- nope");
    await put(".hidden.yaml", "{{{");
    await put(".git/config.yaml", "{{{");
    const r = ok(await loadManifestDir(dir));
    expect(r.files).toEqual(["b.json", "sub/deeper/a.yml", "z.yaml"]);
    expect(names(r.state.infras)).toEqual(["n/z"]);
    expect(names(r.state.services)).toEqual(["n/svc"]);
    expect(names(r.state.namespaces)).toEqual(["/n"]);
  });

  it("reads a ConfigMap volume layout once (KEY -> ..data/KEY)", async () => {
    await put("..2025_01_01/infra.yaml", infra("cm", "n"));
    await symlink("..2025_01_01", join(dir, "..data"));
    await symlink("..data/infra.yaml", join(dir, "infra.yaml"));
    const r = ok(await loadManifestDir(dir));
    expect(r.files).toEqual(["infra.yaml"]);
    expect(names(r.state.infras)).toEqual(["n/cm"]);
  });

  it("follows symlinked directories without looping", async () => {
    await put("real/svc.yaml", obj("v1", "Service", "s", "n"));
    await symlink("..", join(dir, "real", "loop"));
    const r = ok(await loadManifestDir(dir));
    expect(r.files).toEqual(["real/svc.yaml"]);
  });

  it("names the file and line of broken YAML", async () => {
    await put("ok.yaml", obj("v1", "Service", "s", "n"));
    await put(
      "clusters/broken.yaml",
      `${infra("v", "n")}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: x\n  labels: {a: b\nspec: {}\n`,
    );
    // Line 17 opens the flow map; the parser notices at line 18, where the block mapping resumes.
    expect(fail(await loadManifestDir(dir))).toEqual({
      file: "clusters/broken.yaml",
      line: 18,
      column: 1,
      message: "Flow map in block collection must be sufficiently indented and end with a }",
    });
  });

  it("names a dangling symlink", async () => {
    await symlink("gone.yaml", join(dir, "dangling.yaml"));
    expect(fail(await loadManifestDir(dir))).toEqual({
      file: "dangling.yaml",
      message: "cannot read file: ENOENT: no such file or directory",
    });
  });

  it("fails on a missing directory or a plain file", async () => {
    const missing = join(dir, "nope");
    expect(fail(await loadManifestDir(missing))).toEqual({
      file: missing,
      message: "cannot read manifest directory: ENOENT: no such file or directory",
    });
    await put("file.yaml", "");
    expect(fail(await loadManifestDir(join(dir, "file.yaml")))).toEqual({
      file: join(dir, "file.yaml"),
      message: "not a directory",
    });
  });

  it("loads an empty directory as an empty state", async () => {
    const r = ok(await loadManifestDir(dir));
    const empty: ClusterState = { ...EMPTY_STATE, invalid: [], unknownFields: [] };
    expect(r).toEqual({
      ok: true,
      state: empty,
      files: [],
      ignored: [],
      sources: expect.any(ManifestSources) as unknown,
      problems: [],
    });
  });
});
