// Reading kubeconfigs: every unusable one refused with the file and field named; relative paths
// resolved against each file's own folder; $KUBECONFIG lists merged (first definition wins); the
// order --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config. (test/kube/kubeconfig.test.ts uses
// them against a real API server; test/kube/credentials.test.ts covers token files and exec.)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  inClusterConfig,
  KubeconfigError,
  kubeconfigFromText,
  loadKubeClientConfig,
  loadKubeconfigFiles,
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
    ["no server", doc({ server: "" }, { token: "t" }), /cluster "k": server is missing/],
    [
      "a server that is no URL",
      doc({ server: "https://api example" }, { token: "t" }),
      /server "https:\/\/api example" is not a URL/,
    ],
    ["an ftp server", doc({ server: "ftp://api" }, { token: "t" }), /neither https:\/\/ nor http:\/\//],
    ["proxy-url", doc({ "proxy-url": "http://proxy:3128" }, { token: "t" }), /proxy-url is not supported/],
    ["a port that is a number", doc({ server: 6443 }, { token: "t" }), /server must be a string/],
    ["insecure as a string", doc({ "insecure-skip-tls-verify": "yes" }, { token: "t" }), /must be true or false/],
    [
      "CA and insecure",
      doc({ "certificate-authority-data": b64(PEM), "insecure-skip-tls-verify": true }, { token: "t" }),
      /exclude each other/,
    ],
    [
      "CA data that is not PEM",
      doc({ "certificate-authority-data": b64("junk") }, { token: "t" }),
      /not base64 of PEM/,
    ],
    [
      "a CA file that is not there",
      doc({ "certificate-authority": "missing-ca.crt" }, { token: "t" }),
      /missing-ca\.crt \(ENOENT\)/,
    ],
    ["auth-provider", doc({}, { "auth-provider": { name: "oidc" } }), /user "u": auth-provider is not supported/],
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
  it("files relative to the kubeconfig's folder; data embedded; the context's namespace", () => {
    const d = join(dir, "relative");
    write(join(d, "pki", "ca.crt"), PEM);
    write(join(d, "pki", "client.crt"), PEM.replace("MIIB", "CERT"));
    write(join(d, "pki", "client.key"), "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n");
    const path = write(
      join(d, "config"),
      doc(
        { "certificate-authority": "pki/ca.crt", "tls-server-name": "api.internal" },
        { "client-certificate": "pki/client.crt", "client-key": "pki/client.key", tokenFile: "pki/token" },
      ),
    );
    expect(loadKubeconfigFiles([path])).toEqual({
      server: "https://api.example:6443",
      ca: PEM,
      insecureSkipTlsVerify: false,
      tlsServerName: "api.internal",
      clientCertificate: { cert: PEM.replace("MIIB", "CERT"), key: expect.stringContaining("KEY") as unknown },
      credential: { kind: "tokenFile", path: join(d, "pki", "token") },
      namespace: "ns",
      origin: `kubeconfig ${path}, context "c"`,
    });
  });

  it("an exec command with a slash is relative to the kubeconfig; a bare name is left to PATH", () => {
    const exec = (command: string) =>
      doc({}, { exec: { apiVersion: "client.authentication.k8s.io/v1", command, args: ["get-token"] } });
    const d = join(dir, "exec-paths");
    const rel = loadKubeconfigFiles([write(join(d, "a"), exec("./bin/plugin"))]).credential;
    const bare = loadKubeconfigFiles([write(join(d, "b"), exec("aws"))]).credential;
    expect(rel).toMatchObject({ kind: "exec", plugin: { command: join(d, "bin", "plugin"), args: ["get-token"] } });
    expect(bare).toMatchObject({ kind: "exec", plugin: { command: "aws" } });
  });

  it("no user: no credential; a trailing slash on the server is dropped", () => {
    const c = kubeconfigFromText(JSON.stringify(doc({ server: "http://127.0.0.1:8080/" }, undefined)), "t", {
      dir: undefined,
    });
    expect(c).toMatchObject({ server: "http://127.0.0.1:8080", credential: { kind: "none" } });
  });

  it("a context given by name instead of current-context", () => {
    const body = {
      ...doc({}, { token: "t" }),
      contexts: [
        { name: "c", context: { cluster: "k", user: "u" } },
        { name: "other", context: { cluster: "k", user: "u", namespace: "elsewhere" } },
      ],
    };
    expect(kubeconfigFromText(JSON.stringify(body), "t", { dir: undefined, context: "other" }).namespace).toBe(
      "elsewhere",
    );
  });
});

describe("$KUBECONFIG lists", () => {
  it("merge: the first definition of a name and the first current-context win; paths stay each file's own", () => {
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
    expect(loadKubeconfigFiles([first, second])).toMatchObject({
      server: "https://k2:6443",
      ca: PEM,
      credential: { token: "from-a" },
    });
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
  const sa = join(root, "sa");
  write(join(sa, "token"), "sa-token");
  write(join(sa, "ca.crt"), PEM);
  const pod = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
  const server = (flagPath: string | undefined, env: Record<string, string>, homeDir = home) =>
    loadKubeClientConfig(flagPath, env, { serviceAccountDir: sa, home: homeDir }).server;

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

  it("nothing at all: says every way to give one", () => {
    expect(() => server(undefined, {}, join(root, "nobody"))).toThrow(
      /pass --kubeconfig, set \$KUBECONFIG, run in a pod/,
    );
  });

  it("in-cluster needs both variables and the token; reads the CA and namespace beside it", () => {
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: "10.0.0.1" }, sa)).toBeUndefined();
    expect(inClusterConfig(pod, join(root, "no-sa"))).toBeUndefined();
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "6443" }, sa)).toEqual({
      server: "https://10.0.0.1:6443",
      ca: PEM,
      insecureSkipTlsVerify: false,
      credential: { kind: "tokenFile", path: join(sa, "token") },
      origin: "in-cluster service account",
    });
  });
});
