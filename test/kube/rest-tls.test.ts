// KubeRest's requests, seen from a TLS server on loopback that asks for client certificates and echoes
// the credentials it got: one connection carries many requests (client-node 1.4 alone builds an agent
// per request, without keep-alive); a 401 makes the exec plugin run again, and the certificate it hands
// out next is the one the following connection presents; an exec plugin without expiry runs once; an
// OIDC auth-provider's id-token is the bearer token; basic credentials and every impersonation header
// arrive; proxy-url goes through an HTTP CONNECT proxy on loopback.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer, type ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import { connect, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TLSSocket, type PeerCertificate } from "node:tls";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { kubeconfigFromText } from "../../src/kube/kubeconfig.js";
import { CoordinationV1Api } from "@kubernetes/client-node";
import { KubeRest, statusCode } from "../../src/kube/rest.js";
import { writeClientCert, writeClusterPki } from "../support/kube/pki.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-rest-tls-"));
const pki = writeClusterPki(dir);
let server: Server;
let url = "";
let connections = 0;
/** Common names of the client certificates, one per request. */
const seen: string[] = [];
/** Open watch responses, left streaming. */
const watches: ServerResponse[] = [];
/** What each request carried, in order. */
const credentials: { path: string; authorization: string | null; groups: string[] }[] = [];
/** Answer 401 to requests from these names. */
const refused = new Set<string>();

