// The manifest-directory source: YAML/JSON files on disk → ClusterState, the same state the
// informers build from a cluster. Input problems in our own kinds become `invalid` entries (the
// model turns them into status conditions); only unreadable input fails the whole load.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import {
  isMap,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Document,
  type Node as YamlNode,
  type YAMLError,
} from "yaml";
import { decodeResource, kindDefinition, unknownKindMessage } from "../api/validate.js";
import { GROUP, type Infra, type InfraClusterAttachment, type ObjectMeta } from "../api/schema.js";
import type { HostedCluster, Machine, Namespace, NodePool, Service, VirtualMachineInstance } from "../api/external.js";
import type { ClusterState, InvalidObject } from "../model/types.js";
import {
  ManifestSources,
  shiftedFields,
  type FieldPositions,
  type LinePositions,
  type ObjectSource,
} from "./manifest-sources.js";
import { DEFAULT_MAX_MANIFEST_BYTES, errnoText, readManifestText } from "./manifest-file-read.js";
import { listManifestFiles } from "./manifest-tree.js";
import { contentStart, plainDocument } from "./plain-yaml.js";

/** Why a manifest directory could not be read: the file (relative to the directory) and 1-based position. */
export interface ManifestError {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

/** An object read from the directory that the model does not consume (generated children, unknown kinds). */
export interface IgnoredObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  file: string;
}

/**
 * The result of reading a manifest directory: the cluster state it describes, or the first
 * unreadable input. A watched folder (manifest-assembly.ts) is never unreadable for one file's
 * sake: that file's problem is in `problems`, and what it defined at its last good read stays.
 */
export type ManifestLoad =
  | {
      ok: true;
      state: ClusterState;
      files: string[];
      ignored: IgnoredObject[];
      sources: ManifestSources;
      /** Files that cannot be read and objects that cannot be assembled, by file and line; none from assembleManifests. */
      problems: readonly ManifestError[];
    }
  | { ok: false; error: ManifestError };

/** One file's content, `path` as it should appear in messages. */
export interface ManifestFile {
  path: string;
  text: string;
}

const DEFAULT_NAMESPACE = "default";

/** "file:line:column: message", the form the CLI prints for unreadable input. */
export function formatManifestError(e: ManifestError): string {
  const pos = e.line === undefined ? "" : `:${e.line}${e.column === undefined ? "" : `:${e.column}`}`;
  return `${e.file}${pos}: ${e.message}`;
}

/** "3 objects of kinds DHCPServer, Foo" for a log line; "" when nothing was ignored. */
export function summarizeIgnored(ignored: readonly IgnoredObject[]): string {
  if (ignored.length === 0) return "";
  const kinds = [...new Set(ignored.map((o) => o.kind))].sort();
  return `${ignored.length} object${ignored.length === 1 ? "" : "s"} of kind${kinds.length === 1 ? "" : "s"} ${kinds.join(", ")}`;
}

// ---------------------------------------------------------------- parsing (pure)

class LoadError extends Error {
  constructor(readonly detail: ManifestError) {
    super(detail.message);
  }
}

interface Located {
  obj: Record<string, unknown>;
  file: string;
  line: number;
  column: number;
  /** The object's YAML node and its positions, for positions of fields. */
  node: YamlNode | undefined;
  lines: LinePositions;
  /** Our kinds read plainly: their document, parsed again only when a field is located. */
  document?: DocumentText;
}

export type Bucket =
  "infras" | "attachments" | "hostedClusters" | "nodePools" | "machines" | "vmis" | "services" | "namespaces";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The yaml library's message without its " at line N, column M:" suffix and code frame (we report those as fields). */
function plainMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+:[\s\S]*$/, "").trim();
}

function positionOf(node: YamlNode | null | undefined, lc: LinePositions): { line: number; column: number } {
  const pos = lc.linePos(node?.range?.[0] ?? 0);
  return { line: pos.line, column: pos.col };
}

