// The OpenAPI documents kubectl reads before `apply`, reduced to what it looks for:
//  - v3 (kubectl ≥ 1.27): per group-version, one PATCH operation per kind tagged with
//    x-kubernetes-group-version-kind and declaring the `fieldValidation` query parameter, so kubectl
//    leaves validation to the server (sending fieldValidation=Strict) instead of validating locally.
//  - v2 (older kubectl): an empty Swagger document; kubectl's local validator skips kinds it has no
//    schema for. kubectl asks for it as protobuf (gnostic openapi_v2.Document), so that is encoded here.
import { createHash } from "node:crypto";
import type { JsonObject, ResourceKind } from "./types.js";

/** Media type kubectl ≤ 1.26 asks /openapi/v2 for. */
export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

function gvPath(k: ResourceKind): string {
  return k.group === "" ? `api/${k.version}` : `apis/${k.group}/${k.version}`;
}

/** GET /openapi/v2 as JSON: a Swagger 2.0 document without definitions. */
export function openApiV2(): JsonObject {
  return { swagger: "2.0", info: { title: "Kubernetes (oooi fake)", version: "v1.31.0" }, paths: {}, definitions: {} };
}

// Protobuf wire format, length-delimited fields only: enough for strings and nested messages.
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

function lengthDelimited(field: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(payload.length), payload]);
}

/** GET /openapi/v2 as protobuf: openapi_v2.Document{swagger: "2.0", info: {title, version}}. */
export function openApiV2Protobuf(): Buffer {
  const info = Buffer.concat([
    lengthDelimited(1, Buffer.from("Kubernetes (oooi fake)")),
    lengthDelimited(2, Buffer.from("v1.31.0")),
  ]);
  return Buffer.concat([lengthDelimited(1, Buffer.from("2.0")), lengthDelimited(2, info)]);
}

/** GET /openapi/v3/<gv path>: the operations kubectl inspects for one group-version, or undefined. */
export function openApiV3Group(kinds: readonly ResourceKind[], path: string): JsonObject | undefined {
  const ks = kinds.filter((k) => gvPath(k) === path);
  if (ks.length === 0) return undefined;
  const paths: JsonObject = {};
  const schemas: JsonObject = {};
  const queryParam = (name: string): JsonObject => ({
    name,
    in: "query",
    schema: { type: "string", uniqueItems: true },
  });
  for (const k of ks) {
    const gvk = { group: k.group, version: k.version, kind: k.kind };
    const base = `/${path}${k.namespaced ? "/namespaces/{namespace}" : ""}/${k.plural}/{name}`;
    const schemaName = `${k.group === "" ? "io.k8s.api.core" : k.group}.${k.version}.${k.kind}`;
    paths[base] = {
      patch: {
        operationId: `patch${k.kind}`,
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": gvk,
        parameters: ["dryRun", "fieldManager", "fieldValidation", "force"].map(queryParam),
        requestBody: { content: { "application/apply-patch+yaml": { schema: { type: "object" } } }, required: true },
        responses: {
          "200": {
            description: "OK",
            content: { "application/json": { schema: { $ref: `#/components/schemas/${schemaName}` } } },
          },
        },
      },
    };
    schemas[schemaName] = {
      type: "object",
      "x-kubernetes-group-version-kind": [gvk],
      properties: { apiVersion: { type: "string" }, kind: { type: "string" }, metadata: { type: "object" } },
    };
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes (oooi fake)", version: "v1.31.0" },
    paths,
    components: { schemas },
  };
}

/** GET /openapi/v3: the index of group-version documents with content hashes. */
export function openApiV3Index(kinds: readonly ResourceKind[]): JsonObject {
  const paths: JsonObject = {};
  for (const p of [...new Set(kinds.map(gvPath))].sort()) {
    const hash = createHash("sha512")
      .update(JSON.stringify(openApiV3Group(kinds, p)))
      .digest("hex")
      .slice(0, 64)
      .toUpperCase();
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash}` };
  }
  return { paths };
}
