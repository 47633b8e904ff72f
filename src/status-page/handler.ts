// The status page's routes in front of another node:http handler: GET / (the page, the current view
// drawn in), /events (the
// live feed) and /status.json (the same view, for scripts); everything else goes to `next`.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StatusEvents } from "./events.js";
import { STATUS_PAGE_SCRIPT_HASH, statusPageHtml } from "./page.js";
import type { StatusView } from "./view.js";

export interface StatusPageOptions {
  /** Shown as the page's title. */
  readonly title: string;
  readonly view: () => StatusView;
  readonly events: StatusEvents;
}

// Only this page's own script runs, it may talk only to its own origin, and nothing else loads.
const CSP = `default-src 'none'; script-src '${STATUS_PAGE_SCRIPT_HASH}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'`;

const PATHS = new Set(["/", "/events", "/status.json"]);

export function statusPageHandler(
  options: StatusPageOptions,
  next: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (!PATHS.has(path)) {
      next(req, res);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" });
      res.end("method not allowed\n");
      return;
    }
    if (path === "/events") {
      options.events.attach(req, res);
      return;
    }
    const [body, type] =
      path === "/"
        ? [statusPageHtml(options.title, options.view()), "text/html; charset=utf-8"]
        : [`${JSON.stringify(options.view())}\n`, "application/json"];
    res.writeHead(200, {
      "Content-Type": type,
      "Content-Length": Buffer.byteLength(body),
      "Cache-Control": "no-store",
      ...(path === "/" ? { "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff" } : {}),
    });
    res.end(req.method === "HEAD" ? undefined : body);
  };
}
