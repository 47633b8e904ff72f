// A small Kubernetes REST client. Every request takes its TLS material, credentials, impersonation
// headers and agent (an HTTP CONNECT or SOCKS agent for proxy-url) from client-node's KubeConfig
// (kubeconfig.ts and adapted-kubeconfig.ts build it); every watch streams through client-node's Watch,
// adapted (watchThrough) so a reflector can tell a clean end, a cut connection, a refusal and its own
// failure apart.
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { STATUS_CODES } from "node:http";
import { Watch } from "@kubernetes/client-node";
import type { KubeClientConfig } from "./kubeconfig.js";

/** An API call the server answered with an error status (a metav1.Status body when it gave one). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}

/** HTTP status of an API error, or undefined for transport failures (refused, reset, timeout). */
export function statusCode(e: unknown): number | undefined {
  return e instanceof KubeApiError ? e.code : undefined;
}

/** A JSON object as the API returns it. */
export type KubeObject = Record<string, unknown> & { metadata?: KubeMetadata };

/** The metadata fields the watchers and the operator read. */
export interface KubeMetadata {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: { uid?: string; kind?: string; name?: string }[];
}

/** One REST call. */
export interface KubeRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute API path, e.g. /apis/apps/v1/namespaces/x/deployments/y. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  /** Content type of the body (default application/json). */
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

/** One watch event line. */
export interface WatchEvent {
  readonly type: string;
  readonly object: KubeObject;
}

/** Options of KubeRest. */
export interface KubeRestOptions {
  /** Gives up on a non-watch request after this long (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Told about every answered request (status 0 = transport failure), for metrics. */
  readonly onResponse?: (method: string, path: string, status: number) => void;
}

/** REST access to one API server as one user. */
export class KubeRest {
  readonly #config: KubeClientConfig;
  readonly #timeoutMs: number;
  readonly #onResponse: ((method: string, path: string, status: number) => void) | undefined;

  constructor(config: KubeClientConfig, opts: KubeRestOptions = {}) {
    this.#config = config;
    this.#timeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.#onResponse = opts.onResponse;
  }

  /** A request's JSON answer; throws KubeApiError on an error status. */
  async request<T = KubeObject>(req: KubeRequest): Promise<T> {
    const res = await this.#send(req, this.#timeoutMs);
    const text = await readAll(res);
    const code = res.statusCode ?? 0;
    this.#onResponse?.(req.method, req.path, code);
    if (code >= 400) throw apiError(code, text);
    return (text === "" ? {} : JSON.parse(text)) as T;
  }

  /** A request's plain-text answer (e.g. pods/log); throws KubeApiError on an error status. */
  async text(req: KubeRequest): Promise<string> {
    const res = await this.#send(req, this.#timeoutMs);
    const text = await readAll(res);
    const code = res.statusCode ?? 0;
    this.#onResponse?.(req.method, req.path, code);
    if (code >= 400) throw apiError(code, text);
    return text;
  }

  /**
   * Streams a watch through client-node's Watch: calls onEvent per event until the server ends the
   * stream (resolves) or the connection fails (rejects). An error status before the stream starts
   * rejects with KubeApiError; so does an exception thrown by onEvent (the watch is ended). Abort
   * `signal` to end it (resolves).
   */
  async watch(
    path: string,
    query: Readonly<Record<string, string | undefined>>,
    onEvent: (e: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) return;
    await watchThrough(new Watch(this.#config.kubeConfig), path, query, onEvent, signal, (code) => {
      this.#onResponse?.("WATCH", path, code);
      if (code === 401) this.#config.refused();
    });
  }

