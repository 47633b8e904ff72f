// A kubeconfig's exec credential plugin (client.authentication.k8s.io ExecConfig) → the bearer token or
// client certificate of each request, as a client-node authenticator. Why not client-node 1.4's
// ExecAuth: it runs the plugin again on every request when the ExecCredential has no
// expirationTimestamp (it compares Date.parse(undefined), NaN), runs it once per concurrent request,
// never again after a 401, does not set KUBERNETES_EXEC_INFO, leaves stdin open and resolves no
// relative command; and it is neither exported nor open to a cache in front of it. The rules here are
// client-go's (plugin/pkg/client/auth/exec): a credential without expiry is reused until a 401.
import { execFile } from "node:child_process";
import type { OutgoingHttpHeaders } from "node:http";
import type { RequestOptions } from "node:https";
import type { User } from "@kubernetes/client-node";

/** A kubeconfig exec credential plugin, checked (see execPlugin in kubeconfig.ts). */
export interface ExecPlugin {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  /** client.authentication.k8s.io/v1 or /v1beta1: the ExecCredential version exchanged. */
  readonly apiVersion: string;
  readonly installHint?: string;
}

/** An exec plugin's answer (an ExecCredential's status). */
export interface ExecCredentialStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  /** Epoch ms; undefined: valid until the server refuses it. */
  readonly expiresAt?: number;
}

/** Runs an exec plugin: its stdout and, for messages, its stderr. */
export type ExecRunner = (
  plugin: ExecPlugin,
  env: Readonly<Record<string, string>>,
) => Promise<{ stdout: string; stderr: string }>;

export interface ExecAuthOptions {
  readonly now?: () => number;
  readonly runExec?: ExecRunner;
}

/** One plugin's credential, cached per client-go's rules; the user names it as its auth-provider `name`. */
export class ExecPluginAuth {
  static readonly providerName = "oooi-exec";
  readonly #plugin: ExecPlugin;
  readonly #origin: string;
  readonly #now: () => number;
  readonly #run: ExecRunner;
  #status: ExecCredentialStatus | undefined;
  #pending: Promise<ExecCredentialStatus> | undefined;

  constructor(plugin: ExecPlugin, origin: string, opts: ExecAuthOptions = {}) {
    this.#plugin = plugin;
    this.#origin = origin;
    this.#now = opts.now ?? Date.now;
    this.#run = opts.runExec ?? runExecPlugin;
  }

  isAuthProvider(user: User): boolean {
    return (user.authProvider as { name?: unknown } | undefined)?.name === ExecPluginAuth.providerName;
  }

  /** Runs after client-node applied the kubeconfig's own certificate: the plugin's replaces it. */
  async applyAuthentication(_user: User, opts: RequestOptions): Promise<void> {
    const s = await this.credential();
    if (s.token !== undefined)
      opts.headers = { ...(opts.headers as OutgoingHttpHeaders | undefined), Authorization: `Bearer ${s.token}` };
    if (s.clientCertificateData !== undefined && s.clientKeyData !== undefined) {
      opts.cert = s.clientCertificateData;
      opts.key = s.clientKeyData;
    }
  }

  /** The plugin's credential for the next request (one run at a time). */
  credential(): Promise<ExecCredentialStatus> {
    const s = this.#status;
    if (s !== undefined && (s.expiresAt === undefined || s.expiresAt > this.#now())) return Promise.resolve(s);
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The server refused the credential: run the plugin before the next request. */
  refused(): void {
    this.#status = undefined;
  }

  async #refresh(): Promise<ExecCredentialStatus> {
    const plugin = this.#plugin;
    const env: Record<string, string> = {};
    for (const { name, value } of plugin.env) env[name] = value;
    env["KUBERNETES_EXEC_INFO"] = JSON.stringify({
      apiVersion: plugin.apiVersion,
      kind: "ExecCredential",
      spec: { interactive: false },
    });
    let out: { stdout: string; stderr: string };
    try {
      out = await this.#run(plugin, env);
    } catch (e) {
      const err = e instanceof PluginFailure ? e : new PluginFailure(String(e), undefined, "");
      const hint = err.code === "ENOENT" && plugin.installHint !== undefined ? `; ${plugin.installHint.trim()}` : "";
      const stderr = err.stderr.trim() !== "" ? `: ${lastLine(err.stderr)}` : "";
      throw new Error(
        `${this.#origin}: exec plugin ${plugin.command} failed (${String(err.code ?? err.message)})${stderr}${hint}`,
      );
    }
    try {
      this.#status = parseExecCredential(out.stdout, plugin.apiVersion);
    } catch (e) {
      throw new Error(`${this.#origin}: exec plugin ${plugin.command}: ${(e as Error).message}`);
    }
    return this.#status;
  }
}

/** An exec plugin's stdout as its credential; throws naming what is wrong. */
export function parseExecCredential(stdout: string, apiVersion: string): ExecCredentialStatus {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout);
  } catch {
    throw new Error("its output is not JSON");
  }
  const o = (raw ?? {}) as Record<string, unknown>;
  if (o["kind"] !== "ExecCredential")
    throw new Error(`its output is not an ExecCredential (kind ${JSON.stringify(o["kind"])})`);
  if (o["apiVersion"] !== apiVersion)
    throw new Error(`it answered apiVersion ${JSON.stringify(o["apiVersion"])}, the kubeconfig asks for ${apiVersion}`);
  const s = (o["status"] ?? {}) as Record<string, unknown>;
  const text = (k: string): string | undefined => {
    const v = s[k];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") throw new Error(`status.${k} must be a string`);
    return v;
  };
  const token = text("token");
  const cert = text("clientCertificateData");
  const key = text("clientKeyData");
  if ((cert === undefined) !== (key === undefined))
    throw new Error("status.clientCertificateData and status.clientKeyData go together");
  if (token === undefined && cert === undefined) throw new Error("status has neither a token nor a client certificate");
  const exp = text("expirationTimestamp");
  const expiresAt = exp === undefined ? undefined : Date.parse(exp);
  if (expiresAt !== undefined && Number.isNaN(expiresAt))
    throw new Error(`status.expirationTimestamp ${JSON.stringify(exp)} is not an RFC 3339 time`);
  return {
    ...(token === undefined ? {} : { token }),
    ...(cert === undefined || key === undefined ? {} : { clientCertificateData: cert, clientKeyData: key }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** A plugin that could not start or exited non-zero, with what it wrote to stderr. */
export class PluginFailure extends Error {
  constructor(
    message: string,
    /** The exit status, or the errno of a command that could not start (ENOENT). */
    readonly code: number | string | undefined,
    readonly stderr: string,
  ) {
    super(message);
    this.name = "PluginFailure";
  }
}

function lastLine(text: string): string {
  return text.trim().split("\n").at(-1)?.slice(0, 300) ?? "";
}

/** Runs the plugin with our environment plus its own, stdin closed (never interactive). */
const runExecPlugin: ExecRunner = (plugin, env) =>
  new Promise((resolve, reject) => {
    const child = execFile(
      plugin.command,
      [...plugin.args],
      { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 4 << 20 },
      (err, stdout, stderr) => {
        if (err !== null) reject(new PluginFailure(err.message, err.code ?? undefined, stderr));
        else resolve({ stdout, stderr });
      },
    );
    child.stdin?.end();
  });
