// The patched state equals the state assembled from scratch whenever every file can be assembled,
// after any sequence of file edits — duplicates, status-only documents, schema-refused objects,
// broken files and ignored kinds included; it reports problems exactly when assembling from
// scratch fails (then it keeps what the bad files defined before); and its keyed changes carry
// each state to the next.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ObjectChange } from "../../src/model/incremental/infras-read.js";
import type { ClusterState } from "../../src/model/types.js";
import { ManifestAssembly } from "../../src/watchers/manifest-assembly.js";
import {
  assembleManifests,
  parseManifestFile,
  type ManifestLoad,
  type ParsedFile,
} from "../../src/watchers/manifests.js";

const GROUP = "hostedcluster.densityops.com/v1alpha1";
const names = ["a", "b", "c"];

const docs: readonly ((name: string) => string)[] = [
  (n) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${n}, namespace: x}\nspec: {clusterIP: 10.0.0.1}\n`,
  (n) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${n}, namespace: x}\nspec: {clusterIP: 10.0.0.2}\n`,
  (n) => `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata: {name: ${n}, namespace: y}\n`,
  // A namespace that "y" prefixes: "y/…" sorts after "y-z/…" as text, before it by namespace.
  (n) => `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata: {name: ${n}, namespace: y-z}\n`,
  (n) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${n}}\n`,
  (n) =>
    `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\n` +
    `spec:\n  networkConfig: {cidr: 192.0.2.0/24, gateway: 192.0.2.1, networkAttachmentDefinition: v}\n`,
  (n) =>
    `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\n` +
    `spec:\n  networkConfig: {cidr: nope, gateway: 192.0.2.1, networkAttachmentDefinition: v}\n`,
  (n) =>
    `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\n` +
    `spec:\n  networkConfig: {cidr: 192.0.2.0/24, gateway: 192.0.2.1, networkAttachmentDefinition: v, colour: red}\n`,
  (n) => `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\nstatus: {observedGeneration: 2}\n`,
  (n) =>
    `apiVersion: ${GROUP}\nkind: InfraClusterAttachment\nmetadata: {name: ${n}, namespace: x}\n` +
    `spec: {infraRef: {name: a}, dns: {clusterName: ${n}, baseDomain: example.com}}\n`,
  (n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: x}\n`,
  () => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n`,
  () => `kind: [oops\n`,
];

/** One file's content: a few documents, each a template and a name. */
const content = fc
  .array(fc.tuple(fc.integer({ min: 0, max: docs.length - 1 }), fc.constantFrom(...names)), { maxLength: 3 })
  .map((ds) => ds.map(([d, n]) => (docs[d] as (name: string) => string)(n)).join("---\n"));

const paths = ["a.yaml", "b.yaml", "sub/c.yaml", "d.json"];
/** A step: some files get new content, some go (null). */
const step = fc.dictionary(fc.constantFrom(...paths), fc.option(content, { nil: null }), { minKeys: 1 });

const refsOf = (s: ClusterState) => [
  ...s.infras.map((o) => ({ kind: "Infra", namespace: o.metadata.namespace, name: o.metadata.name })),
  ...s.attachments.map((o) => ({
    kind: "InfraClusterAttachment",
    namespace: o.metadata.namespace,
    name: o.metadata.name,
  })),
  ...(s.invalid ?? []).map((i) => i.ref),
];

/** The load without its sources (compared through locate) and with decoded objects as plain data. */
function comparable(load: ManifestLoad): unknown {
  if (!load.ok) return load;
  const { sources, ...rest } = load;
  const located = refsOf(load.state).map((r) => [r, sources.locate(r, "spec"), sources.locate(r, "status")]);
  return { ...rest, located };
}

type Keyed = Map<string, unknown>;
const KINDS: readonly [ObjectChange["kind"], keyof ClusterState][] = [
  ["Infra", "infras"],
  ["InfraClusterAttachment", "attachments"],
  ["Machine", "machines"],
  ["Service", "services"],
  ["Namespace", "namespaces"],
];
function keyed(s: ClusterState | undefined): Keyed {
  const out: Keyed = new Map();
  for (const [kind, bucket] of KINDS)
    for (const o of (s?.[bucket] ?? []) as unknown as { metadata: { namespace: string; name: string } }[])
      out.set(`${kind} ${o.metadata.namespace}/${o.metadata.name}`, o);
  return out;
}

describe("ManifestAssembly", () => {
  it("equals assembleManifests while it can, has problems when it cannot, and its changes lead from state to state", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const assembly = new ManifestAssembly();
        const files = new Map<string, ParsedFile>();
        let readable: ClusterState | undefined;
        for (const s of steps) {
          const changed = new Map<string, ParsedFile | undefined>();
          for (const [path, text] of Object.entries(s)) {
            const parsed = text === null ? undefined : parseManifestFile({ path, text });
            changed.set(path, parsed);
            if (parsed === undefined) files.delete(path);
            else files.set(path, parsed);
          }
          const { load, changes } = assembly.update(changed);
          const full = assembleManifests([...files.values()]);
          if (!load.ok) throw new Error("a watched folder's load never fails for a file's sake");
          if (full.ok) expect(comparable(load)).toEqual(comparable(full));
          else expect(load.problems.length).toBeGreaterThan(0);
          if (full.ok) expect(load.problems).toEqual([]);
          const expected = keyed(readable);
          for (const c of changes) {
            const o = c.after ?? c.before;
            const key = `${c.kind} ${o?.metadata.namespace ?? ""}/${o?.metadata.name ?? ""}`;
            expect(expected.get(key)).toBe(c.before);
            if (c.after === undefined) expected.delete(key);
            else expected.set(key, c.after);
          }
          expect(expected).toEqual(keyed(load.state));
          // Identity, not only equality: the model compares objects by reference.
          for (const [k, v] of keyed(load.state)) expect(expected.get(k)).toBe(v);
          readable = load.state;
        }
      }),
      { seed: 16, numRuns: 300 },
    );
  });

  it("keeps an unchanged bucket's array, so the model sees it did not change", () => {
    const assembly = new ManifestAssembly();
    const svc = (ip: string) =>
      `apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: x}\nspec: {clusterIP: ${ip}}\n`;
    const machine = `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata: {name: m, namespace: y}\n`;
    const first = assembly.update(
      new Map([
        ["s.yaml", parseManifestFile({ path: "s.yaml", text: svc("10.0.0.1") })],
        ["m.yaml", parseManifestFile({ path: "m.yaml", text: machine })],
      ]),
    );
    const second = assembly.update(new Map([["s.yaml", parseManifestFile({ path: "s.yaml", text: svc("10.0.0.2") })]]));
    if (!first.load.ok || !second.load.ok) throw new Error("unreadable");
    expect(second.load.state.machines).toBe(first.load.state.machines);
    expect(second.load.state.invalid).toBe(first.load.state.invalid);
    expect(second.load.files).toBe(first.load.files);
    expect(second.load.state.services).not.toBe(first.load.state.services);
  });
});
