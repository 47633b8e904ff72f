// Kubernetes' structural-schema rules for CRD openAPIV3Schema (apiextensions.k8s.io/v1), as a
// checker the CRD test runs over every generated schema.
type Node = Record<string, unknown>;

const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);
const ALLOWED_KEYS = new Set([
  "description",
  "type",
  "format",
  "enum",
  "default",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "multipleOf",
  "nullable",
  "title",
  "example",
  "externalDocs",
  "items",
  "properties",
  "required",
  "additionalProperties",
]);
/** Keys the API server rejects outright in a v1 CRD schema. */
const FORBIDDEN_KEYS = ["$ref", "$schema", "id", "definitions", "dependencies", "additionalItems", "patternProperties"];
/** Allowed by Kubernetes only in restricted forms; we never need them, so any use is flagged. */
const JUNCTORS = ["allOf", "anyOf", "oneOf", "not"];
const SCALAR_TYPES = new Set(["string", "integer", "number", "boolean"]);

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every rule violation in a CRD's openAPIV3Schema, as "path: message". */
export function structuralViolations(root: unknown): string[] {
  const out: string[] = [];
  if (!isNode(root) || root["type"] !== "object") out.push("openAPIV3Schema: root must be type object");
  if (isNode(root)) {
    const meta = isNode(root["properties"]) ? root["properties"]["metadata"] : undefined;
    if (meta !== undefined) checkMetadata(meta, out);
    walk(root, "openAPIV3Schema", out);
  }
  return out;
}

/**
 * The root's metadata: type object, and restrictions on name and generateName only (string
 * schemas without a default); anything else the API server refuses.
 */
function checkMetadata(meta: unknown, out: string[]): void {
  const path = "openAPIV3Schema.properties.metadata";
  if (!isNode(meta) || meta["type"] !== "object") {
    out.push(`${path}: must be type object`);
    return;
  }
  for (const key of Object.keys(meta))
    if (key !== "type" && key !== "properties") out.push(`${path}: must not specify ${key}`);
  const props = isNode(meta["properties"]) ? meta["properties"] : {};
  for (const [k, v] of Object.entries(props)) {
    if (k !== "name" && k !== "generateName") out.push(`${path}.properties.${k}: only name and generateName`);
    else if (!isNode(v) || v["type"] !== "string") out.push(`${path}.properties.${k}: must be type string`);
    else if ("default" in v) out.push(`${path}.properties.${k}: must not have a default`);
  }
}

function walk(node: Node, path: string, out: string[]): void {
  if (Object.getOwnPropertySymbols(node).length > 0) out.push(`${path}: carries symbol keys (TypeBox internals)`);
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  const intOrString = node["x-kubernetes-int-or-string"] === true;
  const type = node["type"];
  if (typeof type !== "string" || !TYPES.has(type)) {
    if (!(preserve || intOrString)) out.push(`${path}: every node needs a type (got ${JSON.stringify(type)})`);
  }
  for (const key of Object.keys(node)) {
    if (FORBIDDEN_KEYS.includes(key)) out.push(`${path}: ${key} is forbidden`);
    else if (JUNCTORS.includes(key)) out.push(`${path}: ${key} is not used in structural schemas here`);
    else if (!ALLOWED_KEYS.has(key) && !key.startsWith("x-kubernetes-")) out.push(`${path}: unknown key ${key}`);
  }
  if (node["uniqueItems"] === true) out.push(`${path}: uniqueItems: true is forbidden`);
  if (node["additionalProperties"] === false) out.push(`${path}: additionalProperties: false is forbidden`);
  const props = node["properties"];
  const addl = node["additionalProperties"];
  if (props !== undefined && addl !== undefined)
    out.push(`${path}: properties and additionalProperties are mutually exclusive`);
  if ((props !== undefined || addl !== undefined) && type !== "object") out.push(`${path}: properties on a non-object`);
  if (node["items"] !== undefined && type !== "array") out.push(`${path}: items on a non-array`);
  if (type === "array" && !isNode(node["items"])) out.push(`${path}: array needs an items schema`);
  const required = node["required"];
  if (required !== undefined) {
    if (!Array.isArray(required) || required.length === 0) out.push(`${path}: required must be a non-empty list`);
    else
      for (const r of required) {
        if (typeof r !== "string" || !isNode(props) || !(r in props))
          out.push(`${path}: required ${String(r)} is not a property`);
      }
  }
  if (typeof node["pattern"] === "string") checkPattern(node["pattern"], path, out);
  if (Array.isArray(node["enum"])) {
    for (const v of node["enum"]) out.push(...validate(node, v, `${path}.enum`, { skipEnum: true }));
  }
  if ("default" in node) {
    out.push(...validate(node, node["default"], `${path}.default`, { skipEnum: false }));
    if (node["nullable"] !== true && node["default"] === null) out.push(`${path}: null default without nullable`);
  }
  checkListType(node, path, out);
  if (isNode(props))
    for (const [k, v] of Object.entries(props)) {
      if (isNode(v)) walk(v, `${path}.properties.${k}`, out);
      else out.push(`${path}.properties.${k}: not a schema`);
    }
  if (isNode(addl)) walk(addl, `${path}.additionalProperties`, out);
  if (isNode(node["items"])) walk(node["items"], `${path}.items`, out);
}

