// Heap snapshot diff for scenario 3 (issue 16): which objects a set of idle streams adds, by
// constructor and by what holds them. Input: two V8 heap snapshots of one process (node ids are
// stable within a process), e.g. fanout.ts's `before` and `ours-idle` (XDS_BENCH_HEAP_SNAPSHOT).
// Output: one JSON line per row, largest first — the objects present only in the later snapshot,
// grouped by `type:name` (V8's constructor name for objects) and by their first retainer
// (`ParentName.edge`), with counts and self sizes per stream.
//   node --max-old-space-size=8192 dist-bench/bench/xds/heap-diff.js BEFORE AFTER STREAMS [ROWS] [DEPTH]
// Format: https://developer.chrome.com/docs/devtools/memory-problems/heap-snapshot-schema
// (nodes and edges are flat integer arrays described by snapshot.meta).
import { readFileSync } from "node:fs";

interface Meta {
  readonly node_fields: readonly string[];
  readonly node_types: readonly [readonly string[], ...unknown[]];
  readonly edge_fields: readonly string[];
  readonly edge_types: readonly [readonly string[], ...unknown[]];
}

interface RawSnapshot {
  readonly snapshot: { readonly meta: Meta };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/** One heap object: its id, group key and self size, and its first retainer (node and edge). */
interface HeapNode {
  readonly id: number;
  readonly key: string;
  readonly size: number;
  parent: HeapNode | undefined;
  edge: string;
}

/** `key <- parent.edge <- grandparent.edge …`, `depth` retainers deep. */
function retainerPath(h: HeapNode, depth: number): string {
  let path = h.key;
  let at = h;
  for (let d = 0; d < depth && at.parent !== undefined; d += 1) {
    path += ` <- ${at.parent.key}.${at.edge}`;
    at = at.parent;
  }
  return path;
}

function nodeKey(type: string, name: string): string {
  if (type === "string" || type === "concatenated string" || type === "sliced string") return "string";
  if (type === "number" || type === "hidden" || type === "code") return type;
  return `${type}:${name.length > 60 ? `${name.slice(0, 60)}…` : name}`;
}

/** The nodes of a snapshot, keyed by id, with the first non-weak retainer of each. */
export function readHeap(path: string): Map<number, HeapNode> {
  const raw = JSON.parse(readFileSync(path, "utf8")) as RawSnapshot;
  const { meta } = raw.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const at = (fields: readonly string[], name: string): number => fields.indexOf(name);
  const [nType, nName, nId, nSize, nEdges] = ["type", "name", "id", "self_size", "edge_count"].map((f) =>
    at(meta.node_fields, f),
  ) as [number, number, number, number, number];
  const [eType, eName, eTo] = ["type", "name_or_index", "to_node"].map((f) => at(meta.edge_fields, f)) as [
    number,
    number,
    number,
  ];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const byIndex: HeapNode[] = [];
  for (let i = 0; i < raw.nodes.length; i += nf) {
    const type = nodeTypes[raw.nodes[i + nType] ?? 0] ?? "?";
    const name = raw.strings[raw.nodes[i + nName] ?? 0] ?? "?";
    const id = raw.nodes[i + nId] ?? 0;
    byIndex.push({ id, key: nodeKey(type, name), size: raw.nodes[i + nSize] ?? 0, parent: undefined, edge: "" });
  }
  let edge = 0;
  for (let n = 0; n < byIndex.length; n += 1) {
    const parent = byIndex[n];
    const count = raw.nodes[n * nf + nEdges] ?? 0;
    for (let k = 0; k < count; k += 1, edge += ef) {
      const type = edgeTypes[raw.edges[edge + eType] ?? 0] ?? "?";
      if (type === "weak" || type === "shortcut") continue;
      const child = byIndex[(raw.edges[edge + eTo] ?? 0) / nf];
      if (child === undefined || parent === undefined || child.parent !== undefined || child === parent) continue;
      const nameOrIndex = raw.edges[edge + eName] ?? 0;
      child.parent = parent;
      const label = type === "element" || type === "hidden" ? `[${type}]` : (raw.strings[nameOrIndex] ?? "?");
      child.edge = /^\d+$/.test(label) ? "[n]" : label;
    }
  }
  return new Map(byIndex.map((h) => [h.id, h]));
}

interface Row {
  count: number;
  bytes: number;
}

function add(rows: Map<string, Row>, key: string, size: number): void {
  const r = rows.get(key) ?? { count: 0, bytes: 0 };
  r.count += 1;
  r.bytes += size;
  rows.set(key, r);
}

function print(kind: string, rows: Map<string, Row>, streams: number, limit: number): void {
  const sorted = [...rows].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, limit);
  for (const [key, r] of sorted) {
    const perStream = { count: Math.round((r.count / streams) * 100) / 100, bytes: Math.round(r.bytes / streams) };
    process.stdout.write(`${JSON.stringify({ kind, key, per_stream: perStream, total_bytes: r.bytes })}\n`);
  }
}

const [beforePath, afterPath, streamsArg, rowsArg, depthArg] = process.argv.slice(2);
if (beforePath === undefined || afterPath === undefined || streamsArg === undefined) {
  process.stderr.write("usage: heap-diff BEFORE.heapsnapshot AFTER.heapsnapshot STREAMS [ROWS] [DEPTH]\n");
  process.exit(2);
}
const streams = Number(streamsArg);
const limit = Number(rowsArg ?? "40");
const depth = Number(depthArg ?? "1");
const before = readHeap(beforePath);
const after = readHeap(afterPath);
const byKey = new Map<string, Row>();
const byRetainer = new Map<string, Row>();
let total = 0;
for (const [id, h] of after) {
  if (before.has(id)) continue;
  total += h.size;
  add(byKey, h.key, h.size);
  add(byRetainer, retainerPath(h, depth), h.size);
}
process.stdout.write(`${JSON.stringify({ kind: "total", new_bytes_per_stream: Math.round(total / streams) })}\n`);
print("constructor", byKey, streams, limit);
print("retainer", byRetainer, streams, limit);
