// The operator's HTTP port on a real API server (docs/security.md#the-operators-http-port): the built
// CLI as deployed, with deploy/rbac's identity, lets in only a bearer token whose user a
// ClusterRoleBinding of oooi-metrics-reader allows to get the path (TokenReview, then
// SubjectAccessReview); the kubelet's probes stay open; --http-auth=none opens the rest. The port is
// HTTPS whenever it reviews tokens: on a self-signed certificate by default, on the files given
// (and on their replacement, without a restart) otherwise. Then the review itself: answers are
// reused for their TTL, shared by concurrent requests, and bounded.
import { X509Certificate } from "node:crypto";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricsReaderBindingCommand } from "../../src/operator/desired/permissions.js";
import { AccessReview, type AccessDecision } from "../../src/operator/process/access-review.js";
import { KubeRest } from "../../src/kube/rest.js";
import { issueCa, issueLeaf, loadCa } from "../../src/pki/issue.js";
import { SILENT_LOGGER } from "../../src/util/logger.js";
import { oooi, OperatorProcess } from "../support/cli.js";
import { eventually } from "../support/fake-apiserver/index.js";
import { httpGet } from "../support/http-get.js";
import { KUBE_SKIP } from "../support/kube/cluster.js";
import { ManualClock } from "../support/manual-clock.js";
import { createNamespaces, installCrds, operatorToken, serviceAccountToken, useKubeCluster } from "./support.js";

/** The built operator with `args`, as deploy/ runs it but on loopback, one replica, xDS in plaintext. */
const spawnOperator = (kubeconfig: string, args: readonly string[]) =>
  new OperatorProcess(kubeconfig, ["--xds-plaintext", "--no-leader-election", ...args]);

/** Status, body and headers of one request. */
async function get(url: string, authorization?: string, method = "GET") {
  const res = await httpGet(url, { method, ...(authorization === undefined ? {} : { authorization }) });
  return { ...res, challenge: res.headers["www-authenticate"] };
}

/** A CA and a server certificate for localhost it signs, PEM. */
async function servingPair() {
  const now = Date.now();
  const ca = await issueCa("test http ca", { now, lifetimeMs: 3600_000 });
  const leaf = await issueLeaf(
    await loadCa(ca.certPem, ca.keyPem),
    { kind: "server", commonName: "localhost", dnsNames: ["localhost"] },
    { now, lifetimeMs: 3600_000 },
  );
  return {
    ca: ca.certPem,
    cert: leaf.certPem,
    key: leaf.keyPem,
    fingerprint: new X509Certificate(leaf.certPem).fingerprint256,
  };
}

