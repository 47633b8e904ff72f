// Kubeconfigs read into client-node's KubeConfig (with our adapters) against a real kube-apiserver: who
// the server says we are (a SelfSubjectReview) for each way a kubeconfig authenticates — client
// certificate files relative to the kubeconfig, an exec plugin's token or certificate, a rotating token
// file, impersonation, the pod's service account — and the TLS name checks (tls-server-name).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import {
  inClusterConfig,
  loadKubeconfigFiles,
  SERVICE_ACCOUNT_DIR,
  type KubeClientConfig,
} from "../../src/kube/kubeconfig.js";
import { KubeRest, statusCode } from "../../src/kube/rest.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { writeClientCert } from "../support/kube/pki.js";
import { useKubeCluster } from "./support.js";

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

async function whoami(config: KubeClientConfig): Promise<UserInfo> {
  const review = await new KubeRest(config).request<{ status?: { userInfo?: UserInfo } }>({
    method: "POST",
    path: "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  });
  return review.status?.userInfo ?? {};
}

describe.skipIf(KUBE_SKIP)("kubeconfig against a real kube-apiserver", () => {
  const cluster = useKubeCluster({ controllerManager: false });
  const dir = mkdtempSync(join(tmpdir(), "oooi-kubeconfig-"));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes a kubeconfig into a folder of its own (its relative paths resolve there) and reads it back. */
  const kubeconfig = (name: string, user: Record<string, unknown>, cluster_: Record<string, unknown> = {}): string => {
    const path = join(folder(name), "config");
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "c",
        clusters: [
          { name: "k", cluster: { server: cluster().url, "certificate-authority-data": caData(), ...cluster_ } },
        ],
        users: [{ name: "u", user }],
        contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
      }),
    );
    return path;
  };
  const folder = (name: string): string => {
    const d = join(dir, name);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const caData = (): string => readFileSync(cluster().pki.caCert).toString("base64");
  const pkiDir = (): string => dirname(cluster().pki.caCert);

  it("client-certificate and client-key files, relative to the kubeconfig's folder", async () => {
    const d = folder("cert-files");
    const made = writeClientCert(pkiDir(), "alice", "alice", ["team-a"]);
    writeFileSync(join(d, "alice.crt"), readFileSync(made.cert));
    writeFileSync(join(d, "alice.key"), readFileSync(made.key));
    const config = loadKubeconfigFiles([
      kubeconfig("cert-files", { "client-certificate": "alice.crt", "client-key": "alice.key" }),
    ]);
    expect(await whoami(config)).toMatchObject({
      username: "alice",
      groups: expect.arrayContaining(["team-a"]) as unknown,
    });
  });

  it("an exec plugin's token: run once, reused until it expires", async () => {
    const d = folder("exec-token");
    const runs = join(d, "runs");
    const future = new Date(Date.now() + 3_600_000).toISOString();
    script(
      join(d, "plugin.sh"),
      `echo run >> '${runs}'\n` +
        // The plugin is told the ExecCredential version it must answer in.
        `case "$KUBERNETES_EXEC_INFO" in *'"apiVersion":"client.authentication.k8s.io/v1"'*) ;; *) exit 3;; esac\n` +
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"${future}"}}' "$TOKEN"\n`,
    );
    const config = loadKubeconfigFiles([
      kubeconfig("exec-token", {
        exec: {
          apiVersion: "client.authentication.k8s.io/v1",
          command: "./plugin.sh",
          env: [{ name: "TOKEN", value: cluster().adminToken }],
        },
      }),
    ]);
    const rest = new KubeRest(config);
    for (let i = 0; i < 3; i++) await rest.request({ method: "GET", path: "/api/v1/namespaces/default" });
    expect(readFileSync(runs, "utf8").trim().split("\n")).toHaveLength(1);
    expect(await whoami(config)).toMatchObject({ username: "oooi-test-admin" });
  });

  // client-node 1.4 alone runs such a plugin before every request.
  it("an exec plugin's token without expirationTimestamp: run once, reused for every request", async () => {
    const d = folder("exec-no-expiry");
    const runs = join(d, "runs");
    script(
      join(d, "plugin.sh"),
      `echo run >> '${runs}'\n` +
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN"\n`,
    );
    const config = loadKubeconfigFiles([
      kubeconfig("exec-no-expiry", {
        exec: {
          apiVersion: "client.authentication.k8s.io/v1",
          command: "./plugin.sh",
          env: [{ name: "TOKEN", value: cluster().adminToken }],
        },
      }),
    ]);
    const rest = new KubeRest(config);
    for (let i = 0; i < 4; i++) await rest.request({ method: "GET", path: "/api/v1/namespaces/default" });
    expect(readFileSync(runs, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("an exec plugin's client certificate", async () => {
    const d = folder("exec-cert");
    const made = writeClientCert(pkiDir(), "bob", "bob");
    const json = JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1beta1",
      kind: "ExecCredential",
      status: { clientCertificateData: readFileSync(made.cert, "utf8"), clientKeyData: readFileSync(made.key, "utf8") },
    });
    writeFileSync(join(d, "credential.json"), json);
    script(join(d, "plugin.sh"), `cat '${join(d, "credential.json")}'\n`);
    const config = loadKubeconfigFiles([
      kubeconfig("exec-cert", {
        exec: { apiVersion: "client.authentication.k8s.io/v1beta1", command: join(d, "plugin.sh") },
      }),
    ]);
    expect(await whoami(config)).toMatchObject({ username: "bob" });
  });

  it("a token file rotated in place: a refused token makes the next request read it again", async () => {
    const d = folder("token-file");
    writeFileSync(join(d, "token"), "not-a-valid-token\n");
    const rest = new KubeRest(loadKubeconfigFiles([kubeconfig("token-file", { tokenFile: "token" })]));
    const get = () => rest.request({ method: "GET", path: "/api/v1/namespaces/default" });
    expect(await get().catch(statusCode)).toBe(401);
    writeFileSync(join(d, "token"), `${cluster().adminToken}\n`);
    expect((await get()).metadata?.name).toBe("default");
  });

  // client-node 1.4 alone sends only Impersonate-User.
  it("impersonation (as, as-uid, as-groups) as the admin", async () => {
    const config = loadKubeconfigFiles([
      kubeconfig("impersonate", {
        token: cluster().adminToken,
        as: "carol",
        "as-uid": "carol-7",
        "as-groups": ["g1", "g2"],
      }),
    ]);
    expect(await whoami(config)).toMatchObject({
      username: "carol",
      uid: "carol-7",
      groups: expect.arrayContaining(["g1", "g2"]) as unknown,
    });
  });

  it("tls-server-name: the certificate is checked for that name, not the dialled address", async () => {
    const good = loadKubeconfigFiles([
      kubeconfig("sni-good", { token: cluster().adminToken }, { "tls-server-name": "kubernetes.default.svc" }),
    ]);
    expect(await whoami(good)).toMatchObject({ username: "oooi-test-admin" });
    const bad = loadKubeconfigFiles([
      kubeconfig("sni-bad", { token: cluster().adminToken }, { "tls-server-name": "wrong.example" }),
    ]);
    await expect(whoami(bad)).rejects.toThrow(/wrong\.example/);
  });

  it("a CA that did not sign the server is refused; insecure-skip-tls-verify accepts it", async () => {
    const otherCa = readFileSync(join(pkiDir(), "serving.crt")).toString("base64"); // a leaf, not the CA
    const wrong = loadKubeconfigFiles([
      kubeconfig("other-ca", { token: cluster().adminToken }, { "certificate-authority-data": otherCa }),
    ]);
    await expect(whoami(wrong)).rejects.toThrow(/certificate/);
    const insecure = loadKubeconfigFiles([
      kubeconfig(
        "insecure",
        { token: cluster().adminToken },
        { "certificate-authority-data": undefined, "insecure-skip-tls-verify": true },
      ),
    ]);
    expect(await whoami(insecure)).toMatchObject({ username: "oooi-test-admin" });
  });

  it("in-cluster: KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA", async () => {
    const root = folder("pod-root");
    const sa = join(root, SERVICE_ACCOUNT_DIR);
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, "token"), cluster().adminToken);
    writeFileSync(join(sa, "ca.crt"), readFileSync(cluster().pki.caCert));
    writeFileSync(join(sa, "namespace"), "clusters\n");
    const url = new URL(cluster().url);
    vi.stubEnv("KUBERNETES_SERVICE_HOST", url.hostname);
    vi.stubEnv("KUBERNETES_SERVICE_PORT", url.port);
    const config = inClusterConfig(root);
    if (config === undefined) throw new Error("not seen as in-cluster");
    expect(config).toMatchObject({ origin: "in-cluster service account" });
    expect(await whoami(config)).toMatchObject({ username: "oooi-test-admin" });
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
});

function script(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}`);
  chmodSync(path, 0o755);
}
