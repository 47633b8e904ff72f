// The Prometheus scrape endpoint as a node:http request listener.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import type { Metrics } from "./metrics.js";

/**
 * A node:http handler serving GET/HEAD /metrics in the Prometheus text format; 404 elsewhere,
 * 405 for other methods. Use it as a server's listener, or call it for the requests you route to it.
 */
export function metricsHandler(
  metrics: Pick<Metrics, "render" | "contentType">,
  path = "/metrics",
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const send = (code: number, body: string, type = "text/plain; charset=utf-8"): void => {
      res.writeHead(code, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if ((req.url ?? "/").split("?")[0] !== path) {
      send(404, "not found\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      send(405, "method not allowed\n");
      return;
    }
    metrics.render().then(
      (body) => {
        send(200, body, metrics.contentType);
      },
      (e: unknown) => {
        send(500, `metrics unavailable: ${e instanceof Error ? e.message : String(e)}\n`);
      },
    );
  };
}

/** Liveness and readiness of a process, as the probe endpoints report them. */
export interface Probes {
  readonly live: () => boolean;
  /** Why the process is not ready, or undefined when it is. */
  readonly notReady: () => string | undefined;
}

/**
 * /healthz (and /livez) and /readyz in front of `next` (e.g. metricsHandler): 200 "ok", or 503
 * with the reason, as Kubernetes probes read them.
 */
export function probesHandler(
  probes: Probes,
  next: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const text = (code: number, body: string): void => {
      res.writeHead(code, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (path === "/healthz" || path === "/livez") {
      if (probes.live()) text(200, "ok\n");
      else text(503, "shutting down\n");
      return;
    }
    if (path === "/readyz") {
      const reason = probes.notReady();
      text(reason === undefined ? 200 : 503, `${reason ?? "ok"}\n`);
      return;
    }
    next(req, res);
  };
}

/** Host names every HTTP port answers to besides IP literals. */
export const LOOPBACK_NAMES: readonly string[] = ["localhost"];

/**
 * A DNS-rebinding defence in front of `next`: a browser tricked into sending a page of the attacker's
 * to this port names the attacker's domain in Host, so a request is served only when Host is an IP
 * literal (whoever dials an address directly could reach the port anyway), `localhost` (or a name
 * under it), or one of `allowed` (`--http-allow-host`); others get 403 naming the flag.
 */
export function hostCheckHandler(
  allowed: readonly string[],
  next: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const names = new Set([...LOOPBACK_NAMES, ...allowed].map((n) => n.toLowerCase().replace(/\.$/, "")));
  return (req, res) => {
    const host = req.headers.host;
    // HTTP/1.0 without Host: no browser sends that, so it is no rebinding.
    if (host === undefined || hostAllowed(host, names)) {
      next(req, res);
      return;
    }
    const name = hostName(host);
    const body = `Host ${JSON.stringify(host)} is not served here (a defence against DNS rebinding); allow it with --http-allow-host ${name}\n`;
    res.writeHead(403, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
    res.end(req.method === "HEAD" ? undefined : body);
  };
}

/** The name part of a Host header ("[::1]:80" → "::1", "a.example:80" → "a.example"), lower-cased. */
function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]") < 0 ? undefined : h.indexOf("]"));
  const colon = h.lastIndexOf(":");
  return (colon < 0 ? h : h.slice(0, colon)).replace(/\.$/, "");
}

function hostAllowed(host: string, names: ReadonlySet<string>): boolean {
  const name = hostName(host);
  if (isIP(name) !== 0) return true;
  return names.has(name) || name.endsWith(".localhost");
}
