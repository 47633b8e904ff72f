// serve's HTTP port: the live status page (/, /events), /metrics and the probes (/healthz, /readyz),
// behind the Host check (DNS-rebinding defence).
import { createServer, type Server } from "node:http";
import type { Logger } from "pino";
import { hostCheckHandler, probesHandler } from "../../metrics/http.js";
import { metricsHandler, type Metrics } from "../../metrics/index.js";
import type { StatusPage } from "../../status-page/index.js";
import { tagListen } from "../listen-error.js";
import type { ServeOptions } from "./options.js";

/** live: the process is up; notReady: why it is not ready, undefined when it is. */
export interface ServeProbes {
  live(): boolean;
  notReady(): string | undefined;
}

/** Listens on opts.httpListen; fails (tagged with the flag) when the port cannot be bound. */
export function startServeHttp(
  opts: ServeOptions & { readonly httpListen: { readonly host: string; readonly port: number } },
  c: { readonly page: StatusPage; readonly metrics: Metrics; readonly probes: ServeProbes; readonly log: Logger },
): Promise<Server> {
  const { host, port } = opts.httpListen;
  const listening = new Promise<Server>((resolve, reject) => {
    // The listen address, when it is a name, is one the user means to be reached by.
    const allowed = [...(opts.httpAllowHosts ?? []), host];
    const server = createServer(
      hostCheckHandler(allowed, probesHandler(c.probes, c.page.handler(metricsHandler(c.metrics)))),
    );
    server.once("error", reject);
    server.listen(port, host, () => {
      const address = server.address();
      const url = `http://${host}:${String(typeof address === "object" && address !== null ? address.port : port)}`;
      c.log.info(`status page on ${url}/, metrics on ${url}/metrics (probes: /healthz, /readyz)`);
      resolve(server);
    });
  });
  return tagListen(listening, "--http-listen", `${host}:${String(port)}`);
}

/** Closes the port; the status page's open event streams first, as they would hold close() forever. */
export async function stopServeHttp(http: Promise<Server>, page: StatusPage): Promise<void> {
  const server = await http;
  page.close();
  await new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  });
}
