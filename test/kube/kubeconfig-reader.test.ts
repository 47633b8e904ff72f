// Reading kubeconfigs into client-node's KubeConfig: every unusable one refused with the file and field
// named; relative paths resolved against each file's own folder; $KUBECONFIG lists merged (first
// definition wins); the order --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config. What a request
// gets is read from client-node's applyToHTTPSOptions. (test/kube/kubeconfig.test.ts uses them against a
// real API server; test/kube/auth-adapters.test.ts covers token files and exec plugins.)
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { RequestOptions } from "node:https";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import {
  inClusterConfig,
  KubeconfigError,
  kubeconfigFromText,
  loadKubeClientConfig,
  loadKubeconfigFiles,
  SERVICE_ACCOUNT_DIR,
  type KubeClientConfig,
} from "../../src/kube/kubeconfig.js";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const b64 = (s: string): string => Buffer.from(s).toString("base64");

const dir = mkdtempSync(join(tmpdir(), "oooi-kubeconfig-unit-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function doc(
  cluster: Record<string, unknown>,
  user: Record<string, unknown> | undefined,
  extra: Record<string, unknown> = {},
) {
  return {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "c",
    clusters: [{ name: "k", cluster: { server: "https://api.example:6443", ...cluster } }],
    users: user === undefined ? [] : [{ name: "u", user }],
    contexts: [{ name: "c", context: { cluster: "k", ...(user === undefined ? {} : { user: "u" }), namespace: "ns" } }],
    ...extra,
  };
}

/** What client-node applies to a request of this configuration: TLS material and headers, as text. */
async function applied(config: KubeClientConfig): Promise<Record<string, unknown>> {
  const opts: RequestOptions = { headers: {} };
  await config.kubeConfig.applyToHTTPSOptions(opts);
  const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString("utf8") : typeof v === "string" ? v : undefined);
  return {
    ca: text(opts.ca),
    cert: text(opts.cert),
    key: text(opts.key),
    servername: opts.servername,
    auth: opts.auth,
    headers: { ...(opts.headers as Record<string, unknown>) },
  };
}

function write(path: string, body: unknown): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body));
  return path;
}

describe("refused with the file and field named", () => {
  const cases: [string, unknown, RegExp][] = [
    ["not YAML", "clusters: [\n", /not YAML/],
    ["a list", "- a\n", /not a kubeconfig/],
    ["no current-context", { ...doc({}, { token: "t" }), "current-context": "" }, /no current-context/],
    ["an unknown context", { ...doc({}, { token: "t" }), "current-context": "nope" }, /context "nope" is not defined/],
    ["clusters not a list", { ...doc({}, { token: "t" }), clusters: { k: {} } }, /clusters must be a list/],
    ["a nameless user", { ...doc({}, { token: "t" }), users: [{ user: {} }] }, /users\[0\]\.name is missing/],
    [
      "an unknown cluster",
      { ...doc({}, { token: "t" }), contexts: [{ name: "c", context: { cluster: "x", user: "u" } }] },
      /context "c": cluster "x" is not defined/,
    ],
    [
      "an unknown user",
      { ...doc({}, { token: "t" }), contexts: [{ name: "c", context: { cluster: "k", user: "x" } }] },
      /user "x" is not defined/,
    ],
    ["no server", doc({ server: "" }, { token: "t" }), /clusters\[0\]\.cluster\.server is missing/],
    [
      "a server that is no URL",
      doc({ server: "https://api example" }, { token: "t" }),
      /server "https:\/\/api example" is not a URL/,
    ],
    ["an ftp server", doc({ server: "ftp://api" }, { token: "t" }), /neither https:\/\/ nor http:\/\//],
    [
      "plain HTTP with TLS verification on",
      doc({ server: "http://127.0.0.1:8080" }, { token: "t" }),
      /plain HTTP; that needs insecure-skip-tls-verify: true/,
    ],
    [
      "CA and insecure",
      doc({ "certificate-authority-data": b64(PEM), "insecure-skip-tls-verify": true }, { token: "t" }),
      /exclude each other/,
    ],
    [
      "a CA file that is not there",
      doc({ "certificate-authority": "missing-ca.crt" }, { token: "t" }),
      /missing-ca\.crt \(ENOENT\)/,
    ],
    ["a certificate without its key", doc({}, { "client-certificate-data": b64(PEM) }), /go together/],
    ["token and basic", doc({}, { token: "t", username: "a", password: "b" }), /exclude each other/],
    [
      "exec without apiVersion",
      doc({}, { exec: { command: "plugin" } }),
      /exec\.apiVersion must be client\.authentication\.k8s\.io\/v1 or \/v1beta1/,
    ],
    [
      "exec that must ask a person",
      doc({}, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "p", interactiveMode: "Always" } }),
      /needs a terminal/,
    ],
    [
      "exec env without a value",
      doc({}, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "p", env: [{ name: "A" }] } }),
      /exec\.env\[0\] needs a string name and value/,
    ],
    ["as-groups not a list", doc({}, { token: "t", "as-groups": "g" }), /as-groups must be a list of strings/],
  ];
  it.each(cases)("%s", (name, body, message) => {
    const path = write(join(dir, "bad", name.replace(/\W+/g, "-"), "config"), body);
    let caught: unknown;
    try {
      loadKubeconfigFiles([path]);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KubeconfigError);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).toContain(`kubeconfig ${path}`);
  });

  it("a file that is not there", () => {
    expect(() => loadKubeconfigFiles([join(dir, "nope")])).toThrow(/kubeconfig .*nope: cannot read it \(ENOENT\)/);
  });
});

