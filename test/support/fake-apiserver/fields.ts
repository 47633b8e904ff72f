// Field ownership (metadata.managedFields, FieldsV1) and server-side apply.
//
// A field path is a list of path elements as FieldsV1 spells them: `f:<field>`, `k:<json key>` for an
// element of a map-type list, `v:<json value>` for an element of a set-type list. Maps are owned per
// key down to the leaves; atomic lists and scalars are leaves.
import { ApiError } from "./errors.js";
import type { Json, JsonObject, KubeObject, ListType, ManagedFieldsEntry, ResourceKind } from "./types.js";
import { clone, isObject, jsonEqual } from "./types.js";

/** Which part of an object a request addresses: the main resource or its status subresource. */
export type Scope = "main" | "status";

/** One manager's ownership record (metadata.managedFields[] before rendering). */
export interface Manager {
  manager: string;
  operation: "Apply" | "Update";
  /** "" for the main resource, "status" for the status subresource. */
  subresource: string;
  apiVersion: string;
  time: string;
  /** Owned paths, each a JSON-encoded path-element array. */
  fields: Set<string>;
}

const MARKER = Symbol("list element");
type Leaf = Json | typeof MARKER;

// Metadata fields that are owned; the rest (name, uid, resourceVersion, ...) belong to the server.
const OWNED_METADATA = new Set(["labels", "annotations", "finalizers", "ownerReferences"]);
const METADATA_LISTS: Record<string, ListType> = {
  "metadata.finalizers": { type: "set" },
  "metadata.ownerReferences": { type: "map", keys: ["uid"] },
};

function listTypeOf(kind: ResourceKind, schemaPath: string): ListType {
  return METADATA_LISTS[schemaPath] ?? kind.listTypes?.[schemaPath] ?? { type: "atomic" };
}

const child = (schemaPath: string, key: string): string => (schemaPath === "" ? key : `${schemaPath}.${key}`);

function keyOf(elem: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of [...keys].sort()) if (elem[k] !== undefined) out[k] = elem[k];
  return out;
}

/** The part of an object a scope covers, as it participates in field ownership. */
export function scoped(obj: JsonObject, kind: ResourceKind, scope: Scope): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || k === "apiVersion" || k === "kind") continue;
    if (k === "metadata") {
      if (scope === "status" || !isObject(v)) continue;
      const m: JsonObject = {};
      for (const [mk, mv] of Object.entries(v)) if (OWNED_METADATA.has(mk) && mv !== undefined) m[mk] = mv;
      if (Object.keys(m).length > 0) out[k] = m;
      continue;
    }
    const isStatus = k === "status" && kind.statusSubresource === true;
    if ((scope === "status") !== isStatus) continue;
    out[k] = v;
  }
  return out;
}

/** Every owned path of a value with its leaf value (list elements of map/set lists get a marker). */
function fieldsOf(obj: JsonObject, kind: ResourceKind, scope: Scope): Map<string, Leaf> {
  const out = new Map<string, Leaf>();
  const walk = (v: Json, pe: string[], schemaPath: string): void => {
    if (isObject(v) && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v)) if (x !== undefined) walk(x, [...pe, `f:${k}`], child(schemaPath, k));
      return;
    }
    if (Array.isArray(v)) {
      const lt = listTypeOf(kind, schemaPath);
      if (lt.type === "set") {
        for (const e of v) out.set(JSON.stringify([...pe, `v:${JSON.stringify(e)}`]), e);
        return;
      }
      if (lt.type === "map" && v.every(isObject)) {
        for (const e of v) {
          const epe = [...pe, `k:${JSON.stringify(keyOf(e, lt.keys))}`];
          out.set(JSON.stringify(epe), MARKER);
          for (const [k, x] of Object.entries(e))
            if (x !== undefined) walk(x, [...epe, `f:${k}`], child(`${schemaPath}[]`, k));
        }
        return;
      }
    }
    out.set(JSON.stringify(pe), v);
  };
  walk(scoped(obj, kind, scope), [], "");
  return out;
}

function step(cur: Json | undefined, pe: string): Json | undefined {
  if (pe.startsWith("f:")) return isObject(cur) ? cur[pe.slice(2)] : undefined;
  if (!Array.isArray(cur)) return undefined;
  const want = JSON.parse(pe.slice(2)) as Json;
  if (pe.startsWith("v:")) return cur.find((e) => jsonEqual(e, want));
  const wk = isObject(want) ? want : {};
  return cur.find((e) => isObject(e) && Object.entries(wk).every(([k, x]) => jsonEqual(e[k], x)));
}

