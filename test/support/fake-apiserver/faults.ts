// Request accounting and injected failures for fault tests.
import type { ApiError } from "./errors.js";

/** Kubernetes authorization verbs, plus "discovery" for non-resource paths (/api, /apis, /version, /openapi). */
export type Verb =
  "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection" | "discovery";

/** Verbs that change state. */
export const WRITE_VERBS: ReadonlySet<Verb> = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** One request as the fake saw it. */
export interface RequestRecord {
  verb: Verb;
  method: string;
  /** URL path without the query. */
  path: string;
  query: URLSearchParams;
  /** Resource plural (with "/status" for the subresource), undefined for non-resource paths. */
  resource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  /** Patch content type or request content type, when there was a body. */
  contentType?: string;
  fieldManager?: string;
  /** Status code answered (0 while a watch is still streaming). */
  status: number;
  /**
   * Milliseconds from the request's arrival to its answer (for a watch: until its stream opened), set
   * once answered. Benchmarks report it; tests must not assert it (wall-clock).
   */
  ms?: number;
}

/** Which requests a hook applies to; every given criterion must hold. */
export interface RequestMatch {
  verb?: Verb | readonly Verb[];
  /** Exact path, a RegExp tested against the path, or a predicate. */
  path?: string | RegExp;
  /** Resource plural, e.g. "deployments" or "infras/status". */
  resource?: string;
  test?: (r: RequestRecord) => boolean;
}

/** True when the request satisfies the match. */
export function matches(m: RequestMatch | undefined, r: RequestRecord): boolean {
  if (m === undefined) return true;
  if (m.verb !== undefined && !(typeof m.verb === "string" ? m.verb === r.verb : m.verb.includes(r.verb))) return false;
  if (m.path !== undefined && !(typeof m.path === "string" ? m.path === r.path : m.path.test(r.path))) return false;
  if (m.resource !== undefined && m.resource !== r.resource) return false;
  return m.test === undefined || m.test(r);
}

/** Every request served since start or the last clear(), for assertions such as "no writes while idle". */
export class RequestLog {
  private entries: RequestRecord[] = [];

  /** Records one request (called by the server). */
  add(r: RequestRecord): void {
    this.entries.push(r);
  }

  /** All recorded requests, optionally filtered. */
  all(m?: RequestMatch): RequestRecord[] {
    return this.entries.filter((r) => matches(m, r));
  }

  /** How many recorded requests match. */
  count(m?: RequestMatch): number {
    return this.all(m).length;
  }

  /** State-changing requests (create, update, patch, delete, deletecollection). */
  writes(): RequestRecord[] {
    return this.entries.filter((r) => WRITE_VERBS.has(r.verb));
  }

  /** Counts by `"<verb> <resource or path>"`, handy in failure messages. */
  summary(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.entries) {
      const key = `${r.verb} ${r.resource ?? r.path}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  }

  /** Forgets everything recorded so far. */
  clear(): void {
    this.entries = [];
  }
}

/** A pending injected failure. */
interface Injection {
  remaining: number;
  match: RequestMatch | undefined;
  error: () => ApiError;
}

/** Queue of injected failures; the server asks it before serving each request. */
export class FaultQueue {
  private readonly injections: Injection[] = [];
  private expiries: { remaining: number; as: "event" | "http"; match: RequestMatch | undefined }[] = [];

  /** Fails the next `count` matching requests with the given error. */
  add(count: number, match: RequestMatch | undefined, error: () => ApiError): void {
    this.injections.push({ remaining: count, match, error });
  }

  /** Makes the next `count` matching watches fail with 410 Expired, in the stream or as the HTTP status. */
  expireWatches(count: number, as: "event" | "http", match: RequestMatch | undefined): void {
    this.expiries.push({ remaining: count, as, match });
  }

  /** The injected error for this request, consuming one use, if any. */
  take(r: RequestRecord): ApiError | undefined {
    const i = this.injections.find((x) => x.remaining > 0 && matches(x.match, r));
    if (i === undefined) return undefined;
    i.remaining--;
    return i.error();
  }

  /** Whether this watch must be answered with 410, consuming one use. */
  takeExpiry(r: RequestRecord): "event" | "http" | undefined {
    const e = this.expiries.find((x) => x.remaining > 0 && matches(x.match, r));
    if (e === undefined) return undefined;
    e.remaining--;
    return e.as;
  }

  /** Drops every pending injection. */
  clear(): void {
    this.injections.length = 0;
    this.expiries = [];
  }
}