/** Splits one file into its top-level objects, expanding `kind: *List` documents. */
function objectsOf(file: ManifestFile): Located[] {
  const plain = plainObjectsOf(file);
  if (plain !== undefined) return plain;
  const lc = new LineCounter();
  const docs = parseAllDocuments(file.text, { lineCounter: lc, prettyErrors: true });
  // parseAllDocuments returns an EmptyStream (not an array) for input without documents.
  if (!Array.isArray(docs)) return [];
  const out: Located[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new LoadError(yamlError(doc.errors, file));
    const value = toJs(doc, file.path, lc);
    if (value === null || value === undefined) continue;
    const at = positionOf(doc.contents, lc);
    if (!isRecord(value)) {
      throw new LoadError({
        file: file.path,
        ...at,
        message: `document is a ${describeValue(value)}, not a mapping (a Kubernetes object)`,
      });
    }
    if (typeof value["kind"] === "string" && value["kind"].endsWith("List") && "items" in value) {
      for (const item of listItems(doc, value, file.path, lc)) out.push(item);
    } else {
      out.push({ obj: value, file: file.path, ...at, node: doc.contents ?? undefined, lines: lc });
    }
  }
  return out;
}

/**
 * The file's objects read plainly (plain-yaml.ts), when every document is a single object: no
 * syntax tree is built. An object of our kinds keeps its document, which the yaml library parses
 * again only when one of its fields is located (ManifestSources). Undefined sends the whole file
 * to the yaml library: a `kind: *List`, or a kind of our group that does not exist (its error
 * points at the `kind` field).
 */
function plainObjectsOf(file: ManifestFile): Located[] | undefined {
  const documents = splitDocuments(file.text);
  if (documents === undefined) return undefined;
  const out: Located[] = [];
  for (const d of documents) {
    const read = plainDocument(d.text);
    if (read === undefined) return undefined;
    const obj = read.value;
    if (obj === null || obj === undefined) continue;
    if (!isRecord(obj) || typeof obj["apiVersion"] !== "string" || typeof obj["kind"] !== "string") return undefined;
    if (obj["kind"].endsWith("List") && "items" in obj) return undefined;
    const ours = groupOf(obj["apiVersion"]) === GROUP;
    if (ours && kindDefinition(obj["kind"]) === undefined) return undefined;
    const at = contentStart(d.text);
    if (at === undefined) return undefined;
    const where = { obj, file: file.path, line: d.line + at.line, column: at.column, node: undefined, lines: NO_LINES };
    out.push(ours ? { ...where, document: d } : where);
  }
  return out;
}

/**
 * The first YAML error at the line to edit. A line indented deeper than its siblings continues the
 * previous value, and the yaml library reports that value's line; the line at fault is where the
 * multi-line key it made ends.
 */
function yamlError(errors: readonly YAMLError[], file: ManifestFile): ManifestError {
  const [first] = errors;
  const pos = first?.linePos?.[0];
  const message = plainMessage(first?.message ?? "invalid YAML");
  const multiline = errors.find((e) => e.code === "MULTILINE_IMPLICIT_KEY")?.linePos;
  if (
    first?.code === "BLOCK_AS_IMPLICIT_KEY" &&
    multiline?.[1] !== undefined &&
    multiline[1].line > multiline[0].line
  ) {
    const line = multiline[1].line;
    const text = file.text.split("\n")[line - 1] ?? "";
    return {
      file: file.path,
      line,
      column: text.length - text.trimStart().length + 1,
      message: `${message}: this line is indented deeper than the key above it, so it continues the value on line ${String(multiline[0].line)}`,
    };
  }
  return { file: file.path, ...(pos === undefined ? {} : { line: pos.line, column: pos.col }), message };
}

function toJs(doc: Document, file: string, lc: LineCounter): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // Unresolved or excessive aliases surface only here.
    throw new LoadError({ file, ...positionOf(doc.contents, lc), message: e instanceof Error ? e.message : String(e) });
  }
}

function listItems(doc: Document, list: Record<string, unknown>, file: string, lc: LineCounter): Located[] {
  const items = list["items"];
  const itemsNode = isMap(doc.contents) ? doc.contents.get("items", true) : undefined;
  if (items === null) return [];
  if (!Array.isArray(items)) {
    throw new LoadError({
      file,
      ...positionOf(itemsNode, lc),
      message: `${String(list["kind"])}.items must be a sequence`,
    });
  }
  const nodes = isSeq(itemsNode) ? itemsNode.items : [];
  return items.map((item: unknown, i) => {
    const at = positionOf(nodes[i] as YamlNode | undefined, lc);
    if (!isRecord(item))
      throw new LoadError({ file, ...at, message: `items[${i}] is a ${describeValue(item)}, not a mapping` });
    return { obj: item, file, ...at, node: nodes[i] as YamlNode | undefined, lines: lc };
  });
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return "sequence";
  if (v === null) return "null";
  return typeof v === "object" ? "mapping" : `${typeof v} scalar`;
}

