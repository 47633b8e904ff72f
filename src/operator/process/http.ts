// The operator's probe and metrics endpoint: /healthz (the process answers), /readyz (every watch
// has listed once; 503 before), /metrics (Prometheus text), and the routes `page` puts in front
// (the live status page, src/status-page). With `access`, every path but the probes is reviewed first;
// with `tls`, everything is served over HTTPS (http-tls.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "../../util/logger.js";
import type { AccessReview } from "./access-review.js";
import type { HttpTls } from "./http-tls.js";
import type { OperatorMetrics } from "./metrics.js";

// Kubelet's probes carry no token; they tell only whether the process answers and has synced.
const OPEN_PATHS = new Set(["/healthz", "/livez", "/readyz"]);

/** Where to listen; port 0 picks a free one. */
export interface HttpListen {
  readonly host: string;
  readonly port: number;
}

/** Routes served in front of the probe endpoints (StatusPage). */
export interface PageRoutes {
  handler(
    next: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void;
  /** Ends long-lived responses (event streams) so the server can close. */
  close(): void;
}

/** What the probe server answers from. */
export interface Probes {
  ready(): boolean;
  live(): boolean;
  readonly metrics: OperatorMetrics;
  readonly page?: PageRoutes;
  /** Reviews every path but the probes (access-review.ts); none = open. */
  readonly access?: Pick<AccessReview, "decide">;
}

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A running probe server. */
export interface ProbeServer {
  readonly address: AddressInfo;
  readonly scheme: "http" | "https";
  /**
   * Answers from `probes` from now on: `oooi operator` listens before the API server answers (not
   * ready, but up), and runOperator takes the same listener over once it starts.
   */
  use(probes: Probes): void;
  close(): Promise<void>;
}

/**
 * Probes answered on `listen`: a listener `oooi operator` opened before the API server answered is
 * taken over, not opened again; none given, none served. `current()` is the server once it answers.
 */
export function serveProbes(
  listen: HttpListen | ProbeServer | undefined,
  probes: Probes,
  log: Pick<Logger, "info">,
): { readonly started: Promise<void>; current(): ProbeServer | undefined } {
  let server: ProbeServer | undefined;
  const started =
    listen === undefined
      ? Promise.resolve()
      : "use" in listen
        ? Promise.resolve().then(() => {
            listen.use(probes);
            server = listen;
          })
        : startProbeServer(listen, probes).then((p) => {
            server = p;
            log.info({ host: p.address.address, port: p.address.port }, "probes and metrics listening");
          });
  return { started, current: () => server };
}

/** Starts the probe server: over TLS with `tls`, whose later certificates serve new connections. */
export async function startProbeServer(listen: HttpListen, initial: Probes, tls?: HttpTls): Promise<ProbeServer> {
  let probes = initial;
  const own = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? "/").split("?")[0];
    const text = (code: number, body: string, type = "text/plain; charset=utf-8"): void => {
      res.writeHead(code, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") {
      text(405, "method not allowed\n");
      return;
    }
    if (path === "/healthz" || path === "/livez") {
      if (probes.live()) text(200, "ok\n");
      else text(503, "shutting down\n");
    } else if (path === "/readyz") {
      if (probes.ready()) text(200, "ok\n");
      else text(503, "watches not synced\n");
    } else if (path === "/metrics") {
      Promise.resolve(probes.metrics.render()).then(
        (body) => {
          text(200, body, probes.metrics.contentType);
        },
        (e: unknown) => {
          text(500, `metrics unavailable: ${String(e)}\n`);
        },
      );
    } else text(404, "not found\n");
  };
  const handlerOf = (p: Probes): RequestHandler => {
    const routes = p.page === undefined ? own : p.page.handler(own);
    return p.access === undefined ? routes : reviewed(p.access, routes);
  };
  let handler = handlerOf(probes);
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    handler(req, res);
  };
  let server: Server;
  if (tls === undefined) server = createServer(serve);
  else {
    const secure = createTlsServer({ cert: tls.first.cert, key: tls.first.key }, serve);
    tls.onChange((next) => {
      secure.setSecureContext({ cert: next.cert, key: next.key });
    });
    server = secure;
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    scheme: tls === undefined ? "http" : "https",
    use: (next) => {
      if (next.page !== probes.page) probes.page?.close();
      probes = next;
      handler = handlerOf(next);
    },
    close: () =>
      new Promise<void>((resolve) => {
        tls?.stop();
        probes.page?.close();
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/** `next` for the requests `access` allows and the probes; a plain-text refusal for the others. */
function reviewed(
  access: Pick<AccessReview, "decide">,
  next: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // The path the routes match, so what is reviewed is what is served.
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (OPEN_PATHS.has(path)) {
      next(req, res);
      return;
    }
    void access.decide(req.headers.authorization, req.method ?? "GET", path).then((decision) => {
      // Gone while under review: its 'close' has fired, so an event stream attached now would never end.
      if (res.destroyed) return;
      if (decision.allowed) {
        next(req, res);
        return;
      }
      const body = `${decision.reason}\n`;
      res.writeHead(decision.status, {
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Length": Buffer.byteLength(body),
        // The reason repeats the path the client chose: never let a browser read it as anything but text.
        "X-Content-Type-Options": "nosniff",
        ...(decision.status === 401 ? { "WWW-Authenticate": "Bearer" } : {}),
        ...(decision.status === 503 ? { "Retry-After": "1" } : {}),
      });
      res.end(body);
    });
  };
}
