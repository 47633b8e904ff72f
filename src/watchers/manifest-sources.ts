// Where each object of our kinds was read from: (kind, namespace, name, field path) → file:line:column,
// so a problem found later (schema, model) is reported at the line a person has to edit.
import { isMap, isScalar, isSeq, type Node as YamlNode } from "yaml";
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

/** Where one object (or its status-only document) was read from. */
export interface ObjectSource {
  readonly file: string;
  readonly node: YamlNode | undefined;
  readonly lines: LinePositions;
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
    let node: unknown = source.node;
    let at: YamlNode | undefined = source.node;
    for (const seg of segments(field)) {
      if (isMap(node) && typeof seg === "string") {
        const pair = node.items.find((p) => isScalar(p.key) && p.key.value === seg);
        if (pair === undefined) break;
        at = isScalar(pair.key) ? pair.key : at;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number" && isNodeLike(node.items[seg])) {
        node = node.items[seg];
        at = node as YamlNode;
      } else break;
    }
    const pos = source.lines.linePos(at?.range?.[0] ?? 0);
    return { file: source.file, line: pos.line, column: pos.col };
  }
}

const isNodeLike = (v: unknown): boolean => typeof v === "object" && v !== null && "range" in v;
