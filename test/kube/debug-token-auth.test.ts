// `oooi debug --kubeconfig` against a real API server and the built operator (docs/security.md "Who
// may debug"): the operator's debug service lets in a bearer token whose user may `debug` infras in
// its namespace (TokenReview, then SubjectAccessReview), refuses others by name, and never takes a
// token on a discovery stream. The CLI finds the leader in the operator's real Lease and the CA in
// the ConfigMap it publishes. The port-forward itself needs a kubelet, which this API server has
// not: the test sees the API server refuse it, and the CLI say so (docs/testing.md).
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { credentials, Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { debuggerBindingCommand } from "../../src/operator/desired/permissions.js";
import { issueCa } from "../../src/pki/issue.js";
import { DebugClient, DebugRefusedError } from "../../src/xds/introspect/debug-client.js";
import { LISTENER_TYPE_URL } from "../../src/xds/resource/type-urls.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { openSotw } from "../support/envoy/raw.js";
import { createNamespaces, installCrds, operatorToken, REPO, serviceAccountToken, useKubeCluster } from "./support.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
const POD = "oooi-operator-0";
const SERVER_NAME = "oooi-xds.oooi-system.svc";

/** Runs the built CLI; resolves with its exit code and output. */
function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve) => {
    child.once("exit", (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(KUBE_SKIP !== undefined)("oooi debug with a Kubernetes token on a real API server", () => {
  const tokens = { debugger: "", nobody: "" };
  const kubeconfigs = { debugger: "", nobody: "", certOnly: "" };
  let operatorKubeconfig = "";
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    operatorKubeconfig = cluster.writeKubeconfig("oooi-operator", await operatorToken(cluster));
    await createNamespaces(cluster, ["people"]);
    for (const sa of ["debugger", "nobody"])
      await cluster.mustKubectl(["create", "serviceaccount", sa, "-n", "people"]);
    // docs/install.md's command as written, for this ServiceAccount's user: one RoleBinding in the operator's namespace.
    const documented = debuggerBindingCommand("--user=jane@example.com");
    expect(readFileSync(join(REPO, "docs", "install.md"), "utf8")).toContain(documented);
    const [kubectl, ...bind] = documented
      .replace("jane@example.com", "system:serviceaccount:people:debugger")
      .split(" ");
    expect(kubectl).toBe("kubectl");
    await cluster.mustKubectl(bind);
    tokens.debugger = await serviceAccountToken(cluster, "people", "debugger");
    tokens.nobody = await serviceAccountToken(cluster, "people", "nobody");
    kubeconfigs.debugger = cluster.writeKubeconfig("debugger", tokens.debugger);
    kubeconfigs.nobody = cluster.writeKubeconfig("nobody", tokens.nobody);
    // A user with a client certificate only: nothing to pass on to the operator.
    const cert = await issueCa("someone", { now: Date.now(), lifetimeMs: 3_600_000 });
    kubeconfigs.certOnly = join(cluster.dir, "cert-only.kubeconfig");
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    writeFileSync(
      kubeconfigs.certOnly,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "c",
        clusters: [{ name: "test", cluster: { server: cluster.url, "insecure-skip-tls-verify": true } }],
        users: [
          { name: "u", user: { "client-certificate-data": b64(cert.certPem), "client-key-data": b64(cert.keyPem) } },
        ],
        contexts: [{ name: "c", context: { cluster: "test", user: "u" } }],
      }),
    );
    // The leader's Pod as the Deployment makes it; no kubelet runs it here.
    await cluster.must("POST", "/api/v1/namespaces/oooi-system/pods", {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: POD, namespace: "oooi-system" },
        spec: {
          serviceAccountName: "oooi-operator",
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: "operator",
              image: "ghcr.io/oooi-project/oooi:0.1.0",
              ports: [{ name: "grpc-xds", containerPort: 18000 }],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            },
          ],
        },
      },
    });
  });

  let xds = "";
  let ca = "";
  let log = "";
  let stopOperator: () => Promise<void> = () => Promise.resolve();
  beforeAll(async () => {
    // The operator as deployed: its own CA (mTLS), leader election, POD_NAME as its Lease identity.
    const child = spawn(
      process.execPath,
      [CLI, "operator", "--kubeconfig", operatorKubeconfig, "--xds-listen", "127.0.0.1:0"].concat(
        "--http-listen",
        "127.0.0.1:0",
      ),
      { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: POD } },
    );
    child.stderr.setEncoding("utf8").on("data", (d: string) => (log += d));
    const exited = new Promise((r) => child.once("exit", r));
    stopOperator = async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    };
    await eventually(() => {
      expect(log).toMatch(/xDS \(ADS\) server listening on port \d+/);
    }, 60_000);
    xds = `127.0.0.1:${/listening on port (\d+)/.exec(log)?.[1] ?? ""}`;
    await eventually(async () => {
      const lease = await kube().must<{ spec?: { holderIdentity?: string } }>(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/oooi-system/leases/oooi-operator",
      );
      expect(lease.spec?.holderIdentity).toBe(POD);
    }, 60_000);
    const cm = await kube().must<{ data?: Record<string, string> }>(
      "GET",
      "/api/v1/namespaces/oooi-system/configmaps/oooi-xds-ca",
    );
    ca = cm.data?.["ca.crt"] ?? "";
    expect(ca).toContain("BEGIN CERTIFICATE");
  }, 120_000);
  afterAll(async () => {
    await stopOperator();
  });

  const client = (token?: string) =>
    new DebugClient({
      address: xds,
      credentials: credentials.createSsl(Buffer.from(ca)),
      serverName: SERVER_NAME,
      ...(token === undefined ? {} : { token }),
    });
  const refusal = async (token?: string): Promise<DebugRefusedError> => {
    const c = client(token);
    try {
      const e: unknown = await c.listNodes().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(DebugRefusedError);
      return e as DebugRefusedError;
    } finally {
      c.close();
    }
  };

  it("lets in a token whose user may debug: oooi debug nodes through the CLI", async () => {
    const c = client(tokens.debugger);
    try {
      expect(await c.listNodes()).toEqual([]);
    } finally {
      c.close();
    }
    // The CLI as its user: Lease, CA ConfigMap and token from the kubeconfig; --xds in place of the port-forward.
    const run = await runCli(["debug", "nodes", "--kubeconfig", kubeconfigs.debugger, "--xds", xds, "-o", "json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
    expect(log).toContain("system:serviceaccount:people:debugger");
  });

  it("refuses a user without the verb, naming the user and what is missing", async () => {
    const e = await refusal(tokens.nobody);
    expect(e.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(e.details).toContain(
      'user "system:serviceaccount:people:nobody" may not debug infras.hostedcluster.densityops.com in namespace oooi-system',
    );
  });

  it("refuses a token the API server does not accept, and a call with neither token nor certificate", async () => {
    const bad = await refusal("not-a-token");
    expect(bad.code).toBe(GrpcStatus.UNAUTHENTICATED);
    expect(bad.details).toContain("the API server did not accept the token");
    const none = await refusal();
    expect(none.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(none.details).toContain("a client without an oooi identity may not call /oooi.debug.v1.");
  });

  it("never takes a token on a discovery stream", async () => {
    const creds = credentials.combineChannelCredentials(
      // The serving certificate names the Service, not 127.0.0.1: this test is about what the server refuses.
      credentials.createSsl(Buffer.from(ca), null, null, { checkServerIdentity: () => undefined }),
      credentials.createFromMetadataGenerator((_p, done) => {
        const m = new Metadata();
        m.set("authorization", `Bearer ${tokens.debugger}`);
        done(null, m);
      }),
    );
    const s = openSotw(xds, undefined, creds);
    s.send({ node: { id: "x", cluster: "clusters/p" }, type_url: LISTENER_TYPE_URL });
    const ended = await s.ended();
    expect(ended.code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect(ended.details).toBe("a client without an oooi identity may not open a discovery stream");
    expect(s.received).toEqual([]);
  });

  it("says why a user without the role cannot even find the leader", async () => {
    const run = await runCli(["debug", "nodes", "--kubeconfig", kubeconfigs.nobody]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("cannot read the Lease oooi-system/oooi-operator: forbidden");
    expect(run.stderr).toContain("oooi-debugger");
  });

  it("asks for a token when the kubeconfig's user has a client certificate only", async () => {
    const run = await runCli(["debug", "nodes", "--kubeconfig", kubeconfigs.certOnly]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("the user has no bearer token");
    expect(run.stderr).toContain("kubectl create token");
  });

  it("port-forwards through the API server, which refuses without a kubelet; the CLI says so", async () => {
    const run = await runCli(["debug", "nodes", "--kubeconfig", kubeconfigs.debugger, "--timeout", "10000"]);
    expect(run.code).toBe(1);
    expect(run.stderr, run.stderr).toContain(`the API server refused the port-forward to oooi-system/${POD}:18000 (`);
    expect(run.stderr, run.stderr).toContain("could not reach the pod's kubelet");
  });
});