const groupOf = (apiVersion: string): string =>
  apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";

/** Where an object of this group/kind goes in ClusterState; undefined = not read by the model. */
function bucketOf(group: string, kind: string): Bucket | undefined {
  switch (`${group}/${kind}`) {
    case `${GROUP}/Infra`:
      return "infras";
    case `${GROUP}/InfraClusterAttachment`:
      return "attachments";
    case "hypershift.openshift.io/HostedCluster":
      return "hostedClusters";
    case "hypershift.openshift.io/NodePool":
      return "nodePools";
    case "cluster.x-k8s.io/Machine":
      return "machines";
    case "kubevirt.io/VirtualMachineInstance":
      return "vmis";
    case "/Service":
      return "services";
    case "/Namespace":
      return "namespaces";
    default:
      return undefined;
  }
}

/**
 * Checks identity fields and applies kubectl's namespace default; returns a copy. Objects the
 * model reads need a name; ignored ones (a kustomization.yaml, say) may lack metadata.
 */
function normalize(
  l: Located,
): Located & { apiVersion: string; kind: string; meta: ObjectMeta; bucket: Bucket | undefined } {
  const where = { file: l.file, line: l.line, column: l.column };
  const { apiVersion, kind, metadata } = l.obj;
  if (typeof apiVersion !== "string" || apiVersion === "")
    throw new LoadError({ ...where, message: "object has no apiVersion" });
  if (typeof kind !== "string" || kind === "") throw new LoadError({ ...where, message: "object has no kind" });
  const group = groupOf(apiVersion);
  // A misspelled kind of ours would otherwise be ignored like another group's object: the Infra
  // silently gone (serve keeps the file's last good version instead, render refuses to guess).
  if (group === GROUP && kindDefinition(kind) === undefined) {
    const kindNode = isMap(l.node) ? l.node.get("kind", true) : undefined;
    throw new LoadError({
      file: l.file,
      ...positionOf(kindNode ?? l.node, l.lines),
      message: `kind: ${unknownKindMessage(kind)}`,
    });
  }
  const bucket = bucketOf(group, kind);
  if (metadata !== undefined && !isRecord(metadata))
    throw new LoadError({ ...where, message: `${kind}: metadata must be a mapping` });
  const name = metadata?.["name"] ?? "";
  if (typeof name !== "string") throw new LoadError({ ...where, message: `${kind}: metadata.name must be a string` });
  if (name === "" && bucket !== undefined) throw new LoadError({ ...where, message: `${kind} has no metadata.name` });
  const ns = metadata?.["namespace"];
  if (ns !== undefined && typeof ns !== "string")
    throw new LoadError({ ...where, message: `${kind} ${name}: metadata.namespace must be a string` });
  // Namespaces are cluster-scoped: "" as client-go has it, never "default".
  const namespace = bucket === "namespaces" ? "" : ns === undefined || ns === "" ? DEFAULT_NAMESPACE : ns;
  const meta = { ...metadata, name, namespace } as ObjectMeta;
  return { ...l, obj: { ...l.obj, metadata: meta }, apiVersion, kind, meta, bucket };
}

/**
 * A document of our kinds with a status and no spec gives the status of the object of that kind and
 * name defined in another file: serve's stand-in for what a controller writes (e.g. the
 * appsIngressStatus of examples/apps-ingress/serve-apps-status.yaml), kept apart from the spec so
 * `kubectl apply` of the spec carries no status.
 */
function isStatusOnly(obj: Record<string, unknown>): boolean {
  return "status" in obj && !("spec" in obj);
}

function describeObject(o: { kind: string; namespace: string; name: string }): string {
  return `${o.kind} ${o.namespace === "" ? "" : `${o.namespace}/`}${o.name}`;
}

function duplicate(o: ParsedObject, first: ParsedObject): ManifestError {
  const message = `duplicate ${describeObject(o)}: also defined in ${first.file}:${String(first.line)}`;
  return { file: o.file, line: o.line, column: o.column, message };
}

