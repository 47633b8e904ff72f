// A small Kubernetes REST client on node:http(s) whose every request gets its TLS material, auth headers
// and agent (an HTTP CONNECT or SOCKS agent for proxy-url) from client-node's KubeConfig
// (kubeconfig.ts builds it). Requests still go through node:http(s) rather than client-node's generated
// clients, Watch and informers: the reflector needs bookmarks, paginated lists and a watchdog on a silent
// connection, and the operator's writes (server-side apply, status subresources, generic pruning) are
// plain REST calls on paths it already knows, each explicit (RBAC is derived from them) and testable.
// Moving the transport to client-node's APIs is the next step of issue 26.
import { Agent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { createInterface } from "node:readline";
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
  /** The agent of the current TLS material (an exec plugin may hand out a new certificate). */
  #agent: { material: string; agent: Agent } | undefined;

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
   * Streams a watch: calls onEvent per line until the server ends the stream (resolves) or the
   * connection fails (rejects). An error status before the stream starts rejects with KubeApiError.
   * Abort `signal` to end it (resolves).
   */
  async watch(
    path: string,
    query: Readonly<Record<string, string | undefined>>,
    onEvent: (e: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    let res: IncomingMessage;
    try {
      res = await this.#send({ method: "GET", path, query: { ...query, watch: "true" }, signal }, 0);
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    }
    const code = res.statusCode ?? 0;
    this.#onResponse?.("WATCH", path, code);
    if (code >= 400) throw apiError(code, await readAll(res));
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      let failed: unknown;
      lines.on("line", (line) => {
        if (line.trim() === "" || failed !== undefined) return;
        try {
          onEvent(JSON.parse(line) as WatchEvent);
        } catch (e) {
          failed = e;
          res.destroy();
        }
      });
      res.on("aborted", () => {
        failed ??= new Error("watch connection reset");
      });
      res.on("error", (e) => {
        failed ??= e;
      });
      // readline re-emits its input's errors; unhandled, that would throw.
      lines.on("error", (e) => {
        failed ??= e;
      });
      let settled = false;
      const settle = (): void => {
        if (settled) return;
        settled = true;
        lines.close();
        if (signal.aborted) resolve();
        else if (failed !== undefined) reject(failed instanceof Error ? failed : new Error("watch stream failed"));
        else if (!res.complete) reject(new Error("watch connection reset"));
        else resolve();
      };
      // A destroyed response ends readline without "end"; "close" always comes.
      lines.on("close", settle);
      res.on("close", settle);
      // The request's own signal does not end a response already streaming.
      const stop = (): void => {
        res.destroy();
      };
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
      res.on("close", () => {
        signal.removeEventListener("abort", stop);
      });
    });
  }

  async #send(req: KubeRequest, timeoutMs: number): Promise<IncomingMessage> {
    const url = new URL(this.#config.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const opts: RequestOptions = { headers: {} };
    await this.#config.kubeConfig.applyToHTTPSOptions(opts);
    const headers: OutgoingHttpHeaders = {
      Accept: "application/json",
      ...(opts.headers as OutgoingHttpHeaders),
      ...(this.#config.headers as OutgoingHttpHeaders),
    };
    if (body !== undefined) {
      headers["Content-Type"] = req.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(body));
    }
    const agent = this.#agentFor(opts);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const r = send(
        url,
        {
          method: req.method,
          headers,
          agent,
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

  /**
   * client-node builds a new agent for every request (applyToHTTPSOptions), without keep-alive: each
   * request would open its own TLS connection. The first agent of each TLS material is kept instead,
   * keep-alive switched on (client-node's builder is private, so its agent is adjusted, not rebuilt).
   */
  #agentFor(opts: RequestOptions): Agent {
    const built = opts.agent;
    // https.Agent, or for proxy-url hpagent's or socks-proxy-agent's, all node:http Agents.
    if (!(built instanceof Agent)) throw new Error("client-node built no agent");
    const material = [opts.ca, opts.cert, opts.key, opts.servername, opts.rejectUnauthorized]
      .map((v) => (Buffer.isBuffer(v) ? v.toString("latin1") : v === undefined ? "" : JSON.stringify(v)))
      .join("\0");
    if (this.#agent?.material !== material) {
      // Idle connections of the old material go; open watches keep theirs until they end
      // (Agent.destroy would close those too).
      for (const sockets of Object.values(this.#agent?.agent.freeSockets ?? {}))
        for (const s of sockets ?? []) s.destroy();
      Object.assign(built, { keepAlive: true });
      this.#agent = { material, agent: built };
    }
    return this.#agent.agent;
  }
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
