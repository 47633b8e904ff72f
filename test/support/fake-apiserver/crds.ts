// Kinds served from CustomResourceDefinitions: oooi's own come from the generated deploy/crds (what a
// cluster installs), so a wrong scope, a missing status subresource or a bad printer column there shows
// up as the behaviour a real kube-apiserver would have with that CRD, not as what src/ meant.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { parseJsonPath } from "./jsonpath.js";
import type { Json, JsonObject, ListType, PrinterColumn, ResourceKind } from "./types.js";
import { isObject } from "./types.js";

/**
 * The repository's generated CRDs (`kubectl apply -k deploy/crds` installs them), found upwards from
 * this module: it runs from test/ under vitest and from dist-bench/test/ in the benchmarks.
 */
export const OOOI_CRD_DIR = ((): string => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, "deploy", "crds", "kustomization.yaml"))) return join(dir, "deploy", "crds");
  throw new Error("deploy/crds not found above the fake API server's module");
})();

const SCOPES = ["Cluster", "Namespaced"];
const COLUMN_TYPES = ["integer", "number", "boolean", "string", "date"];
const COLUMN_FORMATS = ["", "int32", "int64", "float", "double", "byte", "date", "date-time", "password"];

// The column apiextensions-apiserver serves when a version declares no additionalPrinterColumns.
const DEFAULT_AGE_COLUMN: PrinterColumn = {
  name: "Age",
  type: "date",
  format: "",
  description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
  priority: 0,
  jsonPath: ".metadata.creationTimestamp",
};

/** One reason kube-apiserver would refuse the CRD, as its validation names it. */
export interface CrdProblem {
  readonly field: string;
  readonly message: string;
}

function str(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === "string" ? v : undefined;
}

/**
 * What kube-apiserver's CRD validation (apiextensions.k8s.io/v1) would reject in the fields the fake
 * serves from: names, group, scope, versions (served/storage), subresources and printer columns.
 */
export function crdProblems(crd: JsonObject): CrdProblem[] {
  const out: CrdProblem[] = [];
  const bad = (field: string, message: string): void => {
    out.push({ field, message });
  };
  if (crd["apiVersion"] !== "apiextensions.k8s.io/v1" || crd["kind"] !== "CustomResourceDefinition") {
    bad("apiVersion/kind", "must be apiextensions.k8s.io/v1 CustomResourceDefinition");
    return out;
  }
  const spec = crd["spec"];
  if (!isObject(spec)) {
    bad("spec", "Required value");
    return out;
  }
  const group = str(spec, "group") ?? "";
  if (group === "") bad("spec.group", "Required value");
  const names = isObject(spec["names"]) ? spec["names"] : {};
  const plural = str(names, "plural") ?? "";
  if (plural === "") bad("spec.names.plural", "Required value");
  if ((str(names, "kind") ?? "") === "") bad("spec.names.kind", "Required value");
  const name = isObject(crd["metadata"]) ? str(crd["metadata"], "name") : undefined;
  if (name !== `${plural}.${group}`) bad("metadata.name", 'must be spec.names.plural+"."+spec.group');
  const scope = spec["scope"];
  if (scope === undefined) bad("spec.scope", "Required value");
  else if (typeof scope !== "string" || !SCOPES.includes(scope)) {
    bad("spec.scope", `Unsupported value: ${JSON.stringify(scope)}: supported values: "Cluster", "Namespaced"`);
  }
  const versions = spec["versions"];
  if (!Array.isArray(versions) || versions.length === 0) {
    bad("spec.versions", "Required value: must have exactly one version marked as storage version");
    return out;
  }
  if (versions.filter((v) => isObject(v) && v["storage"] === true).length !== 1) {
    bad("spec.versions", "Invalid value: must have exactly one version marked as storage version");
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (!isObject(v)) {
      bad(at, "must be an object");
      return;
    }
    const vname = str(v, "name") ?? "";
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(vname)) bad(`${at}.name`, `Invalid value: ${JSON.stringify(vname)}`);
    if (seen.has(vname)) bad(`${at}.name`, `Duplicate value: ${JSON.stringify(vname)}`);
    seen.add(vname);
    if (typeof v["served"] !== "boolean") bad(`${at}.served`, "Required value");
    if (typeof v["storage"] !== "boolean") bad(`${at}.storage`, "Required value");
    const sub = v["subresources"];
    if (sub !== undefined && !isObject(sub)) bad(`${at}.subresources`, "must be an object");
    if (isObject(sub) && sub["status"] !== undefined && sub["status"] !== null && !isObject(sub["status"])) {
      bad(`${at}.subresources.status`, "must be an object");
    }
    const columns = v["additionalPrinterColumns"];
    if (columns === undefined) return;
    if (!Array.isArray(columns)) {
      bad(`${at}.additionalPrinterColumns`, "must be a list");
      return;
    }
    columns.forEach((c, j) => {
      const cat = `${at}.additionalPrinterColumns[${j}]`;
      if (!isObject(c)) {
        bad(cat, "must be an object");
        return;
      }
      if ((str(c, "name") ?? "") === "") bad(`${cat}.name`, "Required value");
      const type = c["type"];
      if (typeof type !== "string" || !COLUMN_TYPES.includes(type)) {
        bad(`${cat}.type`, `Unsupported value: ${JSON.stringify(type ?? null)}`);
      }
      const format = c["format"] ?? "";
      if (typeof format !== "string" || !COLUMN_FORMATS.includes(format)) {
        bad(`${cat}.format`, `Unsupported value: ${JSON.stringify(format)}`);
      }
      const priority = c["priority"] ?? 0;
      if (typeof priority !== "number" || !Number.isInteger(priority) || priority < 0) {
        bad(`${cat}.priority`, "Invalid value: must be a non-negative integer");
      }
      const path = str(c, "jsonPath") ?? "";
      if (path === "") bad(`${cat}.jsonPath`, "Required value");
      else {
        try {
          parseJsonPath(path);
        } catch (e) {
          bad(`${cat}.jsonPath`, `Invalid value: ${(e as Error).message}`);
        }
      }
    });
  });
  return out;
}