beforeAll(async () => {
  server = createServer(
    {
      cert: readFileSync(pki.servingCert),
      key: readFileSync(pki.servingKey),
      ca: readFileSync(pki.caCert),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket;
      if (!(socket instanceof TLSSocket)) throw new Error("not a TLS connection");
      // No client certificate: an empty object.
      const subjectCn = (socket.getPeerCertificate() as Partial<PeerCertificate>).subject?.CN;
      const cn = typeof subjectCn === "string" ? subjectCn : "";
      credentials.push({
        path: (req.url ?? "").split("?")[0] ?? "",
        authorization: req.headers.authorization ?? null,
        groups: req.headersDistinct["impersonate-group"] ?? [],
      });
      if (req.url?.includes("watch=true") === true) {
        res.writeHead(200, { "Content-Type": "application/json" });
        watches.push(res);
        return;
      }
      seen.push(cn);
      res.writeHead(refused.has(cn) ? 401 : 200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          kind: "Status",
          cn,
          authorization: req.headers.authorization ?? null,
          impersonate: {
            user: req.headers["impersonate-user"],
            uid: req.headers["impersonate-uid"],
            groups: req.headersDistinct["impersonate-group"],
          },
        }),
      );
    },
  );
  server.on("secureConnection", () => connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const kubeconfig = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string =>
  JSON.stringify({
    "current-context": "c",
    clusters: [
      {
        name: "k",
        cluster: { server: url, "certificate-authority-data": readFileSync(pki.caCert).toString("base64"), ...cluster },
      },
    ],
    users: [{ name: "u", user }],
    contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
  });

describe("KubeRest over TLS", () => {
  it("many requests share one connection", async () => {
    const rest = new KubeRest(kubeconfigFromText(kubeconfig({ token: "t" }), "test", { dir: undefined }));
    const before = connections;
    for (let i = 0; i < 5; i++)
      expect(await rest.request({ method: "GET", path: "/api" })).toMatchObject({ authorization: "Bearer t" });
    expect(connections - before).toBe(1);
  });

  it("a 401 runs the exec plugin again; its new certificate opens a new connection", async () => {
    const one = writeClientCert(dir, "one", "client-one");
    const two = writeClientCert(dir, "two", "client-two");
    const credential = (c: { cert: string; key: string }): string =>
      JSON.stringify({
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        status: { clientCertificateData: readFileSync(c.cert, "utf8"), clientKeyData: readFileSync(c.key, "utf8") },
      });
    writeFileSync(join(dir, "one.json"), credential(one));
    writeFileSync(join(dir, "two.json"), credential(two));
    // Hands out one.json the first time, two.json after.
    const script = join(dir, "rotate.sh");
    const state = join(dir, "rotate.state");
    writeFileSync(
      script,
      `#!/bin/sh\nif [ -e '${state}' ]; then cat '${join(dir, "two.json")}'; else touch '${state}'; cat '${join(dir, "one.json")}'; fi\n`,
    );
    chmodSync(script, 0o755);
    const config = kubeconfigFromText(
      kubeconfig({ exec: { apiVersion: "client.authentication.k8s.io/v1", command: script } }),
      "test",
      { dir },
    );
    const rest = new KubeRest(config);
    const before = connections;
    await rest.request({ method: "GET", path: "/api" });
    await rest.request({ method: "GET", path: "/api" });
    refused.add("client-one");
    expect(await rest.request({ method: "GET", path: "/api" }).catch(statusCode)).toBe(401);
    await rest.request({ method: "GET", path: "/api" });
    expect(seen.slice(-4)).toEqual(["client-one", "client-one", "client-one", "client-two"]);
    expect(connections - before).toBe(2);
  });

  it("a new certificate closes idle connections only: an open watch keeps streaming on its own", async () => {
    const a = writeClientCert(dir, "watch-a", "watch-a");
    const b = writeClientCert(dir, "watch-b", "watch-b");
    const credential = (c: { cert: string; key: string }): string =>
      JSON.stringify({
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        status: { clientCertificateData: readFileSync(c.cert, "utf8"), clientKeyData: readFileSync(c.key, "utf8") },
      });
    writeFileSync(join(dir, "watch-a.json"), credential(a));
    writeFileSync(join(dir, "watch-b.json"), credential(b));
    const script = join(dir, "watch-rotate.sh");
    const state = join(dir, "watch-rotate.state");
    writeFileSync(
      script,
      `#!/bin/sh\nif [ -e '${state}' ]; then cat '${join(dir, "watch-b.json")}'; else touch '${state}'; cat '${join(dir, "watch-a.json")}'; fi\n`,
    );
    chmodSync(script, 0o755);
    const rest = new KubeRest(
      kubeconfigFromText(
        kubeconfig({ exec: { apiVersion: "client.authentication.k8s.io/v1", command: script } }),
        "test",
        { dir },
      ),
    );
    const events: string[] = [];
    const stop = new AbortController();
    const watching = rest.watch("/api/v1/pods", {}, (e) => events.push(e.type), stop.signal);
    await vi.waitFor(() => {
      expect(watches).toHaveLength(1);
    });
    const stream = watches[0];
    stream?.write(`${JSON.stringify({ type: "ADDED", object: {} })}\n`);
    refused.add("watch-a");
    expect(await rest.request({ method: "GET", path: "/api" }).catch(statusCode)).toBe(401);
    expect(await rest.request({ method: "GET", path: "/api" })).toMatchObject({ cn: "watch-b" });
    stream?.write(`${JSON.stringify({ type: "MODIFIED", object: {} })}\n`);
    await vi.waitFor(() => {
      expect(events).toEqual(["ADDED", "MODIFIED"]);
    });
    stop.abort();
    await watching;
  });

  it("an exec plugin without expirationTimestamp runs once for many requests", async () => {
    const runs = join(dir, "no-expiry.runs");
    const script = join(dir, "no-expiry.sh");
    writeFileSync(
      script,
      `#!/bin/sh\necho run >> '${runs}'\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"no-expiry"}}'\n`,
    );
    chmodSync(script, 0o755);
    const rest = new KubeRest(
      kubeconfigFromText(
        kubeconfig({ exec: { apiVersion: "client.authentication.k8s.io/v1", command: script } }),
        "test",
        { dir },
      ),
    );
    for (let i = 0; i < 4; i++)
      expect(await rest.request({ method: "GET", path: "/api" })).toMatchObject({ authorization: "Bearer no-expiry" });
    expect(readFileSync(runs, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("an OIDC auth-provider: its id-token is the bearer token", async () => {
    const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString("base64url");
    // client-node refreshes a token whose exp has passed; this one is valid for an hour.
    const idToken = `${part({ alg: "RS256" })}.${part({ iss: "https://idp.invalid", exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
    const user = {
      "auth-provider": {
        name: "oidc",
        config: { "client-id": "oooi", "id-token": idToken, "idp-issuer-url": "https://idp.invalid" },
      },
    };
    const rest = new KubeRest(kubeconfigFromText(kubeconfig(user), "test", { dir }));
    expect(await rest.request({ method: "GET", path: "/api" })).toMatchObject({ authorization: `Bearer ${idToken}` });
  });

  it("basic credentials and impersonation by user, uid and groups", async () => {
    const user = { username: "ann", password: "pw", as: "bob", "as-uid": "7", "as-groups": ["g1", "g2"] };
    const rest = new KubeRest(kubeconfigFromText(kubeconfig(user), "test", { dir: undefined }));
    expect(await rest.request({ method: "GET", path: "/api" })).toMatchObject({
      authorization: `Basic ${Buffer.from("ann:pw").toString("base64")}`,
      impersonate: { user: "bob", uid: "7", groups: ["g1", "g2"] },
    });
  });

  it("a generated client's request and a watch carry the same credentials; requests share the connection", async () => {
    const user = { token: "t-all", as: "bob", "as-groups": ["g1", "g2"] };
    const rest = new KubeRest(kubeconfigFromText(kubeconfig(user), "test", { dir: undefined }));
    const from = credentials.length;
    const before = connections;
    await rest.request({ method: "GET", path: "/api" });
    await rest.api(CoordinationV1Api).readNamespacedLease({ name: "l", namespace: "n" });
    const stop = new AbortController();
    const watching = rest.watch("/api/v1/pods", {}, () => {}, stop.signal);
    await vi.waitFor(() => {
      expect(credentials.length - from).toBe(3);
    });
    expect(credentials.slice(from)).toEqual([
      { path: "/api", authorization: "Bearer t-all", groups: ["g1", "g2"] },
      {
        path: "/apis/coordination.k8s.io/v1/namespaces/n/leases/l",
        authorization: "Bearer t-all",
        groups: ["g1", "g2"],
      },
      { path: "/api/v1/pods", authorization: "Bearer t-all", groups: ["g1", "g2"] },
    ]);
    // The two requests one after the other on one connection; the watch holds its own.
    expect(connections - before).toBeLessThanOrEqual(2);
    stop.abort();
    await watching;
  });

  it("proxy-url: requests go through the HTTP CONNECT proxy, TLS still checked end to end", async () => {
    const connects: string[] = [];
    const proxy: HttpServer = createHttpServer();
    const tunnels = new Set<Socket>();
    proxy.on("connect", (req, client: Socket, head: Buffer) => {
      connects.push(req.url ?? "");
      const target = new URL(`http://${req.url ?? ""}`);
      const upstream = connect(Number(target.port), target.hostname, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const s of [client, upstream]) {
        tunnels.add(s);
        s.on("error", () => s.destroy());
        s.on("close", () => tunnels.delete(s));
      }
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const proxyUrl = `http://127.0.0.1:${String((proxy.address() as AddressInfo).port)}`;
      const rest = new KubeRest(
        kubeconfigFromText(kubeconfig({ token: "via-proxy" }, { "proxy-url": proxyUrl }), "test", { dir: undefined }),
      );
      for (let i = 0; i < 3; i++)
        expect(await rest.request({ method: "GET", path: "/api" })).toMatchObject({
          authorization: "Bearer via-proxy",
        });
      expect(connects).toEqual([new URL(url).host]);
    } finally {
      for (const s of tunnels) s.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });
});