function twice(o: ParsedObject, other: ParsedObject): ManifestError {
  const message = `status of ${describeObject(o)} given twice: also in ${other.file}:${String(other.line)}`;
  return { file: o.file, line: o.line, column: o.column, message };
}

/**
 * Why the documents of one identity cannot be assembled, as assembleManifests says it (at the
 * later one in path order), or undefined: defined twice, a status given twice, or a status-only
 * document without its object.
 */
export function identityProblem(
  objects: readonly ParsedObject[],
  statuses: readonly ParsedObject[],
): ManifestError | undefined {
  const byPlace = (a: ParsedObject, b: ParsedObject): number => compare(a.file, b.file) || a.line - b.line;
  const [o, second] = [...objects].sort(byPlace);
  const [status, again] = [...statuses].sort(byPlace);
  if (o !== undefined && second !== undefined) return duplicate(second, o);
  if (status !== undefined && again !== undefined) return twice(again, status);
  if (status === undefined) return undefined;
  if (o === undefined)
    return {
      file: status.file,
      line: status.line,
      column: status.column,
      message: `status-only ${describeObject(status)}: no manifest defines its spec`,
    };
  return o.raw !== undefined && "status" in o.raw ? twice(status, o) : undefined;
}

/** The order of every bucket of the state. */
export const byNamespaceName = <T extends { metadata: { namespace: string; name: string } }>(a: T, b: T): number =>
  compare(a.metadata.namespace, b.metadata.namespace) || compare(a.metadata.name, b.metadata.name);
export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One object of a file, checked and (our own kinds) decoded: what a file contributes to the state. */
export interface ParsedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** "<group>/<kind> <namespace>/<name>": two objects with one identity are a duplicate. */
  readonly identity: string;
  readonly bucket: Bucket | undefined;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /**
   * Our kinds: the object's YAML node, for the positions of its fields; from the parse worker
   * (./manifest-parse-pool.ts) none, `fields` instead. Other kinds: none.
   */
  readonly node: YamlNode | undefined;
  readonly lines: LinePositions;
  /** Our kinds parsed in the parse worker: the positions of their fields. */
  readonly fields?: FieldPositions;
  /** Our kinds read plainly: their document (its first line in the file), for the positions of their fields. */
  readonly document?: DocumentText;
  /** What goes into the state: the object, or for our kinds the decoded one (undefined when refused). */
  readonly value: unknown;
  readonly errors: InvalidObject["errors"];
  readonly unknown: InvalidObject["errors"];
  /** Our kinds: the object as written, decoded again when a status-only document joins it. */
  readonly raw?: Record<string, unknown>;
  /** Our kinds: a status-only document (isStatusOnly), not decoded on its own. */
  readonly statusOnly?: true;
}

/** One file parsed on its own: its objects, or why it cannot be read. Pure. */
export interface ParsedFile {
  readonly path: string;
  /** Its objects in file order; with an error, those before the one at fault. */
  readonly objects: readonly ParsedObject[];
  readonly error?: ManifestError;
}

/**
 * One file's objects. With `previous` (the same path's last parse), a document whose text did not
 * change keeps its parse — its objects' values stay the same objects, so the state sees them
 * unchanged — and only the edited documents are parsed (the yaml package parses ~1 MB/s: a file of
 * 100 Machines costs tens of milliseconds whole). Equal to parsing the whole file
 * (test/watchers/manifest-documents.property.test.ts), which is what a file with directives or a
 * broken document gets.
 */
export function parseManifestFile(file: ManifestFile, previous?: ParsedFile): ParsedFile {
  const plan = plannedParse(file, previous);
  if (plan === undefined) return parseWholeManifestFile(file);
  for (const text of plan.missing) {
    const objects = parseDocument(file.path, text);
    if (objects === undefined) return parseWholeManifestFile(file);
    plan.parses.set(text, documentParse(objects));
  }
  return placedFile(file.path, plan);
}

/** A file's documents and their parses so far (kept from the previous parse); `missing`: the texts still to parse. */
export interface PlannedParse {
  readonly documents: readonly DocumentText[];
  readonly parses: Map<string, DocumentParse>;
  readonly missing: readonly string[];
}

