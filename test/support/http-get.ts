// One request to an HTTP or HTTPS port, as a scraper or a kubelet probe sends it: over HTTPS the
// server's certificate is not verified unless `ca` is given (the kubelet never verifies an HTTPS
// probe; a ServiceMonitor with insecureSkipVerify does not), and the certificate it presented is
// returned. An event stream is read up to its headers only.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { TLSSocket } from "node:tls";

export interface HttpAnswer {
  readonly status: number;
  readonly type: string;
  readonly body: string;
  readonly headers: IncomingMessage["headers"];
  /** The served certificate's SHA-256 fingerprint (HTTPS only). */
  readonly fingerprint?: string;
}

export interface HttpGetOptions {
  readonly method?: string;
  readonly authorization?: string;
  /** PEM CA to verify the server against; none: not verified. */
  readonly ca?: string;
  readonly servername?: string;
}

export function httpGet(url: string, options: HttpGetOptions = {}): Promise<HttpAnswer> {
  const target = new URL(url);
  const headers = options.authorization === undefined ? {} : { Authorization: options.authorization };
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage): void => {
      const type = res.headers["content-type"] ?? "";
      const peer = (res.socket as Partial<TLSSocket>).getPeerCertificate?.();
      const answer = (body: string): HttpAnswer => ({
        status: res.statusCode ?? 0,
        type,
        body,
        headers: res.headers,
        ...(peer?.fingerprint256 === undefined ? {} : { fingerprint: peer.fingerprint256 }),
      });
      if (type.startsWith("text/event-stream")) {
        resolve(answer(""));
        res.destroy();
        return;
      }
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => {
        resolve(answer(body));
      });
      res.on("error", reject);
    };
    const common = { method: options.method ?? "GET", headers, agent: false } as const;
    const req =
      target.protocol === "https:"
        ? httpsRequest(
            target,
            {
              ...common,
              ...(options.ca === undefined ? { rejectUnauthorized: false } : { ca: options.ca }),
              ...(options.servername === undefined ? {} : { servername: options.servername }),
            },
            onResponse,
          )
        : httpRequest(target, common, onResponse);
    req.on("error", reject);
    req.end();
  });
}
