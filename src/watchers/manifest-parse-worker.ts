// The parse worker's thread (./manifest-parse-pool.ts): YAML text in, plain objects out. A
// YAML node cannot cross threads, so objects of our kinds carry the positions of their fields, or
// the document they were read plainly from.
import { parentPort } from "node:worker_threads";
import { fieldPositions } from "./manifest-sources.js";
import { parseDocument, parseWholeManifestFile, type ParsedFile, type ParsedObject } from "./manifests.js";

/** What the main thread asks: each document's objects, or the whole file's parse. */
export type ParseRequest =
  | { readonly id: number; readonly path: string; readonly documents: readonly string[] }
  | { readonly id: number; readonly path: string; readonly whole: string };

export type ParseReply =
  | { readonly id: number; readonly documents: readonly (readonly WireObject[] | undefined)[] }
  | { readonly id: number; readonly whole: WireFile }
  | { readonly id: number; readonly failed: string };

/** A ParsedObject without its YAML node and line counter. */
export type WireObject = Omit<ParsedObject, "node" | "lines">;
export type WireFile = Omit<ParsedFile, "objects"> & { readonly objects: readonly WireObject[] };

function wire(o: ParsedObject): WireObject {
  const { node, lines, ...rest } = o;
  const ours = o.bucket === "infras" || o.bucket === "attachments";
  // A document read plainly travels as its text: its fields are found only if one is located.
  return ours && o.document === undefined ? { ...rest, fields: fieldPositions(node, lines) } : rest;
}

function reply(request: ParseRequest): ParseReply {
  try {
    if ("whole" in request) {
      const parsed = parseWholeManifestFile({ path: request.path, text: request.whole });
      return { id: request.id, whole: { ...parsed, objects: parsed.objects.map(wire) } };
    }
    return { id: request.id, documents: request.documents.map((t) => parseDocument(request.path, t)?.map(wire)) };
  } catch (e) {
    return { id: request.id, failed: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}

parentPort?.on("message", (request: ParseRequest) => {
  parentPort?.postMessage(reply(request));
});
