// meta.k8s.io/v1 Table answers: kubectl get asks for server-side printing first.
import { evaluate, parseJsonPath } from "./jsonpath.js";
import type { Json, JsonObject, KubeObject, PrinterColumn, ResourceKind } from "./types.js";
import { apiVersionOf, meta } from "./types.js";

/** True when the Accept header asks for a Table (kubectl get sends `as=Table;g=meta.k8s.io`). */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(",").some((a) => a.includes("as=Table") && a.includes("g=meta.k8s.io"));
}

function age(ts: string | undefined, now: number): string {
  if (ts === undefined) return "<unknown>";
  const s = Math.max(0, Math.floor((now - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const NAME_COLUMN: JsonObject = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
  priority: 0,
};
const AGE_COLUMN: JsonObject = {
  name: "Age",
  type: "string",
  format: "",
  description: "CreationTimestamp of the object.",
  priority: 0,
};

// A printer column's cell as apiextensions-apiserver fills it: the first value the path selects, typed
// by the column (a value of another type, or none, is null); string columns print what they select.
function cell(column: PrinterColumn, obj: JsonObject, now: number): Json {
  const value = evaluate(parseJsonPath(column.jsonPath), obj)[0];
  if (value === undefined || value === null) return null;
  switch (column.type) {
    case "string":
      return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null;
    case "number":
      return typeof value === "number" ? value : null;
    case "boolean":
      return typeof value === "boolean" ? value : null;
    case "date":
      if (typeof value !== "string") return null;
      return Number.isNaN(Date.parse(value)) ? "<invalid>" : age(value, now);
  }
}

/**
 * A Table of `items` of kind `k`: Name then the CRD's printer columns, or Name and Age for a built-in;
 * rows carry the object as PartialObjectMetadata or in full, per the includeObject parameter (default
 * Metadata).
 */
export function toTable(
  items: readonly KubeObject[],
  listMeta: JsonObject,
  includeObject: string | null,
  k: ResourceKind,
): JsonObject {
  const now = Date.now();
  const apiVersion = apiVersionOf(k);
  const rows = items.map((o) => {
    const m = meta(o);
    const full: JsonObject = { apiVersion, kind: k.kind, ...o };
    const cells: Json[] = [m.name ?? ""];
    if (k.printerColumns === undefined) cells.push(age(m.creationTimestamp, now));
    else for (const c of k.printerColumns) cells.push(cell(c, full, now));
    const row: JsonObject = { cells };
    if (includeObject === "Object") row["object"] = full;
    else if (includeObject !== "None") {
      row["object"] = { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { ...m } as JsonObject };
    }
    return row;
  });
  const columns =
    k.printerColumns === undefined
      ? [NAME_COLUMN, AGE_COLUMN]
      : [
          NAME_COLUMN,
          ...k.printerColumns.map((c): JsonObject => ({
            name: c.name,
            type: c.type,
            format: c.format,
            description: c.description,
            priority: c.priority,
          })),
        ];
  return { kind: "Table", apiVersion: "meta.k8s.io/v1", metadata: listMeta, columnDefinitions: columns, rows };
}
