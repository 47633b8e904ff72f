// meta.k8s.io/v1 Table answers: kubectl get asks for server-side printing first.
import type { JsonObject, KubeObject } from "./types.js";
import { meta } from "./types.js";

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

/**
 * A Table with the Name and Age columns every kind prints; rows carry the object as
 * PartialObjectMetadata or in full, per the includeObject parameter (default Metadata).
 */
export function toTable(
  items: readonly KubeObject[],
  listMeta: JsonObject,
  includeObject: string | null,
  apiVersion: string,
  kind: string,
): JsonObject {
  const now = Date.now();
  const rows = items.map((o) => {
    const m = meta(o);
    const row: JsonObject = { cells: [m.name ?? "", age(m.creationTimestamp, now)] };
    if (includeObject === "Object") row["object"] = { apiVersion, kind, ...o };
    else if (includeObject !== "None") {
      row["object"] = { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { ...m } as JsonObject };
    }
    return row;
  });
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: listMeta,
    columnDefinitions: [
      {
        name: "Name",
        type: "string",
        format: "name",
        description: "Name must be unique within a namespace.",
        priority: 0,
      },
      { name: "Age", type: "string", format: "", description: "CreationTimestamp of the object.", priority: 0 },
    ],
    rows,
  };
}