/** What parseManifestFile has left to parse of this file; undefined when it is parsed whole. */
export function plannedParse(file: ManifestFile, previous: ParsedFile | undefined): PlannedParse | undefined {
  const documents = splitDocuments(file.text);
  if (documents === undefined) return undefined;
  const kept = previous === undefined || previous.path !== file.path ? undefined : documentParses.get(previous);
  const parses = new Map<string, DocumentParse>();
  const missing = new Set<string>();
  for (const doc of documents) {
    const parse = kept?.get(doc.text);
    if (parse !== undefined) parses.set(doc.text, parse);
    else missing.add(doc.text);
  }
  return { documents, parses, missing: [...missing] };
}

/** The file once every document of the plan is parsed. */
export function placedFile(path: string, plan: PlannedParse): ParsedFile {
  const objects: ParsedObject[] = [];
  for (const doc of plan.documents) {
    const parse = plan.parses.get(doc.text);
    if (parse === undefined) throw new Error(`a document of ${path} was not parsed`);
    for (const o of placed(parse, doc.line)) objects.push(o);
  }
  const parsed: ParsedFile = { path, objects };
  documentParses.set(parsed, plan.parses);
  return parsed;
}

/** The whole file parsed as one YAML stream. */
export function parseWholeManifestFile(file: ManifestFile): ParsedFile {
  const objects: ParsedObject[] = [];
  try {
    for (const raw of objectsOf(file)) objects.push(parseObject(normalize(raw)));
    return { path: file.path, objects };
  } catch (e) {
    if (e instanceof LoadError) return { path: file.path, objects, error: e.detail };
    throw e;
  }
}

/** One document of a file: its text, from its `---` line (if any) to the next one, and its first line (0-based). */
export interface DocumentText {
  readonly text: string;
  readonly line: number;
}

/** A document's objects parsed on their own (lines counted from the document's first), and where last placed. */
export interface DocumentParse {
  readonly objects: readonly ParsedObject[];
  placed: { readonly line: number; readonly objects: readonly ParsedObject[] };
}

/** Each parse's documents by text, for the next parse of the same path. */
const documentParses = new WeakMap<ParsedFile, ReadonlyMap<string, DocumentParse>>();

/**
 * The documents of a YAML stream, cut at its `---` lines; undefined when they cannot be parsed
 * apart: a directive (`%…`) or an end marker (`...`) relates a document to its neighbours. A
 * `---` at the start of a line always starts a document (YAML 1.2 §9.1.4, even inside a block or
 * quoted scalar), and without directives, anchors and tags are a document's own.
 */
export function splitDocuments(text: string): DocumentText[] | undefined {
  // Line breaks are \n or \r\n here: a lone \r (a break in YAML) or U+2028 (a break to RegExp's ^) is rare enough to parse whole.
  if (/^(%|\.\.\.(?:[ \t\r\n]|$))|\r(?!\n)|[\u2028\u2029]/m.test(text) || text.includes("\uFEFF", 1)) return undefined;
  const out: DocumentText[] = [];
  const marker = /^---(?:[ \t\r\n]|$)/gm;
  let start = 0;
  let line = 0;
  for (let m = marker.exec(text); m !== null; m = marker.exec(text)) {
    if (m.index === 0) continue;
    const piece = text.slice(start, m.index);
    out.push({ text: piece, line });
    line += newlines(piece);
    start = m.index;
  }
  out.push({ text: text.slice(start), line });
  return out;
}

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n += 1;
  return n;
}

/** A document's objects (lines counted from its first), or undefined when it does not parse (the whole file's parse says why). */
export function parseDocument(path: string, text: string): readonly ParsedObject[] | undefined {
  const parsed = parseWholeManifestFile({ path, text });
  return parsed.error === undefined ? parsed.objects : undefined;
}

export function documentParse(objects: readonly ParsedObject[]): DocumentParse {
  return { objects, placed: { line: 0, objects } };
}

/** The document's objects with their positions in the file, when it starts at `line` (the same objects as last time there). */
function placed(parse: DocumentParse, line: number): readonly ParsedObject[] {
  if (parse.placed.line === line) return parse.placed.objects;
  const lines = shiftedLines(line);
  const objects = parse.objects.map((o) => ({
    ...o,
    line: o.line + line,
    lines: o.lines === NO_LINES ? NO_LINES : lines(o.lines),
    ...(o.fields === undefined ? {} : { fields: shiftedFields(o.fields, line) }),
    ...(o.document === undefined ? {} : { document: { text: o.document.text, line: o.document.line + line } }),
  }));
  parse.placed = { line, objects };
  return objects;
}

