// The Prometheus scrape endpoint as a node:http request listener.
import type { IncomingMessage, ServerResponse } from "node:http";
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
