// Where the API server is and how to authenticate to it: a kubeconfig's context resolved, or the pod's
// own service account. Our own reader rather than client-node's KubeConfig: that class lives in a
// module that loads the whole generated API client (~70 MiB RSS in a process that uses none of it),
// and it runs a kubeconfig's exec plugin even when the kubeconfig came from a Secret.
// The rules are client-go's (clientcmd): file paths relative to the kubeconfig's folder, a
// $KUBECONFIG list merged with the first definition of a name winning, and controller-runtime's
// order --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { isIP } from "node:net";
import { parse } from "yaml";

/** A kubeconfig (or in-cluster configuration) that cannot be used; the message names the file and field. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KubeconfigError";
  }
}

/** A kubeconfig exec credential plugin (client.authentication.k8s.io ExecConfig). */
export interface ExecPlugin {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  /** client.authentication.k8s.io/v1 or /v1beta1: the ExecCredential version exchanged. */
  readonly apiVersion: string;
  readonly installHint?: string;
}

/** How requests prove who they are, besides a client certificate. */
export type KubeCredential =
  | { readonly kind: "none" }
  | { readonly kind: "token"; readonly token: string }
  /** Re-read now and then: kubelet rotates projected service-account tokens in place. */
  | { readonly kind: "tokenFile"; readonly path: string }
  | { readonly kind: "basic"; readonly username: string; readonly password: string }
  | { readonly kind: "exec"; readonly plugin: ExecPlugin };

/** Everything needed to reach one API server as one user (client-go's rest.Config, the fields we honour). */
export interface KubeClientConfig {
  /** Base URL without a trailing slash, e.g. https://10.0.0.1:6443. */
  readonly server: string;
  /** PEM bundle the serving certificate must chain to (system roots when absent). */
  readonly ca?: string;
  readonly insecureSkipTlsVerify: boolean;
  /** Name verified in (and sent as SNI for) the serving certificate instead of the URL's host. */
  readonly tlsServerName?: string;
  /** PEM client certificate and key. */
  readonly clientCertificate?: { readonly cert: string; readonly key: string };
  readonly credential: KubeCredential;
  readonly impersonate?: { readonly user?: string; readonly uid?: string; readonly groups: readonly string[] };
  /** The context's namespace, if it names one. */
  readonly namespace?: string;
  /** Where this came from, for messages: `kubeconfig FILE, context "c"` or `in-cluster service account`. */
  readonly origin: string;
}

/** How much a kubeconfig may do on this machine. */
export interface KubeconfigTrust {
  /**
   * Folder that relative file paths resolve against; undefined for a kubeconfig that is not a file
   * of ours (a Secret's): then it may neither name files nor run an exec plugin.
   */
  readonly dir: string | undefined;
  /** Context to use instead of current-context. */
  readonly context?: string;
}

type Named = { name: string; body: Record<string, unknown> };

/** A kubeconfig document, or several merged: the first definition of each name and the first current-context win. */
interface KubeconfigDoc {
  readonly source: string;
  readonly clusters: Map<string, Named & { dir: string | undefined; source: string }>;
  readonly users: Map<string, Named & { dir: string | undefined; source: string }>;
  readonly contexts: Map<string, Named & { source: string }>;
  readonly currentContext: string | undefined;
}

/** Parses kubeconfig text (YAML or JSON) into its named lists; throws KubeconfigError naming the field. */
function parseDoc(text: string, source: string, dir: string | undefined): KubeconfigDoc {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    throw new KubeconfigError(`${source}: not YAML: ${(e as Error).message.split("\n")[0] ?? ""}`);
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new KubeconfigError(`${source}: not a kubeconfig (a mapping)`);
  const doc = raw as Record<string, unknown>;
  const list = (field: "clusters" | "users" | "contexts", inner: string): Named[] => {
    const v = doc[field];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new KubeconfigError(`${source}: ${field} must be a list`);
    return v.map((entry: unknown, i) => {
      const e = (entry ?? {}) as Record<string, unknown>;
      const name = e["name"];
      if (typeof name !== "string" || name === "")
        throw new KubeconfigError(`${source}: ${field}[${String(i)}].name is missing`);
      const body = e[inner] ?? {};
      if (typeof body !== "object" || Array.isArray(body))
        throw new KubeconfigError(`${source}: ${field}[${String(i)}] (${name}).${inner} must be a mapping`);
      return { name, body: body as Record<string, unknown> };
    });
  };
  const byName = <T extends Named>(items: Named[], extra: Omit<T, keyof Named>): Map<string, T> => {
    const m = new Map<string, T>();
    for (const it of items) if (!m.has(it.name)) m.set(it.name, { ...it, ...extra } as T);
    return m;
  };
  const current = doc["current-context"];
  return {
    source,
    clusters: byName(list("clusters", "cluster"), { dir, source }),
    users: byName(list("users", "user"), { dir, source }),
    contexts: byName(list("contexts", "context"), { source }),
    currentContext: typeof current === "string" && current !== "" ? current : undefined,
  };
}

