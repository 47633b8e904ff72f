// A real, throwaway Kubernetes control plane for tests: etcd, kube-apiserver (RBAC, service-account
// tokens, our own serving certificate) and, by default, kube-controller-manager (garbage collector,
// namespace deletion), all on loopback ports in a temp dir, torn down by stop(). Binaries come from
// test/peers/install.sh kube; without them `KUBE_SKIP` says why (and CI, OOOI_REQUIRE_PEERS=1, fails).
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { loadKubeconfigFiles, type KubeClientConfig } from "../../../src/kube/kubeconfig.js";
import { peerBinary } from "../peers.js";
import { writeClusterPki, type ClusterPki } from "./pki.js";

// Keep equal to KUBE_VERSION / ETCD_VERSION in test/peers/install.sh.
export const KUBE_VERSION = "v1.34.4";
export const ETCD_VERSION = "v3.6.16";

const APISERVER = peerBinary(`kubernetes-${KUBE_VERSION}/kube-apiserver`, "kube");
const KCM = peerBinary(`kubernetes-${KUBE_VERSION}/kube-controller-manager`, "kube");
const ETCD = peerBinary(`etcd-${ETCD_VERSION}/etcd`, "kube");

/** Why the real-cluster suites skip here; undefined when all three binaries are built. */
export const KUBE_SKIP: string | undefined = APISERVER.skipReason ?? KCM.skipReason ?? ETCD.skipReason;

export interface KubeClusterOptions {
  /** Start kube-controller-manager with the cluster (else later, with startControllerManager()). Default true. */
  readonly controllerManager?: boolean;
  /** kube-controller-manager's --controllers (default garbagecollector and namespace). */
  readonly controllers?: readonly string[];
  /**
   * kube-apiserver's watch cache. Off, every watch is served by etcd itself, so a watch from a
   * compacted revision gets etcd's answer (410 Gone) rather than the cache's. Default true.
   */
  readonly watchCache?: boolean;
  /**
   * --service-cluster-ip-range (default 172.30.0.0/16, the examples' ClusterIPs). A 127.x range makes
   * ClusterIPs a test can listen on: a Service address that really leads somewhere on loopback.
   */
  readonly serviceClusterIpRange?: string;
}

/** One HTTP answer: status and the parsed JSON body (or the raw text when it is not JSON). */
export interface KubeAnswer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

export interface KubeCallOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  /** Bearer token; default the admin's. */
  readonly token?: string;
  readonly query?: Readonly<Record<string, string>>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      s.close(() => {
        resolve(port);
      });
    });
  });
}

interface Component {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
  exited: boolean;
}

/** A running etcd + kube-apiserver (+ kube-controller-manager). */
export class KubeCluster {
  readonly dir: string;
  readonly pki: ClusterPki;
  /** https://127.0.0.1:PORT */
  readonly url: string;
  readonly etcdUrl: string;
  /** system:masters token; kubectl uses it through `kubeconfig`. */
  readonly adminToken: string;
  /** Path of the admin kubeconfig. */
  readonly kubeconfig: string;
  readonly #components: Component[] = [];
  readonly #ca: Buffer;
  #kcmToken = "";
  #peerPort = 0;

  private constructor(dir: string, pki: ClusterPki, url: string, etcdUrl: string, adminToken: string) {
    this.dir = dir;
    this.pki = pki;
    this.url = url;
    this.etcdUrl = etcdUrl;
    this.adminToken = adminToken;
    this.#ca = readFileSync(pki.caCert);
    this.kubeconfig = this.writeKubeconfig("admin", adminToken);
  }

  static async start(opts: KubeClusterOptions = {}): Promise<KubeCluster> {
    const cluster = await KubeCluster.prepare();
    await cluster.boot(opts);
    return cluster;
  }