/** The API server compiles patterns with Go's RE2: no lookaround, no backreferences. */
function checkPattern(pattern: string, path: string, out: string[]): void {
  try {
    new RegExp(pattern, "u");
  } catch (e) {
    out.push(`${path}: pattern does not compile: ${(e as Error).message}`);
  }
  if (/\(\?[=!<]|\\[1-9]/.test(pattern)) out.push(`${path}: pattern uses lookaround or backreferences (not RE2)`);
}

/** x-kubernetes-list-type: map needs object items whose key fields are scalar and required or defaulted. */
function checkListType(node: Node, path: string, out: string[]): void {
  const listType = node["x-kubernetes-list-type"];
  const keys = node["x-kubernetes-list-map-keys"];
  if (listType === undefined) {
    if (keys !== undefined) out.push(`${path}: list-map-keys without list-type map`);
    return;
  }
  if (node["type"] !== "array") out.push(`${path}: x-kubernetes-list-type on a non-array`);
  if (listType !== "atomic" && listType !== "set" && listType !== "map")
    out.push(`${path}: unknown list-type ${JSON.stringify(listType)}`);
  if (listType !== "map") return;
  const items = node["items"];
  if (!isNode(items) || items["type"] !== "object" || !isNode(items["properties"])) {
    out.push(`${path}: list-type map needs object items`);
    return;
  }
  if (!Array.isArray(keys) || keys.length === 0) {
    out.push(`${path}: list-type map needs x-kubernetes-list-map-keys`);
    return;
  }
  const itemProps = items["properties"];
  const itemRequired = Array.isArray(items["required"]) ? items["required"] : [];
  for (const k of keys) {
    const key = String(k);
    const prop = itemProps[key];
    if (!isNode(prop)) {
      out.push(`${path}: map key ${key} is not a property of the items`);
      continue;
    }
    if (!SCALAR_TYPES.has(String(prop["type"]))) out.push(`${path}: map key ${key} must be scalar`);
    if (!itemRequired.includes(key) && !("default" in prop))
      out.push(`${path}: map key ${key} must be required or defaulted`);
  }
}

/**
 * Validates a value (a default or enum member) against a structural schema, as the API server
 * does for defaults: right type, constraints met, and nothing pruning would drop.
 */
export function validate(schema: Node, value: unknown, path: string, opts: { skipEnum: boolean }): string[] {
  const out: string[] = [];
  const type = schema["type"];
  const ok =
    type === "object"
      ? isNode(value)
      : type === "array"
        ? Array.isArray(value)
        : type === "integer"
          ? Number.isInteger(value)
          : type === "number"
            ? typeof value === "number"
            : typeof value === type;
  if (!ok) return [`${path}: ${JSON.stringify(value)} is not of type ${String(type)}`];
  if (!opts.skipEnum && Array.isArray(schema["enum"]) && !schema["enum"].includes(value)) {
    out.push(`${path}: ${JSON.stringify(value)} is not in the enum`);
  }
  if (typeof value === "string") {
    if (typeof schema["pattern"] === "string" && !new RegExp(schema["pattern"], "u").test(value))
      out.push(`${path}: does not match pattern`);
    if (typeof schema["minLength"] === "number" && value.length < schema["minLength"])
      out.push(`${path}: shorter than minLength`);
    if (typeof schema["maxLength"] === "number" && value.length > schema["maxLength"])
      out.push(`${path}: longer than maxLength`);
  }
  if (typeof value === "number") {
    if (typeof schema["minimum"] === "number" && value < schema["minimum"]) out.push(`${path}: below minimum`);
    if (typeof schema["maximum"] === "number" && value > schema["maximum"]) out.push(`${path}: above maximum`);
  }
  if (Array.isArray(value) && isNode(schema["items"])) {
    const items = schema["items"];
    value.forEach((v, i) => out.push(...validate(items, v, `${path}[${i}]`, { skipEnum: false })));
  }
  if (isNode(value)) {
    const props = isNode(schema["properties"]) ? schema["properties"] : undefined;
    const addl = isNode(schema["additionalProperties"]) ? schema["additionalProperties"] : undefined;
    for (const [k, v] of Object.entries(value)) {
      const sub = props?.[k] ?? addl;
      if (!isNode(sub)) {
        if (schema["x-kubernetes-preserve-unknown-fields"] !== true)
          out.push(`${path}.${k}: unknown field (would be pruned)`);
        continue;
      }
      out.push(...validate(sub, v, `${path}.${k}`, { skipEnum: false }));
    }
    for (const r of Array.isArray(schema["required"]) ? schema["required"] : []) {
      if (!(String(r) in value)) out.push(`${path}: missing required ${String(r)}`);
    }
  }
  return out;
}
