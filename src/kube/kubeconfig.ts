// Kubeconfig files, their text, or the pod's service account → a client-node KubeConfig holding the one
// context to use, plus the adapters for what client-node 1.4 drops (token-file-auth.ts, exec-auth.ts,
// impersonation by uid and groups). client-node reads each document (loadFromString,
// makePathsAbsolute, loadFromCluster) and applies TLS material, tokens, basic credentials, OIDC and
// proxy-url to every request; this module picks the document and the context, and refuses early, naming
// the file and field, what client-node would only trip over at the first request.
// Why not loadFromDefault/mergeConfig: they take ~/.kube/config before the pod's service account, a
// $KUBECONFIG list's later current-context wins, and a name defined twice throws; the rules here are
// client-go's (clientcmd): the first definition of a name and the first current-context win, each file's
// relative paths resolve against its own folder, and controller-runtime's order is --kubeconfig,
// $KUBECONFIG, in-cluster, ~/.kube/config.
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { KubeConfig, type Cluster, type Context, type User } from "@kubernetes/client-node";
import { parse } from "yaml";
import { AdaptedKubeConfig } from "./adapted-kubeconfig.js";
import { ExecPluginAuth, type ExecPlugin } from "./exec-auth.js";
import { TokenFileAuth } from "./token-file-auth.js";

/** A kubeconfig (or in-cluster configuration) that cannot be used; the message names the file and field. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KubeconfigError";
  }
}

/** One API server as one user: what KubeRest needs. */
export interface KubeClientConfig {
  /**
   * client-node's configuration with exactly one context, the current one; its request options carry
   * the impersonation headers client-node 1.4 drops and a shared keep-alive agent (adapted-kubeconfig.ts).
   */
  readonly kubeConfig: KubeConfig;
  /** Base URL without a trailing slash, e.g. https://10.0.0.1:6443. */
  readonly server: string;
  /** Where this came from, for messages: `kubeconfig FILE, context "c"` or `in-cluster service account`. */
  readonly origin: string;
  /** The server answered 401: the token file is read, the exec plugin run, before the next request. */
  readonly refused: () => void;
}

/** How much a kubeconfig may do on this machine. */
export interface KubeconfigTrust {
  /**
   * Folder that relative file paths resolve against; undefined for a kubeconfig that is not a file of
   * ours (a Secret's): then it may neither name files, nor run an exec plugin, nor use an auth-provider.
   */
  readonly dir: string | undefined;
  /** Context to use instead of current-context. */
  readonly context?: string;
}

type Raw = Record<string, unknown>;
interface Entry<T> {
  readonly value: T;
  readonly source: string;
  readonly dir: string | undefined;
  /** The entry's body as written, for the fields client-node 1.4 drops (tokenFile, as-uid, as-groups). */
  readonly raw: Raw;
}

/** One document read by client-node, or several merged: the first definition of each name wins. */
interface Doc {
  readonly source: string;
  readonly clusters: Map<string, Entry<Cluster>>;
  readonly users: Map<string, Entry<User>>;
  readonly contexts: Map<string, Entry<Context>>;
  readonly currentContext: string | undefined;
}

// A Secret's kubeconfig may not act on this machine: these fields run a command, call out, or read a file.
const LOCAL_EFFECTS: readonly { list: "clusters" | "users"; field: string; why: string }[] = [
  { list: "users", field: "exec", why: "exec runs a command" },
  { list: "users", field: "auth-provider", why: "auth-provider may run a command or call an identity provider" },
  { list: "users", field: "tokenFile", why: "tokenFile names a file; embed the token instead" },
  { list: "users", field: "token-file", why: "token-file names a file; embed the token instead" },
  { list: "users", field: "client-certificate", why: "client-certificate names a file; embed it as -data instead" },
  { list: "users", field: "client-key", why: "client-key names a file; embed it as -data instead" },
  {
    list: "clusters",
    field: "certificate-authority",
    why: "certificate-authority names a file; embed it as -data instead",
  },
];

