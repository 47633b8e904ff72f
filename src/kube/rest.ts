// A small Kubernetes REST client. Every request takes its TLS material, credentials, impersonation
// headers and agent (an HTTP CONNECT or SOCKS agent for proxy-url) from client-node's KubeConfig
// (kubeconfig.ts and adapted-kubeconfig.ts build it); every watch streams through client-node's Watch,
// adapted (watchThrough) so a reflector can tell a clean end, a cut connection, a refusal and its own
// failure apart.
import { STATUS_CODES } from "node:http";
import {
  createConfiguration,
  HttpMethod,
  ServerConfiguration,
  Watch,
  wrapHttpLibrary,
  Observable,
  type Configuration,
  type ConfigurationOptions,
  type ResponseContext,
} from "@kubernetes/client-node";
import { KubeHttpLibrary } from "./http-library.js";
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
  /**
   * client-node's configuration for its generated API clients (`api(CoordinationV1Api)`): requests go
   * through KubeHttpLibrary; an error status is a KubeApiError, as from `request`.
   */
  readonly configuration: Configuration;
  readonly #config: KubeClientConfig;
  readonly #onResponse: ((method: string, path: string, status: number) => void) | undefined;

  constructor(config: KubeClientConfig, opts: KubeRestOptions = {}) {
    this.#config = config;
    this.#onResponse = opts.onResponse;
    const library = new KubeHttpLibrary(config, {
      timeoutMs: opts.requestTimeoutMs ?? 30_000,
      ...(opts.onResponse === undefined ? {} : { onResponse: opts.onResponse }),
    });
    this.configuration = createConfiguration({
      baseServer: new ServerConfiguration(config.server, {}),
      httpApi: wrapHttpLibrary(library),
      // KubeHttpLibrary applies the KubeConfig's credentials to every request itself.
      authMethods: {},
      promiseMiddleware: [{ pre: (ctx) => Promise.resolve(ctx), post: refusedAsKubeApiError }],
    });
  }

  /** A client-node generated API client (CoreV1Api, CoordinationV1Api, …) on this configuration. */
  api<T>(Api: new (configuration: Configuration) => T): T {
    return new Api(this.configuration);
  }

  /** A request's JSON answer; throws KubeApiError on an error status. */
  async request<T = KubeObject>(req: KubeRequest): Promise<T> {
    const text = await this.text(req);
    return (text === "" ? {} : JSON.parse(text)) as T;
  }

  /** A request's plain-text answer (e.g. pods/log); throws KubeApiError on an error status. */
  async text(req: KubeRequest): Promise<string> {
    const ctx = this.configuration.baseServer.makeRequestContext(req.path, HttpMethod[req.method]);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) ctx.setQueryParam(k, v);
    ctx.setHeaderParam("Accept", "application/json");
    if (req.body !== undefined) {
      ctx.setHeaderParam("Content-Type", req.contentType ?? "application/json");
      ctx.setBody(JSON.stringify(req.body));
    }
    if (req.signal !== undefined) ctx.setSignal(req.signal);
    const res = await this.configuration.httpApi.send(ctx).toPromise();
    const text = await res.body.text();
    if (res.httpStatusCode >= 400) throw apiError(res.httpStatusCode, text);
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
}

/**
 * One watch through client-node's Watch, adapted where its 1.4 behaviour would mislead a reflector:
 * - it swallows an exception thrown by the event handler: here that ends the watch and rejects with it,
 *   so the reflector re-lists instead of carrying on without the event;
 * - a refused watch comes back as its status text only: here a KubeApiError with the code (410 tells the
 *   reflector to re-list) naming the path;
 * - ending the watch ourselves comes back as an AbortError: here it resolves — at once, also before
 *   the answer started, when client-node has no way yet to end the request.
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
    // Ends the watch even before client-node hands out its controller (the answer has not started):
    // the request is then ended as soon as it does, or fails at its deadline.
    const stop = (): void => {
      controller?.abort();
      finish(null);
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

/**
 * Per-call options of a generated API client's request that end it when `signal` aborts (client-node's
 * generated methods take no signal of their own).
 */
export function withSignal(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (signal === undefined) return undefined;
  return {
    middleware: [
      {
        pre: (ctx) => {
          ctx.setSignal(signal);
          return new Observable(Promise.resolve(ctx));
        },
        post: (res) => new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: "append",
  };
}

/** The post-middleware of KubeRest's configuration: an error status becomes a KubeApiError. */
async function refusedAsKubeApiError(res: ResponseContext): Promise<ResponseContext> {
  if (res.httpStatusCode >= 400) throw apiError(res.httpStatusCode, await res.body.text());
  return res;
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
