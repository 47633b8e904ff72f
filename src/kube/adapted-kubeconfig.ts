// client-node's KubeConfig with what its 1.4 request options lack, applied wherever client-node builds a
// request's options (applyToHTTPSOptions, and applyToFetchOptions on top of it): KubeRest's requests,
// client-node's Watch and PortForward all get them.
// - Impersonate-Uid and Impersonate-Group, one header line per group: client-node sends only
//   Impersonate-User (the API server reads each Impersonate-Group line as one group, so the groups may
//   not be joined into one line).
// - One keep-alive agent per TLS material: client-node builds a new agent, without keep-alive, for every
//   request, so each request would open its own TLS connection. Its builder is private, so its agent is
//   adjusted (keep-alive on) and kept, not rebuilt.
// - A deadline for an answer to start: client-node's Watch cannot be ended from outside before its answer
//   starts (its abort controller is handed out only then), so one whose server never answers would hold
//   its connection for good; it now fails after ANSWER_START_TIMEOUT_MS instead.
import { Agent } from "node:http";
import type { RequestOptions } from "node:https";
import { KubeConfig } from "@kubernetes/client-node";

/** How long a fetch (client-node's Watch) waits for its answer's status line and headers. */
export const ANSWER_START_TIMEOUT_MS = 30_000;

/** Extra header lines of every request (a list: one line per value). */
export type ExtraHeaders = Readonly<Record<string, string | readonly string[]>>;

/** A KubeConfig whose request options carry the impersonation headers and a shared keep-alive agent. */
export class AdaptedKubeConfig extends KubeConfig {
  readonly #headers: ExtraHeaders;
  #agent: { material: string; agent: Agent } | undefined;

  constructor(headers: ExtraHeaders) {
    super();
    this.#headers = headers;
  }

  override async applyToHTTPSOptions(opts: Parameters<KubeConfig["applyToHTTPSOptions"]>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const o = opts as RequestOptions;
    const headers = { ...(o.headers as Record<string, string | number | string[] | undefined> | undefined) };
    for (const [k, v] of Object.entries(this.#headers)) headers[k] = typeof v === "string" ? v : [...v];
    o.headers = headers;
    o.agent = this.#shared(o);
  }

  override async applyToFetchOptions(
    opts: Parameters<KubeConfig["applyToFetchOptions"]>[0],
  ): ReturnType<KubeConfig["applyToFetchOptions"]> {
    const init = await super.applyToFetchOptions(opts);
    return { ...init, timeout: init.timeout ?? ANSWER_START_TIMEOUT_MS };
  }

  #shared(opts: RequestOptions): Agent {
    const built = opts.agent;
    // https.Agent, or for proxy-url hpagent's or socks-proxy-agent's: all node:http Agents.
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
