// The plain read (js-yaml) against the yaml library, which reads every document it declines: a
// document the plain read takes must mean the same there (the same value, numbers and nulls
// resolved by YAML 1.2's core schema) and parse there without errors, and its content must start
// where the yaml library's does. Documents are random values written by both libraries, plain
// scalars from YAML's edge cases, and those documents edited at random (most edits break them).
import fc from "fast-check";
import { dump } from "js-yaml";
import { describe, expect, it } from "vitest";
import { isMap, isNode, isScalar, isSeq, LineCounter, parseAllDocuments, stringify } from "yaml";
import { contentStart, plainDocument } from "../../src/watchers/plain-yaml.js";
import { assembleManifests, parseManifestFile } from "../../src/watchers/manifests.js";

/** The yaml library's reading of one document: its value, or that it has errors. */
function oracle(text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return { ok: true, value: null };
  const [doc, ...more] = docs;
  if (doc === undefined) return { ok: true, value: null };
  if (more.length > 0 || doc.errors.length > 0 || doc.warnings.length > 0) return { ok: false };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) ?? null };
  } catch {
    return { ok: false };
  }
}

/** Checks one document; says whether the plain read took it. */
function agrees(text: string): boolean {
  const plain = plainDocument(text);
  if (plain === undefined) return false;
  const expected = oracle(text);
  expect(expected.ok, `the yaml library refuses what the plain read took:\n${text}`).toBe(true);
  if (expected.ok) expect(plain.value ?? null, text).toEqual(expected.value);
  return true;
}

/** Plain scalars at the edges of YAML 1.1, 1.2 and js-yaml's own schema. */
const SCALARS = [
  ...[
    "1_000",
    "0b101",
    "0o17",
    "0O17",
    "0o",
    "0o8",
    "0x1F",
    "0X1F",
    "0x",
    "0xg",
    "0777",
    "08",
    "-0",
    "+0",
    "+12",
    "-12",
  ],
  ...["1.", ".5", "+.5", "-.5e-3", "1e3", "1E+3", "1e", "1.5e", "1__0", "1,000", "12:30", "190:20:30", "2001-12-14"],
  ...["2001-12-14T21:59:43.10-05:00", ".inf", "-.Inf", "+.INF", ".NaN", "nan", "NaN", "inf", "-inf", ".iNf"],
  ...["~", "null", "Null", "NULL", "nULL", "", "true", "True", "TRUE", "tRUE", "false", "yes", "no", "on", "off"],
  ...["y", "n", "Y", "=", "1.0", "100000000000000000000", "9007199254740993", "1e400", "0.1e-400", "-", "--"],
];

const key = fc.stringMatching(/^[a-z][a-zA-Z0-9_./-]{0,12}$/);
const values = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 4 },
    fc.constantFrom(...SCALARS),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "grapheme", maxLength: 20 }),
    // Multi-line text, which both libraries write as block scalars.
    fc
      .array(fc.constantFrom("a", " ", "  ", "\n", "'", '"', "#", ": ", "- ", "[", "}", "|"), { maxLength: 30 })
      .map((parts) => parts.join("")),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(key, tie("value"), { maxKeys: 6 }),
  ),
}));
const documents = fc
  .tuple(fc.dictionary(key, values.value, { minKeys: 1, maxKeys: 8 }), fc.nat(5))
  .map(([v, style]) => {
    switch (style) {
      case 0:
        return stringify(v);
      case 1:
        return stringify(v, { collectionStyle: "flow" });
      case 2:
        return stringify(v, { defaultStringType: "QUOTE_SINGLE", lineWidth: 20 });
      case 3:
        return dump(v, { noRefs: true });
      case 4:
        return dump(v, { flowLevel: 1, lineWidth: 30 });
      default:
        return `# leading comment\n---\n${stringify(v, { indent: 4 })}`;
    }
  });
const plainLines = fc
  .array(fc.tuple(fc.oneof(key, fc.constantFrom(...SCALARS)), fc.constantFrom(...SCALARS)), {
    minLength: 1,
    maxLength: 8,
  })
  .map((pairs) => pairs.map(([k, v]) => `${k === "" ? "x" : k}: ${v}\n`).join(""));

/** A document with one to three random edits: characters YAML reads as syntax, put in or taken out. */
const edited = fc
  .tuple(
    fc.oneof(documents, plainLines),
    fc.array(fc.tuple(fc.nat(), fc.nat(40), fc.boolean()), { minLength: 1, maxLength: 3 }),
  )
  .map(([text, edits]) => {
    const syntax = [
      ": ",
      "-",
      "- ",
      "#",
      " #",
      "'",
      '"',
      "[",
      "]",
      "{",
      "}",
      ",",
      "\n",
      "\n  ",
      "?",
      "|",
      ">",
      "%",
      "@",
      "`",
      " ",
      "  ",
      "\\",
      ":",
    ];
    let out = text;
    for (const [at, which, remove] of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      out = remove
        ? out.slice(0, i) + out.slice(i + 1)
        : out.slice(0, i) + (syntax[which % syntax.length] ?? "") + out.slice(i);
    }
    return out;
  });