function mergeDocs(docs: readonly KubeconfigDoc[]): KubeconfigDoc {
  const first = docs[0];
  if (first === undefined) throw new KubeconfigError("no kubeconfig given");
  const merge = <V>(pick: (d: KubeconfigDoc) => Map<string, V>): Map<string, V> => {
    const m = new Map<string, V>();
    for (const d of docs) for (const [k, v] of pick(d)) if (!m.has(k)) m.set(k, v);
    return m;
  };
  return {
    source: docs.map((d) => d.source).join(delimiter),
    clusters: merge((d) => d.clusters),
    users: merge((d) => d.users),
    contexts: merge((d) => d.contexts),
    currentContext: docs.find((d) => d.currentContext !== undefined)?.currentContext,
  };
}

/** The client configuration of a kubeconfig's current (or named) context. */
export function kubeconfigFromText(text: string, source: string, trust: KubeconfigTrust): KubeClientConfig {
  return resolveContext(parseDoc(text, source, trust.dir), trust.context);
}

/** Reads kubeconfig files (several: merged as $KUBECONFIG is) and resolves the current context. */
export function loadKubeconfigFiles(paths: readonly string[], context?: string): KubeClientConfig {
  const docs = paths.map((p) => {
    const path = resolve(p);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new KubeconfigError(`kubeconfig ${p}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    return parseDoc(text, `kubeconfig ${p}`, dirname(path));
  });
  return resolveContext(mergeDocs(docs), context);
}

function resolveContext(doc: KubeconfigDoc, contextFlag: string | undefined): KubeClientConfig {
  const contextName = contextFlag ?? doc.currentContext;
  if (contextName === undefined) throw new KubeconfigError(`${doc.source}: no current-context`);
  const context = doc.contexts.get(contextName);
  if (context === undefined) throw new KubeconfigError(`${doc.source}: context "${contextName}" is not defined`);
  const at = `${context.source}, context "${contextName}"`;
  const clusterName = str(context.body, "cluster", `${at}: context.cluster`);
  const userName = str(context.body, "user", `${at}: context.user`);
  if (clusterName === undefined) throw new KubeconfigError(`${at}: context.cluster is missing`);
  const cluster = doc.clusters.get(clusterName);
  if (cluster === undefined) throw new KubeconfigError(`${at}: cluster "${clusterName}" is not defined`);
  const user = userName === undefined ? undefined : doc.users.get(userName);
  if (userName !== undefined && user === undefined)
    throw new KubeconfigError(`${at}: user "${userName}" is not defined`);
  const namespace = str(context.body, "namespace", `${at}: context.namespace`);
  return {
    // Merged files keep each entry's own folder for its relative paths (clientcmd's rule).
    ...clusterPart(cluster.body, `${cluster.source}, cluster "${clusterName}"`, cluster.dir),
    ...(user === undefined
      ? { credential: { kind: "none" } }
      : userPart(user.body, `${user.source}, user "${user.name}"`, user.dir)),
    ...(namespace === undefined || namespace === "" ? {} : { namespace }),
    origin: at,
  };
}

function clusterPart(
  c: Record<string, unknown>,
  at: string,
  dir: string | undefined,
): Pick<KubeClientConfig, "server" | "ca" | "insecureSkipTlsVerify" | "tlsServerName"> {
  const server = str(c, "server", `${at}: server`);
  if (server === undefined || server === "") throw new KubeconfigError(`${at}: server is missing`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`${at}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new KubeconfigError(`${at}: server ${JSON.stringify(server)} is neither https:// nor http://`);
  if (c["proxy-url"] !== undefined)
    throw new KubeconfigError(`${at}: proxy-url is not supported; reach the API server directly`);
  const insecure = bool(c, "insecure-skip-tls-verify", `${at}: insecure-skip-tls-verify`) ?? false;
  const ca = dataOrFile(c, "certificate-authority", at, dir);
  if (insecure && ca !== undefined)
    throw new KubeconfigError(`${at}: certificate-authority and insecure-skip-tls-verify exclude each other`);
  const tlsServerName = str(c, "tls-server-name", `${at}: tls-server-name`);
  return {
    server: server.replace(/\/+$/, ""),
    ...(ca === undefined ? {} : { ca }),
    insecureSkipTlsVerify: insecure,
    ...(tlsServerName === undefined || tlsServerName === "" ? {} : { tlsServerName }),
  };
}

function userPart(
  u: Record<string, unknown>,
  at: string,
  dir: string | undefined,
): Pick<KubeClientConfig, "clientCertificate" | "credential" | "impersonate"> {
  if (u["auth-provider"] !== undefined)
    throw new KubeconfigError(
      `${at}: auth-provider is not supported (Kubernetes removed the in-tree providers); use an exec credential plugin`,
    );
  const cert = dataOrFile(u, "client-certificate", at, dir);
  const key = dataOrFile(u, "client-key", at, dir);
  if ((cert === undefined) !== (key === undefined))
    throw new KubeconfigError(`${at}: client-certificate and client-key go together`);
  const token = str(u, "token", `${at}: token`);
  const tokenFile = str(u, "tokenFile", `${at}: tokenFile`);
  const username = str(u, "username", `${at}: username`);
  const password = str(u, "password", `${at}: password`);
  const exec = u["exec"];
  const bearer = (token ?? "") !== "" || (tokenFile ?? "") !== "";
  if (bearer && (username ?? "") !== "")
    throw new KubeconfigError(`${at}: username/password and a bearer token exclude each other`);
  if (bearer && exec !== undefined && exec !== null)
    throw new KubeconfigError(`${at}: exec and a bearer token exclude each other`);
  let credential: KubeCredential;
  if (tokenFile !== undefined && tokenFile !== "") {
    // client-go: the file's last successfully read content takes precedence over token.
    if (dir === undefined) throw new KubeconfigError(`${at}: tokenFile names a file; embed the token instead`);
    credential = { kind: "tokenFile", path: inDir(dir, tokenFile) };
  } else if (token !== undefined && token !== "") credential = { kind: "token", token };
  else if (username !== undefined && username !== "")
    credential = { kind: "basic", username, password: password ?? "" };
  else if (exec !== undefined && exec !== null) credential = { kind: "exec", plugin: execPlugin(exec, at, dir) };
  else credential = { kind: "none" };
  const as = str(u, "as", `${at}: as`);
  const asUid = str(u, "as-uid", `${at}: as-uid`);
  const groups = u["as-groups"];
  if (groups !== undefined && (!Array.isArray(groups) || !groups.every((g) => typeof g === "string")))
    throw new KubeconfigError(`${at}: as-groups must be a list of strings`);
  const impersonate =
    as === undefined && asUid === undefined && groups === undefined
      ? undefined
      : {
          ...(as === undefined ? {} : { user: as }),
          ...(asUid === undefined ? {} : { uid: asUid }),
          groups: groups ?? [],
        };
  return {
    ...(cert === undefined || key === undefined ? {} : { clientCertificate: { cert, key } }),
    credential,
    ...(impersonate === undefined ? {} : { impersonate }),
  };
}

function execPlugin(raw: unknown, at: string, dir: string | undefined): ExecPlugin {
  if (dir === undefined)
    throw new KubeconfigError(`${at}: exec runs a command; refused for a kubeconfig not read from a file`);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new KubeconfigError(`${at}: exec must be a mapping`);
  const e = raw as Record<string, unknown>;
  const command = str(e, "command", `${at}: exec.command`);
  if (command === undefined || command === "") throw new KubeconfigError(`${at}: exec.command is missing`);
  const apiVersion = str(e, "apiVersion", `${at}: exec.apiVersion`);
  if (apiVersion !== "client.authentication.k8s.io/v1" && apiVersion !== "client.authentication.k8s.io/v1beta1")
    throw new KubeconfigError(
      `${at}: exec.apiVersion must be client.authentication.k8s.io/v1 or /v1beta1, not ${JSON.stringify(apiVersion ?? null)}`,
    );
  if (e["interactiveMode"] === "Always")
    throw new KubeconfigError(`${at}: exec.interactiveMode Always needs a terminal; oooi runs without one`);
  const args = e["args"] ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === "string"))
    throw new KubeconfigError(`${at}: exec.args must be a list of strings`);
  const env = e["env"] ?? [];
  if (!Array.isArray(env)) throw new KubeconfigError(`${at}: exec.env must be a list`);
  const pairs = env.map((v: unknown, i) => {
    const p = (v ?? {}) as Record<string, unknown>;
    if (typeof p["name"] !== "string" || typeof p["value"] !== "string")
      throw new KubeconfigError(`${at}: exec.env[${String(i)}] needs a string name and value`);
    return { name: p["name"], value: p["value"] };
  });
  const hint = str(e, "installHint", `${at}: exec.installHint`);
  // clientcmd: a command with a path separator is relative to the kubeconfig; a bare name is looked up in PATH.
  const resolved = command.includes("/") && !isAbsolute(command) ? join(dir, command) : command;
  return {
    command: resolved,
    args,
    env: pairs,
    apiVersion,
    ...(hint === undefined ? {} : { installHint: hint }),
  };
}

/** `FIELD-data` (base64) or `FIELD` (a file path), read now. */
function dataOrFile(
  o: Record<string, unknown>,
  field: string,
  at: string,
  dir: string | undefined,
): string | undefined {
  const data = str(o, `${field}-data`, `${at}: ${field}-data`);
  if (data !== undefined && data !== "") {
    const text = Buffer.from(data, "base64").toString("utf8");
    if (!text.includes("-----BEGIN")) throw new KubeconfigError(`${at}: ${field}-data is not base64 of PEM`);
    return text;
  }
  const file = str(o, field, `${at}: ${field}`);
  if (file === undefined || file === "") return undefined;
  if (dir === undefined) throw new KubeconfigError(`${at}: ${field} names a file; embed it as ${field}-data instead`);
  const path = inDir(dir, file);
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new KubeconfigError(
      `${at}: ${field}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
    );
  }
}

function inDir(dir: string, path: string): string {
  return isAbsolute(path) ? path : join(dir, path);
}

function str(o: Record<string, unknown>, key: string, what: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new KubeconfigError(`${what} must be a string`);
  return v;
}

function bool(o: Record<string, unknown>, key: string, what: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw new KubeconfigError(`${what} must be true or false`);
  return v;
}

/** Where a pod finds its service account (the kubelet mounts it there). */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The pod's own service account, or undefined when not in a pod (client-go's InClusterConfig: the
 * KUBERNETES_SERVICE_HOST/PORT variables and the mounted token; its CA when mounted).
 */
export function inClusterConfig(
  env: Readonly<Record<string, string | undefined>>,
  dir = SERVICE_ACCOUNT_DIR,
): KubeClientConfig | undefined {
  const host = env["KUBERNETES_SERVICE_HOST"];
  const port = env["KUBERNETES_SERVICE_PORT"];
  if (host === undefined || host === "" || port === undefined || port === "") return undefined;
  const token = join(dir, "token");
  if (!existsSync(token)) return undefined;
  const read = (name: string): string | undefined => {
    try {
      return readFileSync(join(dir, name), "utf8");
    } catch {
      return undefined;
    }
  };
  const ca = read("ca.crt");
  const namespace = read("namespace")?.trim();
  return {
    server: `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`,
    ...(ca === undefined ? {} : { ca }),
    insecureSkipTlsVerify: false,
    credential: { kind: "tokenFile", path: token },
    ...(namespace === undefined || namespace === "" ? {} : { namespace }),
    origin: "in-cluster service account",
  };
}

/**
 * The configuration `oooi operator` and `oooi verify` use: `--kubeconfig`, else $KUBECONFIG (a list),
 * else the pod's service account, else ~/.kube/config.
 */
export function loadKubeClientConfig(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
  opts: { serviceAccountDir?: string; home?: string } = {},
): KubeClientConfig {
  if (flag !== undefined) return loadKubeconfigFiles([flag]);
  const list = (env["KUBECONFIG"] ?? "").split(delimiter).filter((p) => p !== "");
  if (list.length > 0) return loadKubeconfigFiles(list);
  const inCluster = inClusterConfig(env, opts.serviceAccountDir);
  if (inCluster !== undefined) return inCluster;
  const home = join(opts.home ?? homedir(), ".kube", "config");
  if (existsSync(home)) return loadKubeconfigFiles([home]);
  throw new KubeconfigError(
    "no cluster configuration: pass --kubeconfig, set $KUBECONFIG, run in a pod with a service account, or create ~/.kube/config",
  );
}
