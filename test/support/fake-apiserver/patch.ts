// JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch treated as merge patch.
import { ApiError, badRequest } from "./errors.js";
import type { Json, JsonObject } from "./types.js";
import { clone, isObject, jsonEqual } from "./types.js";

/** RFC 7386: objects merge recursively, null deletes, anything else (lists included) replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) Reflect.deleteProperty(out, k);
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * Strategic merge patch, simplified: a JSON merge patch after dropping `$`-directives
 * (`$setElementOrder/...`, `$retainKeys`, `$patch`), so lists are replaced, not merged by key.
 */
export function strategicMergePatch(target: Json | undefined, patch: Json): Json {
  return mergePatch(target, stripDirectives(patch));
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith("$") && x !== undefined) out[k] = stripDirectives(x);
  return out;
}

function unescape(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

function parsePointer(p: unknown): string[] {
  if (typeof p !== "string" || (p !== "" && !p.startsWith("/"))) throw badRequest(`invalid JSON pointer: ${String(p)}`);
  return p === "" ? [] : p.slice(1).split("/").map(unescape);
}

function failed(msg: string): ApiError {
  return new ApiError(422, "Invalid", `the server rejected our request due to an error in our request: ${msg}`);
}

function getAt(doc: Json, path: readonly string[]): Json {
  let cur: Json | undefined = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isObject(cur)) cur = cur[seg];
    else cur = undefined;
    if (cur === undefined) throw failed(`path /${path.join("/")} does not exist`);
  }
  return cur;
}

function parentOf(doc: Json, path: readonly string[]): { parent: Json; last: string } {
  if (path.length === 0) throw failed("cannot address the document root here");
  return { parent: getAt(doc, path.slice(0, -1)), last: path[path.length - 1] ?? "" };
}

function add(doc: Json, path: readonly string[], value: Json): Json {
  if (path.length === 0) return value;
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) {
    const i = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length) throw failed(`index ${last} out of range`);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) parent[last] = value;
  else throw failed(`cannot add below a scalar at /${path.join("/")}`);
  return doc;
}

function remove(doc: Json, path: readonly string[]): Json {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length) throw failed(`index ${last} out of range`);
    parent.splice(i, 1);
  } else if (isObject(parent) && parent[last] !== undefined) Reflect.deleteProperty(parent, last);
  else throw failed(`path /${path.join("/")} does not exist`);
  return doc;
}

/** RFC 6902 JSON patch; a failed `test` or a missing path is a 422. */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest("json patch must be a list of operations");
  let doc = clone(target);
  for (const op of ops) {
    if (!isObject(op)) throw badRequest("json patch operation must be an object");
    const path = parsePointer(op["path"]);
    const value = op["value"] ?? null;
    switch (op["op"]) {
      case "add":
        doc = add(doc, path, clone(value));
        break;
      case "remove":
        doc = remove(doc, path);
        break;
      case "replace":
        getAt(doc, path);
        doc = path.length === 0 ? clone(value) : add(remove(doc, path), path, clone(value));
        break;
      case "move": {
        const from = parsePointer(op["from"]);
        const v = getAt(doc, from);
        doc = add(remove(doc, from), path, v);
        break;
      }
      case "copy":
        doc = add(doc, path, clone(getAt(doc, parsePointer(op["from"]))));
        break;
      case "test":
        if (!jsonEqual(getAt(doc, path), value)) throw failed(`test operation failed at /${path.join("/")}`);
        break;
      default:
        throw badRequest(`unknown json patch operation ${JSON.stringify(op["op"] ?? null)}`);
    }
  }
  return doc;
}
