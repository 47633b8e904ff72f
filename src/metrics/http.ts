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