// Removes the value at a path; maps and lists the removal leaves empty go too (nobody owns them).
function deleteAt(obj: JsonObject, pe: readonly string[]): void {
  removeOne(obj, pe);
  for (let n = pe.length - 1; n > 0; n--) {
    const parent = pe.slice(0, n);
    let cur: Json | undefined = obj;
    for (const p of parent) cur = step(cur, p);
    const empty = (isObject(cur) && Object.keys(cur).length === 0) || (Array.isArray(cur) && cur.length === 0);
    if (!empty) return;
    removeOne(obj, parent);
  }
}

function removeOne(obj: JsonObject, pe: readonly string[]): void {
  let cur: Json | undefined = obj;
  for (const p of pe.slice(0, -1)) cur = step(cur, p);
  const last = pe[pe.length - 1];
  if (last === undefined) return;
  if (last.startsWith("f:")) {
    if (isObject(cur)) Reflect.deleteProperty(cur, last.slice(2));
  } else if (Array.isArray(cur)) {
    const target = step(cur, last);
    const i = cur.findIndex((e) => e === target);
    if (i >= 0) cur.splice(i, 1);
  }
}

/** Human form of a path as kube-apiserver prints it in conflicts: `.spec.containers[name="app"].image`. */
export function pathString(pathKey: string): string {
  const pe = JSON.parse(pathKey) as string[];
  return pe
    .map((p) => {
      if (p.startsWith("f:")) return `.${p.slice(2)}`;
      if (p.startsWith("v:")) return `[=${p.slice(2)}]`;
      const k = JSON.parse(p.slice(2)) as JsonObject;
      return `[${Object.entries(k)
        .map(([kk, v]) => `${kk}=${JSON.stringify(v)}`)
        .join(",")}]`;
    })
    .join("");
}

// Applies a configuration over a live value: maps merge per key, map/set lists merge per element, the rest replaces.
function applyMerge(live: Json | undefined, cfg: Json, kind: ResourceKind, schemaPath: string): Json {
  if (isObject(cfg)) {
    const out: JsonObject = isObject(live) ? live : {};
    for (const [k, v] of Object.entries(cfg)) {
      if (v === undefined) continue;
      if (v === null) Reflect.deleteProperty(out, k);
      else out[k] = applyMerge(out[k], v, kind, child(schemaPath, k));
    }
    return out;
  }
  if (Array.isArray(cfg) && Array.isArray(live)) {
    const lt = listTypeOf(kind, schemaPath);
    if (lt.type === "set") {
      const out = [...live];
      for (const e of cfg) if (!out.some((x) => jsonEqual(x, e))) out.push(clone(e));
      return out;
    }
    if (lt.type === "map" && cfg.every(isObject)) {
      const out = [...live];
      for (const e of cfg) {
        const key = keyOf(e, lt.keys);
        const i = out.findIndex((x) => isObject(x) && jsonEqual(keyOf(x, lt.keys), key));
        if (i >= 0) out[i] = applyMerge(out[i], e, kind, `${schemaPath}[]`);
        else out.push(clone(e));
      }
      return out;
    }
  }
  return clone(cfg);
}

function entryFor(
  managers: Manager[],
  name: string,
  op: "Apply" | "Update",
  sub: string,
  apiVersion: string,
  now: string,
): Manager {
  let m = managers.find((x) => x.manager === name && x.operation === op && x.subresource === sub);
  if (m === undefined) {
    m = { manager: name, operation: op, subresource: sub, apiVersion, time: now, fields: new Set() };
    managers.push(m);
  }
  return m;
}

