// Kubernetes-shaped failures: every error leaves the fake as a meta/v1 Status body.
import type { JsonObject, ResourceKind } from "./types.js";

/** metav1.StatusReason values the fake produces. */
export type StatusReason =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Invalid"
  | "BadRequest"
  | "Forbidden"
  | "MethodNotAllowed"
  | "UnsupportedMediaType"
  | "Expired"
  | "Gone"
  | "InternalError"
  | "ServiceUnavailable"
  | "NotAcceptable"
  | "Timeout";

/** One metav1.StatusCause (details.causes[]). */
export interface StatusCause {
  type?: string;
  message: string;
  field?: string;
}

/** An API failure carrying the Status the server answers with. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] },
  ) {
    super(message);
  }

  /** The meta/v1 Status object for this error. */
  status(): JsonObject {
    return statusBody(this.code, this.reason, this.message, this.details);
  }
}

/** A meta/v1 Status object with status Failure. */
export function statusBody(
  code: number,
  reason: StatusReason,
  message: string,
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] },
): JsonObject {
  const body: JsonObject = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  if (details !== undefined) body["details"] = JSON.parse(JSON.stringify(details)) as JsonObject;
  return body;
}

const res = (k: ResourceKind): string => (k.group === "" ? k.plural : `${k.plural}.${k.group}`);

/** 404 `<resource> "<name>" not found`. */
export function notFound(k: Pick<ResourceKind, "group" | "plural">, name: string): ApiError {
  return new ApiError(404, "NotFound", `${res(k as ResourceKind)} "${name}" not found`, {
    name,
    group: k.group,
    kind: k.plural,
  });
}

/** 409 AlreadyExists on create. */
export function alreadyExists(k: ResourceKind, name: string): ApiError {
  return new ApiError(409, "AlreadyExists", `${res(k)} "${name}" already exists`, {
    name,
    group: k.group,
    kind: k.plural,
  });
}

/** 409 Conflict: optimistic-concurrency failure on resourceVersion (or a forced one from a fault hook). */
export function rvConflict(k: ResourceKind, name: string): ApiError {
  return new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${res(k)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: k.group, kind: k.plural },
  );
}

/** 422 Invalid with field causes. */
export function invalid(k: ResourceKind, name: string, causes: StatusCause[]): ApiError {
  const what = k.group === "" ? k.kind : `${k.kind}.${k.group}`;
  return new ApiError(
    422,
    "Invalid",
    `${what} "${name}" is invalid: ${causes.map((c) => `${c.field ?? ""}: ${c.message}`).join(", ")}`,
    { name, group: k.group, kind: k.kind, causes: causes.map((c) => ({ type: "FieldValueInvalid", ...c })) },
  );
}

/** 400 BadRequest. */
export function badRequest(message: string): ApiError {
  return new ApiError(400, "BadRequest", message);
}

/** 410 Expired: a watch or list asked for a resourceVersion older than the retained history. */
export function expired(message: string): ApiError {
  return new ApiError(410, "Expired", message);
}

/** 500 InternalError as the server reports unexpected failures. */
export function internalError(message: string): ApiError {
  return new ApiError(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] });
}