function readDoc(text: string, source: string, dir: string | undefined): Doc {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    throw new KubeconfigError(`${source}: not YAML: ${(e as Error).message.split("\n")[0] ?? ""}`);
  }
  raw ??= {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new KubeconfigError(`${source}: not a kubeconfig (a mapping)`);
  const doc = raw as Raw;
  const bodies = (list: "clusters" | "users" | "contexts", inner: string): Map<string, Raw> => {
    const v = doc[list] ?? [];
    if (!Array.isArray(v)) throw new KubeconfigError(`${source}: ${list} must be a list`);
    const m = new Map<string, Raw>();
    for (const e of v as unknown[]) {
      const entry = (e ?? {}) as Raw;
      const body = entry[inner];
      if (typeof entry["name"] === "string" && typeof body === "object" && body !== null && !m.has(entry["name"]))
        m.set(entry["name"], body as Raw);
    }
    return m;
  };
  const raws = { clusters: bodies("clusters", "cluster"), users: bodies("users", "user") };
  // Before client-node sees it: its loader itself reads a user's `token-file`.
  if (dir === undefined)
    for (const { list, field, why } of LOCAL_EFFECTS)
      for (const [name, body] of raws[list])
        if (body[field] !== undefined && body[field] !== null)
          throw new KubeconfigError(
            `${source}, ${list.slice(0, -1)} "${name}": ${why}; refused for a kubeconfig that is not a file of ours`,
          );
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (e) {
    throw new KubeconfigError(`${source}: ${(e as Error).message}`);
  }
  if (dir !== undefined) kc.makePathsAbsolute(dir);
  const entries = <T extends { name: string }>(items: readonly T[], bodyOf: Map<string, Raw>) => {
    const m = new Map<string, Entry<T>>();
    for (const value of items)
      if (!m.has(value.name)) m.set(value.name, { value, source, dir, raw: bodyOf.get(value.name) ?? {} });
    return m;
  };
  const current = doc["current-context"];
  return {
    source,
    clusters: entries(kc.getClusters(), raws.clusters),
    users: entries(kc.getUsers(), raws.users),
    contexts: entries(kc.getContexts(), new Map()),
    currentContext: typeof current === "string" && current !== "" ? current : undefined,
  };
}