  async #send(req: KubeRequest, timeoutMs: number): Promise<IncomingMessage> {
    const url = new URL(this.#config.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    // TLS material, credentials, impersonation headers and the shared agent: client-node's.
    const opts: RequestOptions = { headers: {} };
    await this.#config.kubeConfig.applyToHTTPSOptions(opts);
    const headers: OutgoingHttpHeaders = { Accept: "application/json", ...(opts.headers as OutgoingHttpHeaders) };
    if (body !== undefined) {
      headers["Content-Type"] = req.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const r = send(
        url,
        {
          method: req.method,
          headers,
          ...(opts.agent === undefined ? {} : { agent: opts.agent }),
          ...(opts.auth === undefined || opts.auth === null ? {} : { auth: opts.auth }),
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        },
        resolve,
      );
      if (timeoutMs > 0)
        r.setTimeout(timeoutMs, () => {
          r.destroy(new Error(`${req.method} ${req.path}: no answer in ${timeoutMs} ms`));
        });
      r.on("error", (e) => {
        this.#onResponse?.(req.method, req.path, 0);
        reject(e);
      });
      r.end(body);
    }).then((res) => {
      // A refused token or certificate: read the token file or run the exec plugin again next time.
      if (res.statusCode === 401) this.#config.refused();
      return res;
    });
  }
}

/**
 * One watch through client-node's Watch, adapted where its 1.4 behaviour would mislead a reflector:
 * - it swallows an exception thrown by the event handler: here that ends the watch and rejects with it,
 *   so the reflector re-lists instead of carrying on without the event;
 * - a refused watch comes back as its status text only: here a KubeApiError with the code (410 tells the
 *   reflector to re-list) naming the path;
 * - ending the watch ourselves comes back as an AbortError: here it resolves.
 * A line that is not JSON is skipped inside client-node, out of reach: the API server writes none, and a
 * connection cut mid-line ends the stream ("Premature close"), which rejects.
 * `onStatus` is told the answer's status code (0: no answer).
 */
export function watchThrough(
  watch: Pick<Watch, "watch">,
  path: string,
  query: Readonly<Record<string, string | undefined>>,
  onEvent: (e: WatchEvent) => void,
  signal: AbortSignal,
  onStatus: (code: number) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let controller: AbortController | undefined;
    let failure: Error | undefined;
    let settled = false;
    const stop = (): void => {
      controller?.abort();
    };
    const finish = (err: unknown): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", stop);
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      if (signal.aborted || err === null || err === undefined) {
        resolve();
        return;
      }
      const code = (err as { statusCode?: unknown }).statusCode;
      if (typeof code === "number") {
        onStatus(code);
        const text = err instanceof Error && err.message !== "" ? err.message : (STATUS_CODES[code] ?? "");
        reject(new KubeApiError(code, "", `watch ${path}: ${String(code)} ${text}`));
        return;
      }
      onStatus(0);
      reject(err instanceof Error ? err : new Error(`watch ${path} failed`));
    };
    signal.addEventListener("abort", stop, { once: true });
    void watch
      .watch(
        path,
        query,
        (type: string, object: KubeObject) => {
          if (failure !== undefined || settled) return;
          try {
            onEvent({ type, object });
          } catch (e) {
            failure = e instanceof Error ? e : new Error(String(e));
            controller?.abort();
          }
        },
        finish,
      )
      .then((c) => {
        controller = c;
        // Still open here means the server answered 200 (any other answer has called `finish`).
        if (!settled) onStatus(200);
        if (signal.aborted || failure !== undefined) c.abort();
      }, finish);
  });
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => {
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    res.on("error", reject);
  });
}

function apiError(code: number, text: string): KubeApiError {
  try {
    const s = JSON.parse(text) as { reason?: unknown; message?: unknown };
    return new KubeApiError(
      code,
      typeof s.reason === "string" ? s.reason : "",
      typeof s.message === "string" ? s.message : text,
    );
  } catch {
    return new KubeApiError(code, "", text.slice(0, 200));
  }
}

/** The error a watch ERROR event carries (a metav1.Status object). */
export function watchError(obj: KubeObject): KubeApiError {
  const code = typeof obj["code"] === "number" ? obj["code"] : 500;
  return new KubeApiError(
    code,
    typeof obj["reason"] === "string" ? obj["reason"] : "",
    typeof obj["message"] === "string" ? obj["message"] : "watch error",
  );
}