/** Positions counted from a document's first line, as positions in its file. */
function shiftedLines(by: number): (lines: LinePositions) => LinePositions {
  return (lines) => ({
    linePos: (offset) => {
      const pos = lines.linePos(offset);
      return { line: pos.line + by, col: pos.col };
    },
  });
}

/** The positions of an object whose fields are never located: one for all, none kept per file. */
export const NO_LINES: LinePositions = { linePos: () => ({ line: 1, col: 1 }) };

function parseObject(o: ReturnType<typeof normalize>): ParsedObject {
  const ours = o.bucket === "infras" || o.bucket === "attachments";
  const base = {
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.meta.namespace,
    name: o.meta.name,
    identity: `${groupOf(o.apiVersion)}/${o.kind} ${o.meta.namespace}/${o.meta.name}`,
    bucket: o.bucket,
    file: o.file,
    line: o.line,
    column: o.column,
    // Only our kinds' fields are ever located (ManifestSources): the syntax tree and the file's
    // line table kept for every Machine would hold several times the objects' own size (3,000
    // Infras' folder: GBs).
    node: ours ? o.node : undefined,
    lines: ours ? o.lines : NO_LINES,
    ...(ours && o.document !== undefined ? { document: o.document } : {}),
  };
  if (!ours) return { ...base, value: o.obj, errors: [], unknown: [] };
  if (isStatusOnly(o.obj)) return { ...base, value: undefined, errors: [], unknown: [], raw: o.obj, statusOnly: true };
  return { ...base, ...decoded(o.obj, o.kind), raw: o.obj };
}

/** Our kinds: the object decoded by the schema (value, or its errors) and its unknown fields. */
export function decoded(
  obj: Record<string, unknown>,
  kind: string,
): Pick<ParsedObject, "value" | "errors" | "unknown"> {
  const d = decodeResource(obj, kind);
  return d.ok
    ? { value: d.value, errors: [], unknown: d.unknown }
    : { value: undefined, errors: d.errors, unknown: d.unknown };
}

/** Where an object of our kinds was read from, for ManifestSources. */
export function sourceOf(o: ParsedObject): ObjectSource {
  if (o.document !== undefined) return { file: o.file, line: o.line, column: o.column, document: o.document };
  return o.fields === undefined ? { file: o.file, node: o.node, lines: o.lines } : { file: o.file, fields: o.fields };
}

/** Builds ClusterState from file contents (no I/O); files are processed in path order. */
export function parseManifests(files: readonly ManifestFile[]): ManifestLoad {
  return assembleManifests(files.map((f) => parseManifestFile(f)));
}