function mergeDocs(docs: readonly Doc[]): Doc {
  const merge = <V>(pick: (d: Doc) => Map<string, V>): Map<string, V> => {
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

/** The client configuration of a kubeconfig text's current (or named) context. */
export function kubeconfigFromText(text: string, source: string, trust: KubeconfigTrust): KubeClientConfig {
  return clientConfig(resolveKubeconfigText(text, source, trust));
}

/** A kubeconfig text's current (or named) context, checked, before it becomes a client configuration. */
export function resolveKubeconfigText(text: string, source: string, trust: KubeconfigTrust): ResolvedContext {
  return resolveContext(readDoc(text, source, trust.dir), trust.context);
}

/** Reads kubeconfig files (several: merged as $KUBECONFIG is) and resolves the current (or named) context. */
export function loadKubeconfigFiles(paths: readonly string[], context?: string): KubeClientConfig {
  const docs = paths.map((p) => {
    const path = resolve(p);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new KubeconfigError(`kubeconfig ${p}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    return readDoc(text, `kubeconfig ${p}`, dirname(path));
  });
  return clientConfig(resolveContext(mergeDocs(docs), context));
}

/** A context with its cluster and user, checked; what clientConfig turns into a KubeConfig. */
export interface ResolvedContext {
  readonly context: Context;
  readonly cluster: Cluster;
  readonly user: User | undefined;
  readonly userRaw: Raw;
  readonly userDir: string | undefined;
  /** The user's own file, for messages (a merged user may come from another file than the context). */
  readonly userSource: string;
  readonly origin: string;
}

function resolveContext(doc: Doc, contextFlag: string | undefined): ResolvedContext {
  const name = contextFlag ?? doc.currentContext;
  if (name === undefined) throw new KubeconfigError(`${doc.source}: no current-context`);
  const context = doc.contexts.get(name);
  if (context === undefined) throw new KubeconfigError(`${doc.source}: context "${name}" is not defined`);
  const at = `${context.source}, context "${name}"`;
  const cluster = doc.clusters.get(context.value.cluster);
  if (cluster === undefined) throw new KubeconfigError(`${at}: cluster "${context.value.cluster}" is not defined`);
  const userName = context.value.user as string | undefined;
  const user = userName === undefined ? undefined : doc.users.get(userName);
  if (userName !== undefined && user === undefined)
    throw new KubeconfigError(`${at}: user "${userName}" is not defined`);
  checkCluster(cluster.value, `${cluster.source}, cluster "${cluster.value.name}"`);
  if (user !== undefined) checkUser(user.value, user.raw, `${user.source}, user "${user.value.name}"`);
  return {
    context: context.value,
    cluster: cluster.value,
    user: user?.value,
    userRaw: user?.raw ?? {},
    userDir: user?.dir,
    userSource: user?.source ?? context.source,
    origin: at,
  };
}

function checkCluster(c: Cluster, at: string): void {
  let url: URL;
  try {
    url = new URL(c.server);
  } catch {
    throw new KubeconfigError(`${at}: server ${JSON.stringify(c.server)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new KubeconfigError(`${at}: server ${JSON.stringify(c.server)} is neither https:// nor http://`);
  // client-node refuses plain HTTP at the first request unless TLS verification is off.
  if (url.protocol === "http:" && !c.skipTLSVerify)
    throw new KubeconfigError(`${at}: server ${c.server} is plain HTTP; that needs insecure-skip-tls-verify: true`);
  if (c.skipTLSVerify && (c.caData !== undefined || c.caFile !== undefined))
    throw new KubeconfigError(`${at}: certificate-authority and insecure-skip-tls-verify exclude each other`);
  readable(c.caFile, `${at}: certificate-authority`);
}

function checkUser(u: User, raw: Raw, at: string): void {
  if (((u.certData ?? u.certFile ?? undefined) === undefined) !== ((u.keyData ?? u.keyFile ?? undefined) === undefined))
    throw new KubeconfigError(`${at}: client-certificate and client-key go together`);
  readable(u.certFile ?? undefined, `${at}: client-certificate`);
  readable(u.keyFile ?? undefined, `${at}: client-key`);
  const bearer = nonEmpty(u.token) || nonEmpty(raw["tokenFile"]);
  if (bearer && nonEmpty(u.username))
    throw new KubeconfigError(`${at}: username/password and a bearer token exclude each other`);
  if (bearer && raw["exec"] !== undefined && raw["exec"] !== null)
    throw new KubeconfigError(`${at}: exec and a bearer token exclude each other`);
  if (raw["tokenFile"] !== undefined && typeof raw["tokenFile"] !== "string")
    throw new KubeconfigError(`${at}: tokenFile must be a string`);
  if (raw["as-uid"] !== undefined && typeof raw["as-uid"] !== "string")
    throw new KubeconfigError(`${at}: as-uid must be a string`);
  const groups = raw["as-groups"];
  if (groups !== undefined && (!Array.isArray(groups) || !groups.every((g) => typeof g === "string")))
    throw new KubeconfigError(`${at}: as-groups must be a list of strings`);
}

function readable(path: string | undefined, what: string): void {
  if (path === undefined || path === "") return;
  try {
    accessSync(path, constants.R_OK);
  } catch (e) {
    throw new KubeconfigError(`${what}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
}

function nonEmpty(v: unknown): boolean {
  return typeof v === "string" && v !== "";
}

/** A user whose credential comes from one of our adapters instead of client-node's own authenticators. */
function adaptedUser(user: User, provider: string): User {
  const kept = Object.entries(user).filter(([k]) => k !== "token" && k !== "exec" && k !== "authProvider");
  return {
    ...(Object.fromEntries(kept) as Omit<User, "token" | "exec" | "authProvider">),
    authProvider: { name: provider, config: {} },
  };
}

/** The KubeConfig of one resolved context, with the adapters its user needs. */
export function clientConfig(r: ResolvedContext): KubeClientConfig {
  const headers: Record<string, string | readonly string[]> = {};
  const uid = r.userRaw["as-uid"];
  const groups = r.userRaw["as-groups"];
  if (typeof uid === "string" && uid !== "") headers["Impersonate-Uid"] = uid;
  if (Array.isArray(groups) && groups.length > 0) headers["Impersonate-Group"] = groups as string[];
  const kc = new AdaptedKubeConfig(headers);
  let user = r.user;
  let refused = (): void => {};
  const tokenFile = r.userRaw["tokenFile"];
  const inClusterToken = (user?.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  if (user !== undefined && (nonEmpty(tokenFile) || typeof inClusterToken === "string")) {
    // client-go: the file's last good content takes precedence over token.
    const path = nonEmpty(tokenFile) ? inDir(r.userDir, tokenFile as string) : (inClusterToken as string);
    const auth = new TokenFileAuth(path, r.origin);
    kc.addAuthenticator(auth);
    user = adaptedUser(user, TokenFileAuth.providerName);
    refused = () => {
      auth.refused();
    };
  } else if (user !== undefined && r.userRaw["exec"] !== undefined && r.userRaw["exec"] !== null) {
    const at = `${r.userSource}, user "${user.name}"`;
    const auth = new ExecPluginAuth(execPlugin(r.userRaw["exec"], at, r.userDir), at);
    kc.addAuthenticator(auth);
    user = adaptedUser(user, ExecPluginAuth.providerName);
    refused = () => {
      auth.refused();
    };
  }
  // client-node applies no CA and no insecure-skip-tls-verify for a context without a user.
  const anonymous: User = { name: "" };
  kc.loadFromOptions({
    clusters: [r.cluster],
    users: [user ?? anonymous],
    contexts: [{ ...r.context, user: (user ?? anonymous).name }],
    currentContext: r.context.name,
  });
  return { kubeConfig: kc, server: r.cluster.server, origin: r.origin, refused };
}

function execPlugin(raw: unknown, at: string, dir: string | undefined): ExecPlugin {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new KubeconfigError(`${at}: exec must be a mapping`);
  const e = raw as Raw;
  const command = e["command"];
  if (typeof command !== "string" || command === "") throw new KubeconfigError(`${at}: exec.command is missing`);
  const apiVersion = e["apiVersion"];
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
    const p = (v ?? {}) as Raw;
    if (typeof p["name"] !== "string" || typeof p["value"] !== "string")
      throw new KubeconfigError(`${at}: exec.env[${String(i)}] needs a string name and value`);
    return { name: p["name"], value: p["value"] };
  });
  const hint = e["installHint"];
  // clientcmd: a command with a path separator is relative to the kubeconfig; a bare name is looked up in PATH.
  const resolved = command.includes("/") && !isAbsolute(command) && dir !== undefined ? join(dir, command) : command;
  return {
    command: resolved,
    args,
    env: pairs,
    apiVersion,
    ...(typeof hint === "string" ? { installHint: hint } : {}),
  };
}

function inDir(dir: string | undefined, path: string): string {
  return isAbsolute(path) || dir === undefined ? path : join(dir, path);
}

/** Where a pod finds its service account (the kubelet mounts it there). */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The pod's own service account (client-node's loadFromCluster), or undefined when not in a pod:
 * KUBERNETES_SERVICE_HOST/PORT set and the token mounted. `root` prefixes the mount (tests).
 */
export function inClusterConfig(root = ""): KubeClientConfig | undefined {
  const host = process.env["KUBERNETES_SERVICE_HOST"];
  const port = process.env["KUBERNETES_SERVICE_PORT"];
  if (host === undefined || host === "" || port === undefined || port === "") return undefined;
  if (!existsSync(`${root}${SERVICE_ACCOUNT_DIR}/token`)) return undefined;
  const kc = new KubeConfig();
  kc.loadFromCluster(root);
  const cluster = kc.getCurrentCluster();
  const context = kc.getContextObject(kc.getCurrentContext());
  if (cluster === null || context === null) throw new KubeconfigError("in-cluster configuration: no cluster");
  return clientConfig({
    context,
    cluster,
    user: kc.getCurrentUser() ?? undefined,
    userRaw: {},
    userDir: undefined,
    userSource: "in-cluster service account",
    origin: "in-cluster service account",
  });
}

/** Where the configuration is looked for; the defaults are this process's (tests point them elsewhere). */
export interface KubeConfigSearch {
  /** Context to use instead of current-context (`--context`). */
  readonly context?: string;
  readonly home?: string;
  /** Prefix of the service-account mount. */
  readonly serviceAccountRoot?: string;
}

/**
 * The configuration `oooi operator` and `oooi verify` use: `--kubeconfig`, else $KUBECONFIG (a list),
 * else the pod's service account, else ~/.kube/config.
 */
export function loadKubeClientConfig(flag: string | undefined, search: KubeConfigSearch = {}): KubeClientConfig {
  if (flag !== undefined) return loadKubeconfigFiles([flag], search.context);
  const list = (process.env["KUBECONFIG"] ?? "").split(delimiter).filter((p) => p !== "");
  if (list.length > 0) return loadKubeconfigFiles(list, search.context);
  const inCluster = inClusterConfig(search.serviceAccountRoot);
  if (inCluster !== undefined) return inCluster;
  const home = join(search.home ?? homedir(), ".kube", "config");
  if (existsSync(home)) return loadKubeconfigFiles([home], search.context);
  throw new KubeconfigError(
    "no cluster configuration: pass --kubeconfig, set $KUBECONFIG, run in a pod with a service account, or create ~/.kube/config",
  );
}
