// Shapes shared by the fake API server's parts.

/** A JSON value as it travels over the Kubernetes REST API. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
/** A JSON object (a Kubernetes object, a map field). */
export interface JsonObject {
  [key: string]: Json | undefined;
}

/** How server-side apply and strategic merge treat one list field (x-kubernetes-list-type). */
export type ListType =
  { readonly type: "atomic" } | { readonly type: "set" } | { readonly type: "map"; readonly keys: readonly string[] };

/** One REST resource the fake serves: the facts discovery publishes plus the semantics it enforces. */
export interface ResourceKind {
  /** API group; "" is the legacy core group served under /api/v1. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** URL segment, lower-case plural (e.g. "configmaps"). */
  readonly plural: string;
  readonly singular?: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  /** Serves `<plural>/status`: the main endpoint then ignores status, and status writes touch status only. */
  readonly statusSubresource?: boolean;
  /** Maintains metadata.generation (default: true for custom kinds, false for built-ins unless set). */
  readonly generation?: boolean;
  /** Built-in kinds omit kind/apiVersion on list items, as kube-apiserver does; CRD kinds keep them. */
  readonly builtin?: boolean;
  /**
   * Non-atomic lists, keyed by field path with `[]` for list elements, e.g.
   * `spec.template.spec.containers` or `spec.template.spec.containers[].env`. Unlisted lists are atomic.
   */
  readonly listTypes?: Readonly<Record<string, ListType>>;
  /**
   * A CRD version's additionalPrinterColumns (with the default Age column when it declares none), the
   * Table columns after Name; absent for built-ins, which print Name and Age.
   */
  readonly printerColumns?: readonly PrinterColumn[];
}

/** One additionalPrinterColumn of a CustomResourceDefinition version. */
export interface PrinterColumn {
  readonly name: string;
  /** integer, number, boolean, string or date: how the cell is typed (date cells print as an age). */
  readonly type: "integer" | "number" | "boolean" | "string" | "date";
  readonly format: string;
  readonly description: string;
  /** 0 prints by default; higher only under `kubectl get -o wide`. */
  readonly priority: number;
  readonly jsonPath: string;
}

/** Kubernetes object metadata as the fake reads and writes it. */
export interface ObjectMetadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
}

/** metadata.ownerReferences[] entry: the owner the garbage collector follows. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metadata.managedFields[] entry: which fields one manager owns, in FieldsV1 form. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: JsonObject;
  subresource?: string;
}

/** A stored object: any JSON object with apiVersion, kind and metadata. */
export interface KubeObject extends JsonObject {
  apiVersion?: string;
  kind?: string;
  // metadata is typed loosely on the index signature; use meta() to read it.
}

/** Identifies a resource kind inside the fake: `<group>/<plural>` ("" group for core). */
export function kindKey(k: Pick<ResourceKind, "group" | "plural">): string {
  return `${k.group}/${k.plural}`;
}

/** `<group>/<version>` or `v1` for the core group: the apiVersion field value. */
export function apiVersionOf(k: Pick<ResourceKind, "group" | "version">): string {
  return k.group === "" ? k.version : `${k.group}/${k.version}`;
}

/** True for a non-null, non-array object. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The metadata of an object, created empty when absent. */
export function meta(obj: KubeObject): ObjectMetadata {
  let m = obj["metadata"];
  if (!isObject(m)) {
    m = {};
    obj["metadata"] = m;
  }
  return m;
}

/** Whether kube-apiserver keeps metadata.generation for this kind (CRDs always; built-ins per strategy). */
export function tracksGeneration(k: ResourceKind): boolean {
  return k.generation ?? k.builtin !== true;
}

/**
 * Deep copy of a JSON value (what the store holds: plain objects, arrays and scalars; keys whose value
 * is undefined are kept, as structuredClone keeps them). A plain walk: structuredClone's generality made
 * it the fake's largest cost at benchmark scale.
 */
export function clone<T>(v: T): T {
  return copyJson(v as Json | undefined) as T;
}

function copyJson(v: Json | undefined): Json | undefined {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    const a: Json[] = new Array<Json>(v.length);
    for (let i = 0; i < v.length; i++) a[i] = copyJson(v[i]) as Json;
    return a;
  }
  const o: JsonObject = {};
  for (const k of Object.keys(v)) {
    // A "__proto__" key (JSON.parse makes it an own property) must stay data, not become the prototype.
    if (k === "__proto__") Object.defineProperty(o, k, { value: copyJson(v[k]), enumerable: true, writable: true });
    else o[k] = copyJson(v[k]);
  }
  return o;
}

/** Structural equality of JSON values (key order ignored, undefined keys ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}