describe("the plain read against the yaml library", () => {
  it("reads random documents as the yaml library does, and takes most of them", () => {
    let taken = 0;
    fc.assert(
      fc.property(documents, (text) => {
        if (agrees(text)) taken += 1;
      }),
      { numRuns: 600 },
    );
    // Random strings hold `&`, `*`, `!`, tabs, nested flow collections and lines of spaces, which are declined.
    expect(taken).toBeGreaterThan(120);
  });

  it("resolves YAML 1.2 core schema scalars, not js-yaml's or YAML 1.1's", () => {
    let taken = 0;
    fc.assert(
      fc.property(plainLines, (text) => {
        if (agrees(text)) taken += 1;
      }),
      { numRuns: 600 },
    );
    // Keys that were numbers, nulls or booleans are declined; a line of string keys is taken.
    expect(taken).toBeGreaterThan(60);
    for (const s of SCALARS) {
      if (oracle(`a: ${s}\n`).ok) expect(agrees(`a: ${s}\n`), `a: ${s}`).toBe(true);
      // As a key: declined, or read as the yaml library reads it (agrees asserts that).
      agrees(`${s === "" ? "''" : s}: a\n`);
    }
  });

  it("never takes a document the yaml library refuses, or reads one differently, after random edits", () => {
    let taken = 0;
    let refused = 0;
    fc.assert(
      fc.property(edited, (text) => {
        if (agrees(text)) taken += 1;
        else if (!oracle(text).ok) refused += 1;
      }),
      { numRuns: Number(process.env["PLAIN_YAML_RUNS"] ?? 3000) },
    );
    expect(taken).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });

  it("declines what only the yaml library reads as the manifests need it, or what js-yaml reads another way", () => {
    for (const text of [
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "a: !custom 1\n",
      "<<: {a: 1}\nb: 2\n",
      "? [a]\n: 1\n",
      "a:\t1\n",
      "\uFEFFa: 1\n",
      "__proto__: {a: 1}\n",
      `${"k".repeat(1100)}: 1\n`,
      "a: 1\na: 2\n",
      "a: [1\n",
      "{ a: 1, [b] }\n",
      "{ a: , {b: 1} }\n",
      "[ [a]: 1 ]\n",
      "{a: 1}#c\n",
      "---a: 1\n",
      "a:\n  - x\n  -\n",
      "a:\n  - - x\n",
      "a:\n  - # x\n",
      // Found by the random edits: js-yaml read each of these, the yaml library refuses them.
      "\\'a': 'NULL\n'aa': true\n",
      "t: [\nnull, 1]\no: false\n",
      "f: {q: null, g: \nnull}\n",
      "'k':\n  -'a: '\n'b': null\n",
      "s--.pf': 'true\n'y': 'x y'\n",
      // Found by the random edits of our kinds' documents: js-yaml folds the lone \r into a space.
      "a: ['y\r']\n",
      'a: "y\rz"\n',
    ])
      expect(plainDocument(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe("where a document's content starts", () => {
  const starts = fc
    .tuple(
      fc.array(fc.constantFrom("", "# c", "  # indented comment", "   ", "---", "--- # marker with a comment"), {
        maxLength: 5,
      }),
      fc.constantFrom("a: 1", "  a: 1", "{a: 1}", "'a': 1", "- 1"),
    )
    .map(([before, content]) => [...before, content, "b: 2"].join("\n"));

  it("is the yaml library's start of the document's contents", () => {
    fc.assert(
      fc.property(starts, (text) => {
        const lc = new LineCounter();
        const docs = parseAllDocuments(text, { lineCounter: lc });
        const at = contentStart(text);
        if (!Array.isArray(docs) || docs.length !== 1 || docs[0]?.errors.length !== 0) return;
        const offset = docs[0].contents?.range[0];
        if (offset === undefined) return;
        const pos = lc.linePos(offset);
        expect(at).toEqual({ line: pos.line, column: pos.col });
      }),
      { numRuns: 400 },
    );
  });

  it("is not guessed when content follows the marker", () => {
    expect(contentStart("--- {a: 1}\n")).toBeUndefined();
    expect(contentStart("# c\n\n  b: 1\n")).toEqual({ line: 3, column: 3 });
  });
});

describe("a manifest file read plainly", () => {
  const OTHER_KINDS: readonly ((n: string) => string)[] = [
    (n) => `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata: {name: ${n}, namespace: y}\n`,
    (n) =>
      `apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata:\n  name: ${n}\n  namespace: y\n` +
      `status:\n  addresses:\n    - type: InternalIP\n      address: 10.0.0.7\n`,
    (n) => `apiVersion: v1\nkind: Service\nmetadata: {name: ${n}, namespace: x}\nspec: {clusterIP: 10.0.0.1}\n`,
    (n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, namespace: x}\ndata:\n  k: |\n    line\n`,
    (n) => `"apiVersion": "v1"\n"kind": "Namespace"\n"metadata": {"name": "${n}"}\n`,
  ];
  /** A file of the drawn documents, each after its marker and what comes before it; CRLF breaks if drawn. */
  const fileOf = <D extends { readonly before: string; readonly marker: string }>(
    docs: readonly D[],
    crlf: boolean,
    body: (d: D) => string,
  ): string => {
    const text = docs.map((d, i) => `${i === 0 ? "" : d.marker}${d.before}${body(d)}`).join("");
    return crlf ? text.replaceAll("\n", "\r\n") : text;
  };
  const indented = (text: string, indent: string): string => text.replace(/^(?=.)/gm, indent);
  /** Where a document sits in its file: what comes before it, its marker, its indentation. */
  const PLACED = {
    before: fc.constantFrom("", "\n", "# a comment\n", "\n# two\n\n"),
    marker: fc.constantFrom("---\n", "--- # next\n", "---\n\n"),
    indent: fc.constantFrom("", "", "  "),
  };
  const files = fc
    .record({
      docs: fc.array(
        fc.record({
          kind: fc.nat({ max: OTHER_KINDS.length - 1 }),
          name: fc.constantFrom("a", "b", "c"),
          ...PLACED,
        }),
        { minLength: 1, maxLength: 5 },
      ),
      crlf: fc.boolean(),
    })
    .map(({ docs, crlf }) =>
      fileOf(docs, crlf, ({ kind, name, indent }) =>
        indented((OTHER_KINDS[kind] as (n: string) => string)(name), indent),
      ),
    );

  it("puts each object where the yaml library puts its document's contents, in files of several documents", () => {
    fc.assert(
      fc.property(files, (text) => {
        const parsed = parseManifestFile({ path: "f.yaml", text });
        expect(parsed.error).toBeUndefined();
        const lc = new LineCounter();
        const docs = parseAllDocuments(text, { lineCounter: lc });
        expect(Array.isArray(docs)).toBe(true);
        if (!Array.isArray(docs)) return;
        const expected = docs.map((d) => {
          const pos = lc.linePos(d.contents?.range[0] ?? 0);
          const value = d.toJS() as { kind: string; metadata: { name: string } };
          return [value.kind, value.metadata.name, pos.line, pos.col];
        });
        expect(parsed.objects.map((o) => [o.kind, o.name, o.line, o.column])).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  const GROUP_VERSION = "hostedcluster.densityops.com/v1alpha1";
  const OUR_KINDS: readonly ((n: string) => string)[] = [
    (n) =>
      `apiVersion: ${GROUP_VERSION}\nkind: Infra\nmetadata:\n  name: ${n}\n  namespace: x\nspec:\n` +
      `  networkConfig:\n    cidr: 192.0.2.0/24\n    gateway: 192.0.2.1\n    networkAttachmentDefinition: v\n` +
      `    dnsServers:\n      - 192.0.2.53\n      - 192.0.2.54\n`,
    (n) =>
      `{apiVersion: ${GROUP_VERSION}, kind: Infra, metadata: {name: ${n}, namespace: x},\n` +
      ` spec: {networkConfig: {cidr: nope, gateway: 192.0.2.1, networkAttachmentDefinition: v}}}\n`,
    (n) => `kind: Infra\nmetadata:\n  name: ${n}\n  namespace: x\napiVersion: "${GROUP_VERSION}"\n`,
    (n) =>
      `"apiVersion": "${GROUP_VERSION}"\n"kind": "InfraClusterAttachment"\n"metadata": {"name": "${n}", "namespace": "x"}\n` +
      `"spec": {"infraRef": {"name": "a"}, "dns": {"clusterName": "${n}", "baseDomain": "example.com"}}\n`,
    (n) =>
      `# an attachment\napiVersion: ${GROUP_VERSION}\nkind: InfraClusterAttachment\nmetadata: {name: ${n}, namespace: x}\n` +
      `spec:\n  infraRef:\n    name: a\n  colour: red\n  dns:\n    clusterName: ${n}\n    baseDomain: Example.COM\n`,
  ];
  const ourFiles = fc
    .record({
      docs: fc.uniqueArray(
        fc.record({
          kind: fc.nat({ max: OUR_KINDS.length - 1 }),
          name: fc.constantFrom("a", "b", "c"),
          ...PLACED,
          other: fc.nat({ max: OTHER_KINDS.length - 1 }),
        }),
        { minLength: 1, maxLength: 4, selector: (d) => d.name },
      ),
      crlf: fc.boolean(),
    })
    .map(({ docs, crlf }) =>
      fileOf(docs, crlf, ({ kind, name, indent, other }) => {
        const ours = indented((OUR_KINDS[kind] as (n: string) => string)(name), indent);
        return `${ours}---\n${(OTHER_KINDS[other] as (n: string) => string)(name)}`;
      }),
    );

  /** Every field path of a document's mapping and where the yaml library puts it: a key, or a sequence item. */
  function fieldsOf(node: unknown, lc: LineCounter, path: string, out: Map<string, [number, number]>): void {
    const at = (n: { range?: [number, number, number] | null }): [number, number] => {
      const pos = lc.linePos(n.range?.[0] ?? 0);
      return [pos.line, pos.col];
    };
    if (isMap(node))
      for (const pair of node.items) {
        if (!isScalar(pair.key) || typeof pair.key.value !== "string") continue;
        const field = path === "" ? pair.key.value : `${path}.${pair.key.value}`;
        out.set(field, at(pair.key));
        fieldsOf(pair.value, lc, field, out);
      }
    if (isSeq(node))
      node.items.forEach((item, i) => {
        if (!isNode(item)) return;
        out.set(`${path}[${String(i)}]`, at(item));
        fieldsOf(item, lc, `${path}[${String(i)}]`, out);
      });
  }

  it("reads our kinds plainly, and locates each of their fields where the yaml library puts it", () => {
    let plain = 0;
    fc.assert(
      fc.property(ourFiles, (text) => {
        const parsed = parseManifestFile({ path: "f.yaml", text });
        expect(parsed.error).toBeUndefined();
        const ours = parsed.objects.filter((o) => o.bucket === "infras" || o.bucket === "attachments");
        plain += ours.filter((o) => o.document !== undefined).length;
        const load = assembleManifests([parsed]);
        if (!load.ok) throw new Error(load.error.message);
        const lc = new LineCounter();
        const docs = parseAllDocuments(text, { lineCounter: lc });
        if (!Array.isArray(docs)) throw new Error("no documents");
        let checked = 0;
        for (const d of docs) {
          const value = d.toJS() as { apiVersion: string; kind: string; metadata: { name: string; namespace: string } };
          if (!value.apiVersion.startsWith("hostedcluster.")) continue;
          const ref = { kind: value.kind, namespace: value.metadata.namespace, name: value.metadata.name };
          const start = lc.linePos(d.contents?.range[0] ?? 0);
          // The object itself ("" is no field), then each field.
          const expected = new Map<string, [number, number]>([["", [start.line, start.col]]]);
          fieldsOf(d.contents, lc, "", expected);
          for (const [field, [line, column]] of expected) {
            expect(load.sources.locate(ref, field), `${field} in\n${text}`).toEqual({ file: "f.yaml", line, column });
            checked += 1;
          }
        }
        expect(checked).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
    // Most of those documents are read plainly, so the lazy positions are what was checked.
    expect(plain).toBeGreaterThan(300);
  });

  it("gives each object the line and column the yaml library gives it", () => {
    const text = [
      "# services",
      "apiVersion: v1",
      "kind: Service",
      "metadata: {name: a, namespace: x}",
      "---",
      "",
      "apiVersion: cluster.x-k8s.io/v1beta1",
      "kind: Machine",
      "metadata:",
      "  name: m",
      "  namespace: y",
      "--- # next",
      "  apiVersion: v1",
      "  kind: ConfigMap",
      "  metadata: {name: n, namespace: z}",
      "",
    ].join("\n");
    const parsed = parseManifestFile({ path: "f.yaml", text });
    expect(parsed.error).toBeUndefined();
    expect(parsed.objects.map((o) => [o.kind, o.line, o.column])).toEqual([
      ["Service", 2, 1],
      ["Machine", 7, 1],
      ["ConfigMap", 13, 3],
    ]);
    const lc = new LineCounter();
    const docs = parseAllDocuments(text, { lineCounter: lc });
    expect(Array.isArray(docs)).toBe(true);
    if (!Array.isArray(docs)) return;
    expect(docs.map((d) => lc.linePos(d.contents?.range[0] ?? 0)).map((p) => [p.line, p.col])).toEqual(
      parsed.objects.map((o) => [o.line, o.column]),
    );
    expect(parsed.objects.map((o) => o.value)).toEqual(docs.map((d) => d.toJS() as unknown));
  });
});