describe.skipIf(KUBE_SKIP !== undefined)("the operator's HTTP port on a real API server", () => {
  let kubeconfig = "";
  const tokens = { operator: "", reader: "", nobody: "", namespaced: "", revoked: "" };
  const kube = useKubeCluster({ controllerManager: false }, async (cluster) => {
    await installCrds(cluster);
    tokens.operator = await operatorToken(cluster);
    kubeconfig = cluster.writeKubeconfig("oooi-operator", tokens.operator);
    await createNamespaces(cluster, ["monitoring"]);
    for (const sa of ["prometheus", "nobody", "namespaced", "revoked"])
      await cluster.mustKubectl(["create", "serviceaccount", sa, "-n", "monitoring"]);
    // As docs/security.md tells: a ClusterRoleBinding. A RoleBinding grants no non-resource URL.
    const [kubectl, ...bind] = metricsReaderBindingCommand("monitoring:prometheus").split(" ");
    expect(kubectl).toBe("kubectl");
    await cluster.mustKubectl(bind);
    await cluster.mustKubectl(
      ["create", "rolebinding", "reader", "--clusterrole=oooi-metrics-reader"].concat(
        "--serviceaccount=monitoring:namespaced",
        "-n",
        "monitoring",
      ),
    );
    await cluster.mustKubectl(
      ["create", "clusterrolebinding", "revocable", "--clusterrole=oooi-metrics-reader"].concat(
        "--serviceaccount=monitoring:revoked",
      ),
    );
    tokens.reader = await serviceAccountToken(cluster, "monitoring", "prometheus");
    tokens.nobody = await serviceAccountToken(cluster, "monitoring", "nobody");
    tokens.namespaced = await serviceAccountToken(cluster, "monitoring", "namespaced");
    tokens.revoked = await serviceAccountToken(cluster, "monitoring", "revoked");
  });
  const bearer = (who: keyof typeof tokens) => `Bearer ${tokens[who]}`;

  describe("oooi operator (default --http-auth=kubernetes)", () => {
    let op: OperatorProcess | undefined;
    let base = "";
    beforeAll(async () => {
      op = spawnOperator(kubeconfig, []);
      base = await op.httpBase();
    }, 30_000);
    afterAll(async () => {
      await op?.stop();
    });

    it("serves HTTPS on a self-signed certificate it made, and says so; plain HTTP gets no page", async () => {
      expect(base).toMatch(/^https:\/\//);
      expect(op?.log).toContain("self-signed certificate");
      const served = await get(`${base}/healthz`);
      expect(served.fingerprint).toMatch(/^[0-9A-F:]+$/);
      await expect(httpGet(`${base.replace(/^https:/, "http:")}/metrics`)).rejects.toThrow();
    });

    it("keeps the probes open, over HTTPS without a token, as the kubelet asks", async () => {
      expect((await get(`${base}/healthz`)).status).toBe(200);
      await eventually(async () => {
        expect((await get(`${base}/readyz`)).status).toBe(200);
      }, 20_000);
    });

    const refused: readonly { name: string; path: string; auth?: () => string; status: number; says: string }[] = [
      { name: "no token: /metrics", path: "/metrics", status: 401, says: "Authorization: Bearer <token>" },
      { name: "no token: /status.json", path: "/status.json", status: 401, says: "Bearer" },
      { name: "no token: the page", path: "/", status: 401, says: "Bearer" },
      { name: "no token: /events", path: "/events", status: 401, says: "Bearer" },
      { name: "no token: any other path", path: "/nothing", status: 401, says: "Bearer" },
      {
        name: "a token the API server does not accept",
        path: "/metrics",
        auth: () => "Bearer not-a-token",
        status: 401,
        says: "did not accept the token",
      },
      {
        name: "another scheme",
        path: "/metrics",
        auth: () => `Basic ${Buffer.from("admin:admin").toString("base64")}`,
        status: 401,
        says: "Bearer",
      },
      {
        name: "a ServiceAccount without the role",
        path: "/metrics",
        auth: () => bearer("nobody"),
        status: 403,
        says: 'user "system:serviceaccount:monitoring:nobody" may not get /metrics',
      },
      {
        name: "a ServiceAccount without the role: /status.json",
        path: "/status.json",
        auth: () => bearer("nobody"),
        status: 403,
        says: "may not get /status.json",
      },
      {
        name: "the role bound by a RoleBinding (non-resource URLs need a ClusterRoleBinding)",
        path: "/metrics",
        auth: () => bearer("namespaced"),
        status: 403,
        says: "may not get /metrics",
      },
      {
        name: "the reader, for a path the role does not name",
        path: "/nothing",
        auth: () => bearer("reader"),
        status: 403,
        says: "may not get /nothing",
      },
    ];
    it.each(refused)("$name: $status", async ({ path, auth, status, says }) => {
      const res = await get(`${base}${path}`, auth?.());
      expect(res.status).toBe(status);
      expect(res.type).toMatch(/^text\/plain/);
      expect(res.body).toContain(says);
      if (status === 401) expect(res.challenge).toBe("Bearer");
    });

    it("lets the reader get /metrics, /status.json, the page and /events", async () => {
      const metrics = await get(`${base}/metrics`, bearer("reader"));
      expect(metrics.status).toBe(200);
      expect(metrics.body).toMatch(/^oooi_informers_synced /m);
      // The reviews themselves went through the operator's API client: created (201), none refused.
      expect(metrics.body).not.toMatch(/oooi_kube_requests_total\{method="POST",code="403"\} [1-9]/);
      const status = await get(`${base}/status.json`, bearer("reader"));
      expect(status.status).toBe(200);
      expect(JSON.parse(status.body)).toHaveProperty("infras");
      const page = await get(`${base}/`, bearer("reader"));
      expect([page.status, page.type]).toEqual([200, "text/html; charset=utf-8"]);
      const events = await get(`${base}/events`, bearer("reader"));
      expect([events.status, events.type]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
    });

    it("reviews the method as the verb: a POST is not a get", async () => {
      expect((await get(`${base}/metrics`, bearer("reader"), "POST")).status).toBe(403);
    });
  });

  it("--http-auth=none opens the page and /metrics to anyone, and says so", async () => {
    const op = spawnOperator(kubeconfig, ["--http-auth", "none"]);
    try {
      const base = await op.httpBase();
      expect(base).toMatch(/^http:\/\//);
      expect((await get(`${base}/metrics`)).status).toBe(200);
      expect((await get(`${base}/status.json`)).status).toBe(200);
      expect(op.log).toContain("--http-auth=none");
    } finally {
      await op.stop();
    }
  }, 30_000);

  it("serves the certificate of --http-tls-cert, and its replacement once the files change, no restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oooi-http-tls-"));
    const files = { cert: join(dir, "tls.crt"), key: join(dir, "tls.key") };
    // As a Secret volume changes: each file replaced whole, by a rename.
    const install = (pair: { cert: string; key: string }) => {
      for (const part of ["key", "cert"] as const) {
        writeFileSync(`${files[part]}.new`, pair[part]);
        renameSync(`${files[part]}.new`, files[part]);
      }
    };
    const first = await servingPair();
    install(first);
    const op = spawnOperator(kubeconfig, ["--http-tls-cert", files.cert, "--http-tls-key", files.key]);
    try {
      const base = (await op.httpBase()).replace("127.0.0.1", "localhost");
      expect(op.log).not.toContain("self-signed");
      const verified = await httpGet(`${base}/metrics`, { ca: first.ca, authorization: bearer("reader") });
      expect([verified.status, verified.fingerprint]).toEqual([200, first.fingerprint]);
      const second = await servingPair();
      install(second);
      await eventually(async () => {
        const probe = await httpGet(`${base}/healthz`, { ca: second.ca });
        expect([probe.status, probe.fingerprint]).toEqual([200, second.fingerprint]);
      }, 30_000);
      expect(op.child.exitCode).toBe(null);
    } finally {
      await op.stop();
    }
  }, 60_000);

  it("--http-tls-cert without --http-tls-key: exit 2, naming both", async () => {
    const run = await oooi(["operator", "--kubeconfig", kubeconfig, "--http-tls-cert", "/nonexistent/tls.crt"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--http-tls-cert and --http-tls-key go together");
  });

  describe("AccessReview", () => {
    let requests = 0;
    const review = (clock: ManualClock, opts: { maxEntries?: number; maxInFlight?: number } = {}) =>
      new AccessReview({
        rest: new KubeRest(kube().kubeConfigFor("operator", tokens.operator), {
          onResponse: () => {
            requests++;
          },
        }),
        now: () => clock.now(),
        logger: SILENT_LOGGER,
        ttlMs: 10_000,
        ...opts,
      });
    const allowed = (d: AccessDecision) => (d.allowed ? 200 : d.status);

    it("asks the API server once per token and once per user and path within the TTL, again after it", async () => {
      const clock = new ManualClock();
      const access = review(clock);
      requests = 0;
      expect(allowed(await access.decide(bearer("reader"), "GET", "/metrics"))).toBe(200);
      expect(requests).toBe(2); // TokenReview + SubjectAccessReview
      for (let i = 0; i < 5; i++) {
        clock.advance(1_000);
        expect(allowed(await access.decide(bearer("reader"), "GET", "/metrics"))).toBe(200);
      }
      expect(requests).toBe(2);
      expect(allowed(await access.decide(bearer("reader"), "HEAD", "/status.json"))).toBe(200);
      expect(requests).toBe(3); // the token's user is known: one SubjectAccessReview
      clock.advance(10_000);
      expect(allowed(await access.decide(bearer("reader"), "GET", "/metrics"))).toBe(200);
      expect(requests).toBe(5);
    });

    it("concurrent requests share one review", async () => {
      const access = review(new ManualClock());
      requests = 0;
      const decisions = await Promise.all(
        Array.from({ length: 8 }, () => access.decide(bearer("nobody"), "GET", "/metrics")),
      );
      expect(decisions.map(allowed)).toEqual(Array<number>(8).fill(403));
      expect(requests).toBe(2);
    });

    it("a revoked binding is seen once its answer expires", async () => {
      const clock = new ManualClock();
      const access = review(clock);
      expect(allowed(await access.decide(bearer("revoked"), "GET", "/metrics"))).toBe(200);
      await kube().mustKubectl(["delete", "clusterrolebinding", "revocable"]);
      expect(allowed(await access.decide(bearer("revoked"), "GET", "/metrics"))).toBe(200);
      await eventually(async () => {
        clock.advance(10_000);
        expect(allowed(await access.decide(bearer("revoked"), "GET", "/metrics"))).toBe(403);
      }, 10_000);
    });

    it("keeps at most maxEntries answers: past them the oldest token is reviewed again", async () => {
      const access = review(new ManualClock(), { maxEntries: 2 });
      const who = ["reader", "nobody", "namespaced"] as const;
      for (const w of who) await access.decide(bearer(w), "GET", "/metrics");
      requests = 0;
      await access.decide(bearer("namespaced"), "GET", "/metrics");
      expect(requests).toBe(0);
      await access.decide(bearer("reader"), "GET", "/metrics");
      expect(requests).toBe(2);
    });

    it("an operator not allowed to review tokens refuses with 500 and logs the API server's reason", async () => {
      const warnings: string[] = [];
      const access = new AccessReview({
        rest: new KubeRest(kube().kubeConfigFor("nobody", tokens.nobody)),
        now: () => 0,
        logger: {
          warn: (obj) => {
            warnings.push(JSON.stringify(obj));
          },
        },
      });
      expect(await access.decide(bearer("reader"), "GET", "/metrics")).toEqual({
        allowed: false,
        status: 500,
        reason: "Access review failed (the operator's log says why)",
      });
      expect(warnings.join("\n")).toMatch(/cannot create resource \\"tokenreviews\\"/);
    });

    it("past maxInFlight reviews at once, a request not already answered gets 503", async () => {
      const access = review(new ManualClock(), { maxInFlight: 1 });
      const [first, second] = await Promise.all([
        access.decide(bearer("reader"), "GET", "/metrics"),
        access.decide(bearer("nobody"), "GET", "/metrics"),
      ]);
      expect([allowed(first), allowed(second)]).toEqual([200, 503]);
      expect(second).toMatchObject({ reason: expect.stringContaining("Too many access reviews") as unknown });
    });
  });
});