/** The state of parsed files, taken in path order: the first unreadable file or duplicate fails it. */
export function assembleManifests(parsed: readonly ParsedFile[]): ManifestLoad {
  const sorted = [...parsed].sort((a, b) => compare(a.path, b.path));
  const buckets: Record<Bucket, unknown[]> = {
    infras: [],
    attachments: [],
    hostedClusters: [],
    nodePools: [],
    machines: [],
    vmis: [],
    services: [],
    namespaces: [],
  };
  const invalid: InvalidObject[] = [];
  const warnings: InvalidObject[] = [];
  const ignored: IgnoredObject[] = [];
  const seen = new Map<string, ParsedObject>();
  /** Status-only documents of our kinds, by identity; merged into their object below. */
  const statuses = new Map<string, ParsedObject>();
  const ours: ParsedObject[] = [];
  const sources = new ManifestSources();
  for (const file of sorted) {
    for (const o of file.objects) {
      if (o.statusOnly === true) {
        const other = statuses.get(o.identity);
        if (other !== undefined) return { ok: false, error: twice(o, other) };
        statuses.set(o.identity, o);
        continue;
      }
      const first = o.name === "" ? undefined : seen.get(o.identity);
      if (first !== undefined) return { ok: false, error: duplicate(o, first) };
      seen.set(o.identity, o);
      const bucket = o.bucket;
      if (bucket === undefined) {
        ignored.push({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.namespace, name: o.name, file: o.file });
      } else if (bucket === "infras" || bucket === "attachments") {
        ours.push(o);
      } else {
        buckets[bucket].push(o.value);
      }
    }
    if (file.error !== undefined) return { ok: false, error: file.error };
  }
  // Once every file is read: a status-only document may come in any file. Only an object joined
  // by one is decoded again; the others keep their file's decoding.
  for (const o of ours) {
    const status = statuses.get(o.identity);
    statuses.delete(o.identity);
    if (status !== undefined && o.raw !== undefined && "status" in o.raw) return { ok: false, error: twice(status, o) };
    const d =
      status === undefined || o.raw === undefined ? o : decoded({ ...o.raw, status: status.raw?.["status"] }, o.kind);
    const ref = { kind: o.kind, namespace: o.namespace, name: o.name };
    sources.add(ref, sourceOf(o), status === undefined ? undefined : sourceOf(status));
    if (d.value !== undefined) buckets[o.bucket === "infras" ? "infras" : "attachments"].push(d.value);
    else invalid.push({ ref, errors: d.errors });
    if (d.unknown.length > 0) warnings.push({ ref, errors: d.unknown });
  }
  const [orphan] = statuses.values();
  if (orphan !== undefined)
    return {
      ok: false,
      error: {
        file: orphan.file,
        line: orphan.line,
        column: orphan.column,
        message: `status-only ${describeObject(orphan)}: no manifest defines its spec`,
      },
    };
  const sortedBucket = <T extends { metadata: { namespace: string; name: string } }>(b: Bucket): T[] =>
    (buckets[b] as T[]).sort(byNamespaceName);
  const state: ClusterState = {
    infras: sortedBucket<Infra>("infras"),
    attachments: sortedBucket<InfraClusterAttachment>("attachments"),
    hostedClusters: sortedBucket<HostedCluster>("hostedClusters"),
    nodePools: sortedBucket<NodePool>("nodePools"),
    machines: sortedBucket<Machine>("machines"),
    vmis: sortedBucket<VirtualMachineInstance>("vmis"),
    services: sortedBucket<Service>("services"),
    namespaces: sortedBucket<Namespace>("namespaces"),
    invalid: invalid.sort(byRef),
    unknownFields: warnings.sort(byRef),
  };
  ignored.sort((a, b) => compare(a.kind, b.kind) || compare(a.namespace, b.namespace) || compare(a.name, b.name));
  return { ok: true, state, files: sorted.map((f) => f.path), ignored, sources, problems: [] };
}

/** The order of state.invalid and state.unknownFields. */
export function byRef(a: InvalidObject, b: InvalidObject): number {
  return (
    compare(a.ref.kind, b.ref.kind) || compare(a.ref.namespace, b.ref.namespace) || compare(a.ref.name, b.ref.name)
  );
}

// ---------------------------------------------------------------- reading the directory

export const errnoMessage = errnoText;

/**
 * `--manifests` as a user gives it: a folder (loadManifestDir) or one file, read whatever its
 * extension (it was named on purpose). Problems name the file as given. Only regular files of at
 * most `maxBytes` are read (manifest-file-read.ts).
 */
export async function loadManifests(path: string, maxBytes = DEFAULT_MAX_MANIFEST_BYTES): Promise<ManifestLoad> {
  try {
    if ((await stat(path)).isDirectory()) return await loadManifestDir(path, maxBytes);
  } catch (e) {
    return { ok: false, error: { file: path, message: errnoMessage(e) } };
  }
  const read = await readManifestText(path, maxBytes);
  if (!read.ok) return { ok: false, error: { file: path, message: read.message } };
  return parseManifests([{ path, text: read.text }]);
}

/** Reads every *.yaml, *.yml and *.json under dir (recursively, sorted by path) into ClusterState. */
export async function loadManifestDir(dir: string, maxBytes = DEFAULT_MAX_MANIFEST_BYTES): Promise<ManifestLoad> {
  let paths: string[];
  try {
    if (!(await stat(dir)).isDirectory()) return { ok: false, error: { file: dir, message: "not a directory" } };
    paths = await listManifestFiles(dir);
  } catch (e) {
    return { ok: false, error: { file: dir, message: `cannot read manifest directory: ${errnoMessage(e)}` } };
  }
  const files: ManifestFile[] = [];
  for (const path of paths) {
    const read = await readManifestText(join(dir, path), maxBytes);
    if (!read.ok) return { ok: false, error: { file: path, message: `cannot read file: ${read.message}` } };
    files.push({ path, text: read.text });
  }
  return parseManifests(files);
}
