// The one way oooi's API requests reach the wire. client-node's generated clients (Leases, Events,
// reviews) and KubeRest both build a RequestContext; this library sends it on node:http(s) with what
// client-node's KubeConfig applies to a request (applyToHTTPSOptions: TLS material, credentials,
// impersonation, the shared keep-alive agent, a proxy-url agent). client-node's own fetch library is not
// used because a RequestContext's headers are one string per name: it cannot send Impersonate-Group once
// per group, and would take a new agent, and so a new TLS connection, per request.
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import {
  ResponseContext,
  SelfDecodingBody,
  type PromiseHttpLibrary,
  type RequestContext,
} from "@kubernetes/client-node";
import type { KubeClientConfig } from "./kubeconfig.js";

/** Options of KubeHttpLibrary. */
export interface KubeHttpLibraryOptions {
  /** Gives up on a request after this long. */
  readonly timeoutMs: number;
  /** Told about every answered request (status 0 = transport failure), for metrics. */
  readonly onResponse?: (method: string, path: string, status: number) => void;
}

/** Sends client-node's RequestContexts for one API server and user. */
export class KubeHttpLibrary implements PromiseHttpLibrary {
  readonly #config: KubeClientConfig;
  readonly #o: KubeHttpLibraryOptions;
  /** The server URL's own path (a proxy's prefix), left out of the paths reported. */
  readonly #prefix: number;

  constructor(config: KubeClientConfig, options: KubeHttpLibraryOptions) {
    this.#config = config;
    this.#o = options;
    this.#prefix = new URL(config.server).pathname.replace(/\/$/, "").length;
  }

  async send(ctx: RequestContext): Promise<ResponseContext> {
    const url = new URL(ctx.getUrl());
    const method = ctx.getHttpMethod().toString();
    const path = url.pathname.slice(this.#prefix);
    const raw = ctx.getBody();
    if (raw !== undefined && typeof raw !== "string") throw new Error("only JSON request bodies are sent");
    const opts: RequestOptions = { headers: {} };
    await this.#config.kubeConfig.applyToHTTPSOptions(opts);
    const headers: OutgoingHttpHeaders = { ...ctx.getHeaders(), ...(opts.headers as OutgoingHttpHeaders) };
    if (raw !== undefined) headers["Content-Length"] = String(Buffer.byteLength(raw));
    const signal = ctx.getSignal();
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const r = send(
        url,
        {
          method,
          headers,
          ...(opts.agent === undefined ? {} : { agent: opts.agent }),
          ...(opts.auth === undefined || opts.auth === null ? {} : { auth: opts.auth }),
          ...(signal === undefined ? {} : { signal }),
        },
        resolve,
      );
      r.setTimeout(this.#o.timeoutMs, () => {
        r.destroy(new Error(`${method} ${path}: no answer in ${String(this.#o.timeoutMs)} ms`));
      });
      r.on("error", (e) => {
        this.#o.onResponse?.(method, path, 0);
        reject(e);
      });
      r.end(raw);
    });
    const code = res.statusCode ?? 0;
    // A refused token or certificate: read the token file or run the exec plugin again next time.
    if (code === 401) this.#config.refused();
    const body = await readAll(res);
    this.#o.onResponse?.(method, path, code);
    const answerHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) answerHeaders[k] = String(v);
    return new ResponseContext(code, answerHeaders, new SelfDecodingBody(Promise.resolve(body)));
  }
}

function readAll(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => {
      resolve(Buffer.concat(chunks));
    });
    res.on("error", reject);
  });
}
