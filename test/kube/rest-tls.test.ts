// KubeRest's connections, seen from a TLS server on loopback that asks for client certificates: one
// connection carries many requests; a 401 makes the exec plugin run again, and the certificate it
// hands out next is the one the following connection presents.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TLSSocket, type PeerCertificate } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeconfigFromText } from "../../src/kube/kubeconfig.js";
import { KubeRest, statusCode } from "../../src/kube/rest.js";
import { writeClientCert, writeClusterPki } from "../support/kube/pki.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-rest-tls-"));
const pki = writeClusterPki(dir);
let server: Server;
let url = "";
let connections = 0;
/** Common names of the client certificates, one per request. */
const seen: string[] = [];
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
      seen.push(cn);
      res.writeHead(refused.has(cn) ? 401 : 200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ kind: "Status", cn, authorization: req.headers.authorization ?? null }));
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

const kubeconfig = (user: Record<string, unknown>): string =>
  JSON.stringify({
    "current-context": "c",
    clusters: [
      {
        name: "k",
        cluster: { server: url, "certificate-authority-data": readFileSync(pki.caCert).toString("base64") },
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
});