/**
 * The kinds a CustomResourceDefinition serves, one per served version: scope, the status subresource,
 * printer columns, and list types read from x-kubernetes-list-type / x-kubernetes-list-map-keys.
 * Assumes a CRD that crdProblems() accepts; returns [] for one without names.
 */
export function kindsFromCrd(crd: JsonObject): ResourceKind[] {
  const spec = crd["spec"];
  if (!isObject(spec) || !isObject(spec["names"]) || !Array.isArray(spec["versions"])) return [];
  const names = spec["names"];
  const group = str(spec, "group") ?? "";
  const kind = str(names, "kind") ?? "";
  const plural = str(names, "plural") ?? "";
  if (group === "" || kind === "" || plural === "") return [];
  const out: ResourceKind[] = [];
  for (const v of spec["versions"]) {
    if (!isObject(v) || v["served"] !== true || typeof v["name"] !== "string") continue;
    const schema = isObject(v["schema"]) ? v["schema"]["openAPIV3Schema"] : undefined;
    const listTypes: Record<string, ListType> = {};
    collectListTypes(schema, "", listTypes);
    const subresources = v["subresources"];
    out.push({
      group,
      version: v["name"],
      kind,
      plural,
      singular: str(names, "singular") ?? kind.toLowerCase(),
      namespaced: spec["scope"] !== "Cluster",
      shortNames: strings(names["shortNames"]),
      categories: strings(names["categories"]),
      statusSubresource: isObject(subresources) && isObject(subresources["status"]),
      listTypes,
      printerColumns: printerColumns(v["additionalPrinterColumns"]),
    });
  }
  return out;
}

function printerColumns(v: Json | undefined): PrinterColumn[] {
  const declared = Array.isArray(v) ? v.filter(isObject) : [];
  if (declared.length === 0) return [DEFAULT_AGE_COLUMN];
  return declared.map((c) => ({
    name: str(c, "name") ?? "",
    type: (str(c, "type") ?? "string") as PrinterColumn["type"],
    format: str(c, "format") ?? "",
    description: str(c, "description") ?? "",
    priority: typeof c["priority"] === "number" ? c["priority"] : 0,
    jsonPath: str(c, "jsonPath") ?? "",
  }));
}

function strings(v: Json | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function collectListTypes(schema: Json | undefined, path: string, out: Record<string, ListType>): void {
  if (!isObject(schema)) return;
  const props = schema["properties"];
  if (isObject(props)) {
    for (const [name, sub] of Object.entries(props)) collectListTypes(sub, path === "" ? name : `${path}.${name}`, out);
  }
  if (schema["type"] === "array") {
    const lt = schema["x-kubernetes-list-type"];
    if (lt === "set") out[path] = { type: "set" };
    if (lt === "map") out[path] = { type: "map", keys: strings(schema["x-kubernetes-list-map-keys"]) };
    collectListTypes(schema["items"], `${path}[]`, out);
  }
}

// The files `kubectl apply -k dir` would install: the kustomization's resources, else every YAML file.
function crdFiles(dir: string): string[] {
  const entries = readdirSync(dir);
  const kustomization = entries.find((f) => f === "kustomization.yaml" || f === "kustomization.yml");
  if (kustomization === undefined) return entries.filter((f) => /\.ya?ml$/.test(f)).sort();
  const doc: unknown = parseAllDocuments(readFileSync(join(dir, kustomization), "utf8"))[0]?.toJS();
  const resources = isObject(doc) ? doc["resources"] : undefined;
  if (!Array.isArray(resources) || !resources.every((r): r is string => typeof r === "string")) {
    throw new Error(`${join(dir, kustomization)}: resources: must be a list of file names`);
  }
  return resources;
}

/**
 * The kinds every CustomResourceDefinition in `dir` serves. Throws an Error naming the file, the CRD
 * and the field for what kube-apiserver would refuse (or a kind two CRDs both define).
 */
export function loadCrdKinds(dir: string): ResourceKind[] {
  const out: ResourceKind[] = [];
  const owner = new Map<string, string>();
  for (const file of crdFiles(dir)) {
    const path = join(dir, file);
    for (const doc of parseAllDocuments(readFileSync(path, "utf8"))) {
      if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]?.message ?? "invalid YAML"}`);
      const crd: unknown = doc.toJS();
      if (crd === null || crd === undefined) continue;
      if (!isObject(crd)) throw new Error(`${path}: a document is not an object`);
      const name = (isObject(crd["metadata"]) ? str(crd["metadata"], "name") : undefined) ?? "(unnamed)";
      const problems = crdProblems(crd);
      if (problems.length > 0) {
        throw new Error(
          `${path}: CustomResourceDefinition ${name} is invalid: ${problems.map((p) => `${p.field}: ${p.message}`).join(", ")}`,
        );
      }
      for (const k of kindsFromCrd(crd)) {
        const key = `${k.group}/${k.version}/${k.plural}`;
        const first = owner.get(key);
        if (first !== undefined) throw new Error(`${path}: ${key} is already defined by ${first}`);
        owner.set(key, path);
        out.push(k);
      }
    }
  }
  return out;
}
