// A file parsed document by document, continuing from its previous parse, equals the file parsed
// as one YAML stream: the same objects, values, schema errors, positions of every field a problem
// can be located at (line and column, in the file) and the same error for a broken file — after
// any sequence of edits that add, drop, reorder or change documents, with comments, CRLF line
// breaks, `--- # comment` and `--- |` markers, block and flow scalars, lists and broken or
// directive-holding files. And an unchanged document keeps its objects' values: the state sees
// them unchanged.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sourceFields } from "../../src/watchers/manifest-sources.js";
import {
  parseManifestFile,
  parseWholeManifestFile,
  sourceOf,
  splitDocuments,
  type ParsedFile,
} from "../../src/watchers/manifests.js";

const GROUP = "hostedcluster.densityops.com/v1alpha1";

const DOCS: readonly ((n: string) => string)[] = [
  (n) => `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata: {name: ${n}, namespace: y}\n`,
  (n) =>
    `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata:\n  name: ${n}\n  namespace: y\n` +
    `status:\n  addresses:\n    - {type: InternalIP, address: 10.0.0.7}\n`,
  (n) =>
    `# a comment\napiVersion: v1\nkind: Service\nmetadata: {name: ${n}, namespace: x}\nspec: {clusterIP: 10.0.0.1}\n`,
  (n) =>
    `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\n` +
    `spec:\n  networkConfig: {cidr: 192.0.2.0/24, gateway: 192.0.2.1, networkAttachmentDefinition: v}\n`,
  (n) =>
    `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\n` +
    `spec:\n  networkConfig: {cidr: nope, gateway: 192.0.2.1, networkAttachmentDefinition: v, colour: red}\n`,
  (n) => `apiVersion: ${GROUP}\nkind: Infra\nmetadata: {name: ${n}, namespace: x}\nstatus: {observedGeneration: 2}\n`,
  (n) =>
    `apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Namespace\n    metadata: {name: ${n}}\n` +
    `  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: ${n}, namespace: x}\n    data:\n      k: |\n        line\n`,
  (n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: x}\ndata: {a: "two\n  lines"}\n`,
  () => `# only a comment\n`,
  () => ``,
  () => `kind: [oops\n`,
  () => `- a sequence\n`,
  () => `apiVersion: v1\n`,
  (n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: x}\ndata:\n  k: |\n    x\n`,
];

/** How a document after the first starts. */
const MARKERS = ["---\n", "--- # next\n", "---\n\n", "--- \n"];
const NAMES = ["a", "b", "c"];

const doc = fc.tuple(fc.nat({ max: DOCS.length - 1 }), fc.constantFrom(...NAMES), fc.nat({ max: MARKERS.length - 1 }));

/** A file's text: documents, sometimes with CRLF breaks, a directive or an end marker. */
const text = fc
  .record({
    docs: fc.array(doc, { maxLength: 5 }),
    crlf: fc.boolean(),
    extra: fc.constantFrom("", "", "", "%YAML 1.2\n---\n", "...\n", "--- |\n  x\n"),
    at: fc.nat({ max: 5 }),
  })
  .map(({ docs, crlf, extra, at }) => {
    const parts = docs.map(
      ([d, n, m], i) => (i === 0 ? "" : (MARKERS[m] ?? "")) + (DOCS[d] as (n: string) => string)(n),
    );
    parts.splice(Math.min(at, parts.length), 0, extra);
    const joined = parts.join("");
    return crlf ? joined.replaceAll("\n", "\r\n") : joined;
  });

function comparable(f: ParsedFile): unknown {
  return {
    path: f.path,
    error: f.error,
    // An object of our kinds keeps its node, the positions of its fields or its document, by how it
    // was read: compared are the positions its fields are located at (objects of other kinds have
    // none).
    objects: f.objects.map((o) => {
      const { apiVersion, kind, namespace, name, identity, bucket, file, line, column, value } = o;
      const ours = bucket === "infras" || bucket === "attachments";
      return {
        ...{ apiVersion, kind, namespace, name, identity, bucket, file, line, column, value },
        ...{ errors: o.errors, unknown: o.unknown, raw: o.raw, statusOnly: o.statusOnly },
        located: ours ? sourceFields(sourceOf(o)) : o.node === undefined,
      };
    }),
  };
}

describe("a file parsed by document", () => {
  it("equals the whole file parsed at once, after every edit, continuing from the previous parse", () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 8 }), (versions) => {
        let previous: ParsedFile | undefined;
        for (const t of versions) {
          const file = { path: "m.yaml", text: t };
          const next = parseManifestFile(file, previous);
          expect(comparable(next)).toEqual(comparable(parseWholeManifestFile(file)));
          expect(comparable(parseManifestFile(file))).toEqual(comparable(next));
          previous = next;
        }
      }),
      { numRuns: 400 },
    );
  });

  it("keeps the values of unchanged documents, also when they move to other lines", () => {
    const machine = DOCS[1] as (n: string) => string;
    const first = parseManifestFile({ path: "m.yaml", text: [machine("a"), machine("b")].join("---\n") });
    const edited = [machine("a"), machine("c"), machine("b")].join("---\n");
    const next = parseManifestFile({ path: "m.yaml", text: edited }, first);
    const [a, b] = first.objects;
    const [a2, c, b2] = next.objects;
    expect(a2).toBe(a);
    expect(c?.name).toBe("c");
    expect(b2?.value).toBe(b?.value);
    // Down by c's 8 lines and its `---`.
    expect(b2?.line).toBe((b?.line ?? 0) + 9);
    expect(b2).not.toBe(b);
    expect(comparable(next)).toEqual(comparable(parseWholeManifestFile({ path: "m.yaml", text: edited })));
    // Another path's parse is not taken for this one's.
    const other = parseManifestFile({ path: "n.yaml", text: edited }, first);
    expect(other.objects[0]?.value).not.toBe(a?.value);
    expect(other.objects[0]?.file).toBe("n.yaml");
  });

  it("cuts at `---` lines only where documents are independent", () => {
    expect(splitDocuments("a: 1\n---\nb: 2\n--- # c\n")?.map((d) => [d.line, d.text])).toEqual([
      [0, "a: 1\n"],
      [1, "---\nb: 2\n"],
      [3, "--- # c\n"],
    ]);
    expect(splitDocuments("---\na: 1\n")?.map((d) => d.text)).toEqual(["---\na: 1\n"]);
    expect(splitDocuments("a: 1\n---x: 2\n")?.map((d) => d.text)).toEqual(["a: 1\n---x: 2\n"]);
    expect(splitDocuments("%YAML 1.2\n---\na: 1\n")).toBeUndefined();
    expect(splitDocuments("a: 1\n...\n---\nb: 2\n")).toBeUndefined();
    expect(splitDocuments("a: 1\r---\r")).toBeUndefined();
  });
});