function setEqual(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** Context of one write: who writes, through which endpoint, with which apiVersion, at what time. */
export interface WriteContext {
  kind: ResourceKind;
  scope: Scope;
  manager: string;
  apiVersion: string;
  now: string;
}

/**
 * Ownership after a non-apply write (create, update, patch): the writer takes every field it
 * added or changed (updates never conflict), and removed fields leave every manager.
 */
export function recordUpdate(
  managers: readonly Manager[],
  before: JsonObject,
  after: JsonObject,
  ctx: WriteContext,
): Manager[] {
  const out = managers.map((m) => ({ ...m, fields: new Set(m.fields) }));
  const b = fieldsOf(before, ctx.kind, ctx.scope);
  const a = fieldsOf(after, ctx.kind, ctx.scope);
  const changed = new Set<string>();
  for (const [p, v] of a) {
    const old = b.get(p);
    if (!b.has(p) || !(v === MARKER ? old === MARKER : old !== MARKER && jsonEqual(v, old))) changed.add(p);
  }
  const removed = [...b.keys()].filter((p) => !a.has(p));
  if (changed.size === 0 && removed.length === 0) return out;
  const sub = ctx.scope === "status" ? "status" : "";
  const mine = entryFor(out, ctx.manager, "Update", sub, ctx.apiVersion, ctx.now);
  const prev = new Set(mine.fields);
  for (const m of out) {
    for (const p of removed) m.fields.delete(p);
    if (m !== mine) for (const p of changed) m.fields.delete(p);
  }
  for (const p of changed) mine.fields.add(p);
  if (!setEqual(prev, mine.fields)) {
    mine.time = ctx.now;
    mine.apiVersion = ctx.apiVersion;
  }
  return out.filter((m) => m.fields.size > 0);
}

/**
 * Server-side apply of `cfg` by `ctx.manager` over `live` (the object as stored, or a skeleton
 * when creating). Throws a 409 listing the conflicting fields when another manager owns a field
 * the configuration sets to a different value and `force` is false; with `force` it takes them.
 */
export function serverSideApply(
  live: KubeObject,
  managers: readonly Manager[],
  cfg: JsonObject,
  force: boolean,
  ctx: WriteContext,
): { object: KubeObject; managers: Manager[] } {
  const out = managers.map((m) => ({ ...m, fields: new Set(m.fields) }));
  const sub = ctx.scope === "status" ? "status" : "";
  const want = fieldsOf(cfg, ctx.kind, ctx.scope);
  const have = fieldsOf(live, ctx.kind, ctx.scope);
  const conflicts: { path: string; owner: Manager }[] = [];
  for (const m of out) {
    if (m.manager === ctx.manager) continue;
    for (const [p, v] of want) {
      if (v === MARKER || !m.fields.has(p)) continue;
      const cur = have.get(p);
      if (cur === MARKER || !jsonEqual(v, cur)) conflicts.push({ path: p, owner: m });
    }
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts, ctx);
  for (const c of conflicts) c.owner.fields.delete(c.path);

  const mine = entryFor(out, ctx.manager, "Apply", sub, ctx.apiVersion, ctx.now);
  const object = clone(live);
  for (const p of mine.fields) {
    if (want.has(p)) continue;
    if (out.some((m) => m !== mine && m.fields.has(p))) continue;
    deleteAt(object, JSON.parse(p) as string[]);
  }
  const part = scoped(cfg, ctx.kind, ctx.scope);
  applyMerge(object, part, ctx.kind, "");
  const next = new Set(want.keys());
  if (!setEqual(next, mine.fields)) {
    mine.fields = next;
    mine.time = ctx.now;
    mine.apiVersion = ctx.apiVersion;
  }
  return { object, managers: out.filter((m) => m.fields.size > 0) };
}

function conflictError(conflicts: { path: string; owner: Manager }[], ctx: WriteContext): ApiError {
  const byOwner = new Map<string, string[]>();
  for (const c of conflicts) {
    const who = `"${c.owner.manager}" using ${c.owner.apiVersion}`;
    byOwner.set(who, [...(byOwner.get(who) ?? []), pathString(c.path)]);
  }
  const n = conflicts.length;
  const parts = [...byOwner].map(([who, paths]) =>
    paths.length === 1
      ? `conflict with ${who}: ${paths[0] ?? ""}`
      : `conflicts with ${who}:\n${paths.map((p) => `- ${p}`).join("\n")}`,
  );
  const name = ctx.kind.kind;
  return new ApiError(409, "Conflict", `Apply failed with ${n} conflict${n === 1 ? "" : "s"}: ${parts.join("\n")}`, {
    kind: name,
    causes: conflicts.map((c) => ({
      type: "FieldManagerConflict",
      message: `conflict with "${c.owner.manager}" using ${c.owner.apiVersion}`,
      field: pathString(c.path),
    })),
  });
}

/** metadata.managedFields as kube-apiserver renders it (FieldsV1 trie, "." marking a member with children). */
export function renderManagedFields(managers: readonly Manager[]): ManagedFieldsEntry[] {
  return managers.map((m) => {
    const e: ManagedFieldsEntry = {
      manager: m.manager,
      operation: m.operation,
      apiVersion: m.apiVersion,
      time: m.time,
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(m.fields),
    };
    if (m.subresource !== "") e.subresource = m.subresource;
    return e;
  });
}

interface Trie {
  member: boolean;
  children: Map<string, Trie>;
}

function toFieldsV1(paths: ReadonlySet<string>): JsonObject {
  const root: Trie = { member: false, children: new Map() };
  for (const p of paths) {
    let node = root;
    for (const pe of JSON.parse(p) as string[]) {
      let next = node.children.get(pe);
      if (next === undefined) {
        next = { member: false, children: new Map() };
        node.children.set(pe, next);
      }
      node = next;
    }
    node.member = true;
  }
  const emit = (n: Trie): JsonObject => {
    const o: JsonObject = {};
    if (n.member && n.children.size > 0) o["."] = {};
    for (const k of [...n.children.keys()].sort()) {
      const c = n.children.get(k);
      if (c !== undefined) o[k] = emit(c);
    }
    return o;
  };
  return emit(root);
}