describe("what a kubeconfig resolves to", () => {
  it("files relative to the kubeconfig's folder, the token file too; tls-server-name", async () => {
    const d = join(dir, "relative");
    const key = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";
    write(join(d, "pki", "ca.crt"), PEM);
    write(join(d, "pki", "client.crt"), PEM.replace("MIIB", "CERT"));
    write(join(d, "pki", "client.key"), key);
    write(join(d, "pki", "token"), "from-the-file\n");
    const path = write(
      join(d, "config"),
      doc(
        { "certificate-authority": "pki/ca.crt", "tls-server-name": "api.internal" },
        { "client-certificate": "pki/client.crt", "client-key": "pki/client.key", tokenFile: "pki/token", token: "t" },
      ),
    );
    const config = loadKubeconfigFiles([path]);
    expect(config).toMatchObject({ server: "https://api.example:6443", origin: `kubeconfig ${path}, context "c"` });
    // client-go: the token file wins over token; client-node 1.4 would send token and never read tokenFile.
    expect(await applied(config)).toEqual({
      ca: PEM,
      cert: PEM.replace("MIIB", "CERT"),
      key,
      servername: "api.internal",
      auth: undefined,
      headers: { Authorization: "Bearer from-the-file" },
    });
  });

  it("impersonation: the user, its uid and each group (client-node 1.4 sends only the user)", async () => {
    const config = kubeconfigFromText(
      JSON.stringify(doc({}, { token: "t", as: "bob", "as-uid": "7", "as-groups": ["g1", "g2"] })),
      "t",
      { dir: undefined },
    );
    expect((await applied(config))["headers"]).toEqual({
      Authorization: "Bearer t",
      "Impersonate-User": "bob",
      "Impersonate-Uid": "7",
      "Impersonate-Group": ["g1", "g2"],
    });
  });

  it("an exec command with a slash is relative to the kubeconfig; a bare name is left to PATH", async () => {
    const exec = (command: string) =>
      doc({}, { exec: { apiVersion: "client.authentication.k8s.io/v1", command, args: ["get-token"] } });
    const d = join(dir, "exec-paths");
    const plugin = write(
      join(d, "bin", "plugin"),
      `#!/bin/sh\n[ "$1" = get-token ] || exit 3\nprintf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"rel"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const rel = loadKubeconfigFiles([write(join(d, "a"), exec("./bin/plugin"))]);
    expect((await applied(rel))["headers"]).toEqual({ Authorization: "Bearer rel" });
    const bare = loadKubeconfigFiles([write(join(d, "b"), exec("oooi-no-such-plugin"))]);
    await expect(applied(bare)).rejects.toThrow(/exec plugin oooi-no-such-plugin failed \(ENOENT\)/);
  });

  it("no user: no credential, yet the cluster's CA (client-node 1.4 applies none without a user)", async () => {
    const c = kubeconfigFromText(
      JSON.stringify(doc({ server: "https://127.0.0.1:6443/", "certificate-authority-data": b64(PEM) }, undefined)),
      "t",
      { dir: undefined },
    );
    expect(c.server).toBe("https://127.0.0.1:6443");
    expect(await applied(c)).toMatchObject({ ca: PEM, headers: {} });
  });

  it("a context given by name instead of current-context", () => {
    const body = {
      ...doc({}, { token: "t" }),
      clusters: [
        { name: "k", cluster: { server: "https://api.example:6443" } },
        { name: "k2", cluster: { server: "https://elsewhere:6443" } },
      ],
      contexts: [
        { name: "c", context: { cluster: "k", user: "u" } },
        { name: "other", context: { cluster: "k2", user: "u" } },
      ],
    };
    expect(kubeconfigFromText(JSON.stringify(body), "t", { dir: undefined, context: "other" }).server).toBe(
      "https://elsewhere:6443",
    );
  });
});

describe("$KUBECONFIG lists", () => {
  it("merge: the first definition of a name and the first current-context win; paths stay each file's own", async () => {
    const a = join(dir, "merge", "a");
    const b = join(dir, "merge", "b");
    write(join(b, "ca.crt"), PEM);
    const first = write(join(a, "config"), {
      clusters: [{ name: "k", cluster: { server: "https://first:6443", "certificate-authority": "missing.crt" } }],
      users: [{ name: "u", user: { token: "from-a" } }],
    });
    const second = write(join(b, "config"), {
      "current-context": "c",
      clusters: [
        { name: "k", cluster: { server: "https://second:6443" } },
        { name: "k2", cluster: { server: "https://k2:6443", "certificate-authority": "ca.crt" } },
      ],
      users: [{ name: "u", user: { token: "from-b" } }],
      contexts: [
        { name: "c", context: { cluster: "k2", user: "u" } },
        { name: "d", context: { cluster: "k", user: "u" } },
      ],
    });
    // Context c uses k2 (only in b) with b's CA path; the user u is a's.
    const merged = loadKubeconfigFiles([first, second]);
    expect(merged.server).toBe("https://k2:6443");
    expect(await applied(merged)).toMatchObject({ ca: PEM, headers: { Authorization: "Bearer from-a" } });
    // Context d uses k, defined first in a, whose CA path is relative to a (and missing there).
    expect(() => loadKubeconfigFiles([first, second], "d")).toThrow(
      /cluster "k": certificate-authority: cannot read .*merge\/a\/missing\.crt/,
    );
  });
});

describe("which configuration: --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config", () => {
  const root = join(dir, "order");
  const cfg = (name: string) =>
    write(join(root, name, "config"), doc({ server: `https://${name}:6443` }, { token: name }));
  const flag = cfg("flag");
  const env1 = cfg("env1");
  const env2 = cfg("env2");
  const home = join(root, "home");
  write(join(home, ".kube", "config"), doc({ server: "https://home:6443" }, { token: "home" }));
  const saRoot = join(root, "sa");
  const sa = join(saRoot, SERVICE_ACCOUNT_DIR);
  write(join(sa, "token"), "sa-token\n");
  write(join(sa, "ca.crt"), PEM);
  const pod = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
  const server = (flagPath: string | undefined, env: Record<string, string>, homeDir = home) => {
    for (const k of ["KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"]) vi.stubEnv(k, env[k] ?? "");
    return loadKubeClientConfig(flagPath, { serviceAccountRoot: saRoot, home: homeDir }).server;
  };
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each([
    ["--kubeconfig over everything", flag, { KUBECONFIG: env1, ...pod }, "https://flag:6443"],
    [
      "$KUBECONFIG (a list) over the pod",
      undefined,
      { KUBECONFIG: `${env1}${delimiter}${env2}`, ...pod },
      "https://env1:6443",
    ],
    ["the pod over ~/.kube/config", undefined, pod, "https://[fd00::1]:443"],
    ["~/.kube/config last", undefined, {}, "https://home:6443"],
    ["an empty $KUBECONFIG is not set", undefined, { KUBECONFIG: "" }, "https://home:6443"],
  ])("%s", (_name, flagPath, env, expected) => {
    expect(server(flagPath, env)).toBe(expected);
  });

  it("--context picks another context of --kubeconfig or $KUBECONFIG", () => {
    const both = write(join(root, "two-contexts", "config"), {
      ...doc({ server: "https://first:6443" }, { token: "t" }),
      clusters: [
        { name: "k", cluster: { server: "https://first:6443" } },
        { name: "k2", cluster: { server: "https://second:6443" } },
      ],
      contexts: [
        { name: "c", context: { cluster: "k", user: "u" } },
        { name: "other", context: { cluster: "k2", user: "u" } },
      ],
    });
    expect(loadKubeClientConfig(both, { context: "other" }).server).toBe("https://second:6443");
    vi.stubEnv("KUBECONFIG", both);
    expect(loadKubeClientConfig(undefined, { context: "other", home }).server).toBe("https://second:6443");
    expect(() => loadKubeClientConfig(both, { context: "nope" })).toThrow(/context "nope" is not defined/);
  });

  it("nothing at all: says every way to give one", () => {
    expect(() => server(undefined, {}, join(root, "nobody"))).toThrow(
      /pass --kubeconfig, set \$KUBECONFIG, run in a pod/,
    );
  });

  it("in-cluster needs both variables and the token; its CA and token (read from the file) go on each request", async () => {
    vi.stubEnv("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    expect(inClusterConfig(saRoot)).toBeUndefined();
    vi.stubEnv("KUBERNETES_SERVICE_PORT", "6443");
    expect(inClusterConfig(join(root, "no-sa"))).toBeUndefined();
    const config = inClusterConfig(saRoot);
    expect(config).toMatchObject({ server: "https://10.0.0.1:6443", origin: "in-cluster service account" });
    if (config === undefined) return;
    expect(await applied(config)).toMatchObject({ ca: PEM, headers: { Authorization: "Bearer sa-token" } });
  });
});