  /**
   * A cluster not started yet: its folder, PKI, tokens, admin kubeconfig and a free API server port
   * (`url`) exist, nothing listens there until boot() — an API server that is away, then comes.
   */
  static async prepare(): Promise<KubeCluster> {
    if (KUBE_SKIP !== undefined) throw new Error(KUBE_SKIP);
    const dir = mkdtempSync(join(tmpdir(), "oooi-kube-"));
    const pki = writeClusterPki(dir);
    const [etcdPort, peerPort, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const etcdUrl = `http://127.0.0.1:${String(etcdPort)}`;
    const adminToken = randomBytes(16).toString("hex");
    const kcmToken = randomBytes(16).toString("hex");
    // Static tokens: the admin and kube-controller-manager are system:masters (kcm's own bootstrap
    // role does not cover the garbage collector's deletes without per-controller service accounts).
    writeFileSync(
      join(dir, "tokens.csv"),
      [
        `${adminToken},oooi-test-admin,uid-admin,"system:masters"`,
        `${kcmToken},system:kube-controller-manager,uid-kcm,"system:masters"`,
      ].join("\n") + "\n",
    );
    const cluster = new KubeCluster(dir, pki, `https://127.0.0.1:${String(apiPort)}`, etcdUrl, adminToken);
    cluster.#kcmToken = kcmToken;
    cluster.#peerPort = peerPort;
    return cluster;
  }

  /** Starts etcd, kube-apiserver on `url`'s port and (by default) kube-controller-manager; stops all on failure. */
  async boot(opts: KubeClusterOptions = {}): Promise<void> {
    if (APISERVER.path === undefined || KCM.path === undefined || ETCD.path === undefined)
      throw new Error(KUBE_SKIP ?? "kube binaries missing");
    const { dir, pki, etcdUrl } = this;
    const peerPort = this.#peerPort;
    const apiPort = new URL(this.url).port;
    try {
      this.#spawn("etcd", ETCD.path, [
        "--name",
        "test",
        "--data-dir",
        join(dir, "etcd"),
        "--listen-client-urls",
        etcdUrl,
        "--advertise-client-urls",
        etcdUrl,
        "--listen-peer-urls",
        `http://127.0.0.1:${String(peerPort)}`,
        "--initial-advertise-peer-urls",
        `http://127.0.0.1:${String(peerPort)}`,
        "--initial-cluster",
        `test=http://127.0.0.1:${String(peerPort)}`,
        // A test cluster lives minutes; durability would only cost CI time.
        "--unsafe-no-fsync",
        "--log-level",
        "warn",
      ]);
      await this.#waitFor("etcd", () => this.#etcdHealthy());
      this.#spawn("kube-apiserver", APISERVER.path, [
        "--etcd-servers",
        etcdUrl,
        "--bind-address",
        "127.0.0.1",
        "--advertise-address",
        "127.0.0.1",
        "--secure-port",
        apiPort,
        "--cert-dir",
        join(dir, "apiserver-certs"),
        "--tls-cert-file",
        pki.servingCert,
        "--tls-private-key-file",
        pki.servingKey,
        "--token-auth-file",
        join(dir, "tokens.csv"),
        // Client certificates the test CA signs authenticate as their CN (user) and O (groups).
        "--client-ca-file",
        pki.caCert,
        "--authorization-mode",
        "RBAC",
        "--service-account-issuer",
        "https://kubernetes.default.svc.this.local",
        "--service-account-key-file",
        pki.saPub,
        "--service-account-signing-key-file",
        pki.saKey,
        // The example's ClusterIPs (172.30.x) must fall inside the range to be accepted.
        "--service-cluster-ip-range",
        opts.serviceClusterIpRange ?? "172.30.0.0/16",
        // No kubelets or Endpoints for the default/kubernetes Service: nothing to reconcile.
        "--endpoint-reconciler-type",
        "none",
        // OpenShift enables it: setting blockOwnerDeletion needs update on the owner's finalizers.
        "--enable-admission-plugins",
        "OwnerReferencesPermissionEnforcement",
        // Only the tests compact etcd, so when it happens is theirs to say.
        "--etcd-compaction-interval",
        "0",
        ...(opts.watchCache === false ? ["--watch-cache=false"] : []),
        "--profiling=false",
      ]);
      await this.#waitFor("kube-apiserver", async () => (await this.call("GET", "/readyz")).status === 200);
      if (opts.controllerManager !== false) await this.startControllerManager(opts.controllers);
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  #spawn(name: string, path: string, args: string[]): void {
    const log = join(this.dir, `${name}.log`);
    const fd = openSync(log, "a");
    const child = spawn(path, args, { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    const component: Component = { name, child, log, exited: false };
    child.once("exit", () => {
      component.exited = true;
    });
    this.#components.push(component);
  }

  async #waitFor(name: string, ready: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const component = this.#components.find((c) => c.name === name);
    for (;;) {
      if (component?.exited === true) throw new Error(`${name} exited:\n${this.logTail(name)}`);
      try {
        if (await ready()) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline)
        throw new Error(`${name} not ready after ${String(timeoutMs)} ms:\n${this.logTail(name)}`);
      await sleep(100);
    }
  }

  async #etcdHealthy(): Promise<boolean> {
    const r = await this.etcd("/health", undefined, "GET");
    return (r as { health?: string }).health === "true";
  }

  /**
   * Starts kube-controller-manager (garbage collector, namespace controller). Start it after
   * installing CRDs when its garbage collector must act on them at once: it otherwise notices new
   * resources only at its next discovery resync (30 s).
   */
  async startControllerManager(controllers: readonly string[] = ["garbagecollector", "namespace"]): Promise<void> {
    if (KCM.path === undefined || this.#components.some((c) => c.name === "kube-controller-manager")) return;
    const port = await freePort();
    const config = this.writeKubeconfig("kube-controller-manager", this.#kcmToken);
    this.#spawn("kube-controller-manager", KCM.path, [
      "--kubeconfig",
      config,
      "--authentication-kubeconfig",
      config,
      "--authorization-kubeconfig",
      config,
      "--bind-address",
      "127.0.0.1",
      "--secure-port",
      String(port),
      "--cert-dir",
      join(this.dir, "kcm-certs"),
      "--controllers",
      controllers.join(","),
      "--leader-elect=false",
      "--use-service-account-credentials=false",
      "--profiling=false",
    ]);
    await this.#waitFor("kube-controller-manager", () => this.#kcmHealthy(port));
  }

  #kcmHealthy(port: number): Promise<boolean> {
    // Its self-signed serving certificate is not ours to trust; this only asks whether it is up.
    return new Promise((resolve, reject) => {
      const r = httpsRequest({ host: "127.0.0.1", port, path: "/healthz", rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      r.on("error", reject);
      r.end();
    });
  }

  /** The last lines of a component's log, for failure messages. */
  logTail(name: string, lines = 30): string {
    try {
      return readFileSync(join(this.dir, `${name}.log`), "utf8")
        .split("\n")
        .slice(-lines)
        .join("\n");
    } catch {
      return "(no log)";
    }
  }

  /** Writes a kubeconfig for this cluster (or `server`, a relay to it) authenticating with `token`; returns its path. */
  writeKubeconfig(name: string, token: string, server = this.url): string {
    const path = join(this.dir, `${name}.kubeconfig`);
    writeFileSync(
      path,
      JSON.stringify(
        {
          apiVersion: "v1",
          kind: "Config",
          "current-context": name,
          clusters: [{ name: "test", cluster: { server, "certificate-authority": this.pki.caCert } }],
          users: [{ name, user: { token } }],
          contexts: [{ name, context: { cluster: "test", user: name, namespace: "default" } }],
        },
        null,
        2,
      ),
    );
    return path;
  }

  /** The client configuration for `token` (what the operator is given), read from a kubeconfig file. */
  kubeConfigFor(name: string, token: string, server = this.url): KubeClientConfig {
    return loadKubeconfigFiles([this.writeKubeconfig(name, token, server)]);
  }

  /** One REST call as the admin (or `opts.token`). */
  call<T = Record<string, unknown>>(method: string, path: string, opts: KubeCallOptions = {}): Promise<KubeAnswer<T>> {
    const url = new URL(this.url + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> = {
      Accept: "application/json",
      Authorization: `Bearer ${opts.token ?? this.adminToken}`,
    };
    if (body !== undefined) headers["Content-Type"] = opts.contentType ?? "application/json";
    return new Promise((resolve, reject) => {
      const r = httpsRequest(url, { method, headers, ca: this.#ca }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain-text answers (/readyz) stay text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T });
        });
        res.on("error", reject);
      });
      r.on("error", reject);
      r.end(body);
    });
  }

  /** Like call(), but throws unless the status is 2xx. */
  async must<T = Record<string, unknown>>(method: string, path: string, opts: KubeCallOptions = {}): Promise<T> {
    const r = await this.call<T>(method, path, opts);
    if (r.status < 200 || r.status > 299)
      throw new Error(`${method} ${path}: ${String(r.status)} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** Runs kubectl as the admin. */
  kubectl(args: readonly string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        "kubectl",
        ["--kubeconfig", this.kubeconfig, ...args],
        { maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          const code =
            err === null
              ? 0
              : typeof (err as { code?: unknown }).code === "number"
                ? (err as { code: number }).code
                : 1;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin?.end(stdin);
    });
  }

  /** Like kubectl(), but throws with its stderr unless it exits 0; returns stdout. */
  async mustKubectl(args: readonly string[], stdin?: string): Promise<string> {
    const r = await this.kubectl(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: exit ${String(r.code)}\n${r.stderr}`);
    return r.stdout;
  }

  /** A JSON call on etcd's gRPC gateway (the v3 API over HTTP), e.g. /v3/kv/range. */
  etcd(path: string, body: unknown, method = "POST"): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const r = httpRequest(this.etcdUrl + path, { method, headers: { "Content-Type": "application/json" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if ((res.statusCode ?? 0) >= 400) reject(new Error(`etcd ${path}: ${String(res.statusCode)} ${text}`));
          else resolve(JSON.parse(text));
        });
      });
      r.on("error", reject);
      r.end(data);
    });
  }

  /** Compacts etcd's history up to its current revision (as `etcdctl compact --physical`); returns it. */
  async compactEtcd(): Promise<number> {
    // Any range answers with the store's current revision in its header.
    const range = (await this.etcd("/v3/kv/range", { key: Buffer.from("/").toString("base64") })) as {
      header?: { revision?: string };
    };
    const revision = Number(range.header?.revision ?? "0");
    await this.etcd("/v3/kv/compaction", { revision: String(revision), physical: true });
    return revision;
  }

  /** Stops every component (kcm, then the API server, then etcd) and removes the temp dir. */
  async stop(): Promise<void> {
    for (const c of [...this.#components].reverse()) {
      if (c.exited) continue;
      const exited = new Promise<void>((resolve) =>
        c.child.once("exit", () => {
          resolve();
        }),
      );
      c.child.kill("SIGTERM");
      const killed = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!killed) {
        c.child.kill("SIGKILL");
        await exited;
      }
    }
    this.#components.length = 0;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
