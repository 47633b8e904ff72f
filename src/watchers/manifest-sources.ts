// Where each object of our kinds was read from: (kind, namespace, name, field path) → file:line:column,
// so a problem found later (schema, model) is reported at the line a person has to edit.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from "yaml";
import type { ObjectRef } from "../model/types.js";

/** Offset in a file's text → 1-based line and column (a LineCounter, or one shifted to a document's line). */
export interface LinePositions {
  linePos(offset: number): { line: number; col: number };
}

/** A 1-based position in a manifest file (the file relative to the manifests folder). */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/**
 * Where one object (or its status-only document) was read from: its YAML node; for an object
 * parsed in the parse worker (./manifest-parse-pool.ts), whose nodes cannot cross threads, the
 * positions of its fields; for an object read plainly (./plain-yaml.ts), its document, which the
 * yaml library parses when a field is first located (the same value: plain-yaml's test holds them
 * to it). Most objects never have a problem, so most documents are never parsed twice.
 */
export type ObjectSource =
  | { readonly file: string; readonly node: YamlNode | undefined; readonly lines: LinePositions }
  | { readonly file: string; readonly fields: FieldPositions }
  | {
      readonly file: string;
      /** The object's own position, where a field of no path is located without a parse. */
      readonly line: number;
      readonly column: number;
      readonly document: { readonly text: string; readonly line: number };
    };

/** A node's position and, for a mapping or sequence, its children's: what locate reads of a node, as plain data. */
export interface FieldPositions {
  readonly line: number;
  readonly column: number;
  /** A mapping's pairs with a scalar key: the key's position and the value's positions. */
  readonly pairs?: readonly { readonly key: string; readonly at: FieldPositions; readonly value?: FieldPositions }[];
  /** A sequence's items (undefined for an item that is not a node). */
  readonly items?: readonly (FieldPositions | undefined)[];
}

/** The positions locate can reach in `node` (the object's own position when it has no node). */
export function fieldPositions(node: YamlNode | undefined, lines: LinePositions): FieldPositions {
  const at = (n: YamlNode | undefined): FieldPositions => {
    const pos = lines.linePos(n?.range?.[0] ?? 0);
    return { line: pos.line, column: pos.col };
  };
  const walk = (n: YamlNode | undefined): FieldPositions => {
    if (isMap(n)) {
      const pairs = n.items.flatMap((p) =>
        isScalar(p.key) && typeof p.key.value === "string"
          ? [{ key: p.key.value, at: at(p.key), ...valueOf(p.value) }]
          : [],
      );
      return { ...at(n), pairs };
    }
    if (isSeq(n)) return { ...at(n), items: n.items.map((i) => (isNodeLike(i) ? walk(i as YamlNode) : undefined)) };
    return at(n);
  };
  const valueOf = (v: unknown): { value?: FieldPositions } => (isNodeLike(v) ? { value: walk(v as YamlNode) } : {});
  return walk(node);
}

/** Per document of a source read plainly, its fields' positions once located. */
const documentFields = new WeakMap<object, FieldPositions>();

/** The positions of a source's fields: kept, read off its node, or found by parsing its document. */
export function sourceFields(source: ObjectSource): FieldPositions {
  if ("fields" in source) return source.fields;
  if ("node" in source) return fieldPositions(source.node, source.lines);
  const { document } = source;
  let fields = documentFields.get(document);
  if (fields === undefined) {
    const lines = new LineCounter();
    const parsed = parseDocument(document.text, { lineCounter: lines });
    fields = fieldPositions(parsed.contents ?? undefined, {
      linePos: (offset) => {
        const pos = lines.linePos(offset);
        return { line: pos.line + document.line, col: pos.col };
      },
    });
    documentFields.set(document, fields);
  }
  return fields;
}

/** The same positions `by` lines further down (a document placed further down its file). */
export function shiftedFields(f: FieldPositions, by: number): FieldPositions {
  return {
    line: f.line + by,
    column: f.column,
    ...(f.pairs === undefined
      ? {}
      : {
          pairs: f.pairs.map((p) => ({
            key: p.key,
            at: shiftedFields(p.at, by),
            ...(p.value === undefined ? {} : { value: shiftedFields(p.value, by) }),
          })),
        }),
    ...(f.items === undefined
      ? {}
      : { items: f.items.map((i) => (i === undefined ? undefined : shiftedFields(i, by))) }),
  };
}

interface Sources {
  readonly object: ObjectSource;
  /** A status-only document of the object (src/watchers/manifests.ts), where its status.* fields are. */
  readonly status: ObjectSource | undefined;
}

/** "spec.dnsServers[0]" → ["spec", "dnsServers", 0]. */
function segments(field: string): (string | number)[] {
  return field
    .split(/\.|(?=\[)/)
    .filter((s) => s !== "")
    .map((s) => (/^\[\d+\]$/.test(s) ? Number(s.slice(1, -1)) : s));
}

const refKey = (ref: ObjectRef): string => `${ref.kind} ${ref.namespace}/${ref.name}`;

export class ManifestSources {
  readonly #objects: Map<string, Sources>;

  constructor(from?: ManifestSources) {
    this.#objects = new Map(from === undefined ? [] : from.#objects);
  }

  add(ref: ObjectRef, source: ObjectSource, status?: ObjectSource): void {
    this.#objects.set(refKey(ref), { object: source, status });
  }

  delete(ref: ObjectRef): void {
    this.#objects.delete(refKey(ref));
  }

  /**
   * The position of `field` in the object: its key when present, else the deepest enclosing key
   * that is (a missing required field is reported where it belongs), else the object itself.
   */
  locate(ref: ObjectRef, field: string): SourcePosition | undefined {
    const sources = this.#objects.get(refKey(ref));
    if (sources === undefined) return undefined;
    const inStatus = field === "status" || field.startsWith("status.");
    const source = inStatus ? (sources.status ?? sources.object) : sources.object;
    const path = segments(field);
    if (path.length === 0 && "document" in source)
      return { file: source.file, line: source.line, column: source.column };
    let node: FieldPositions | undefined = sourceFields(source);
    let at: FieldPositions = node;
    for (const seg of path) {
      if (node?.pairs !== undefined && typeof seg === "string") {
        const pair: { readonly at: FieldPositions; readonly value?: FieldPositions } | undefined = node.pairs.find(
          (p) => p.key === seg,
        );
        if (pair === undefined) break;
        at = pair.at;
        node = pair.value;
      } else if (node?.items !== undefined && typeof seg === "number" && node.items[seg] !== undefined) {
        node = node.items[seg];
        at = node;
      } else break;
    }
    return { file: source.file, line: at.line, column: at.column };
  }
}

const isNodeLike = (v: unknown): boolean => typeof v === "object" && v !== null && "range" in v;
