// What each request presents: a bearer token (fixed, re-read from a rotating file, or from an exec
// plugin until it expires), basic credentials, impersonation headers, and the client certificate.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import type { ExecPlugin, KubeClientConfig } from "./kubeconfig.js";

/** What one request carries to authenticate. */
export interface RequestCredentials {
  /** Impersonate-Group repeats once per group. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly clientCertificate?: { readonly cert: string; readonly key: string };
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

export interface KubeCredentialsOptions {
  readonly now?: () => number;
  /** A rotating token file is read again after this long (client-go: a minute). */
  readonly tokenFileRefreshMs?: number;
  readonly runExec?: ExecRunner;
}

/** Produces the credentials of one KubeClientConfig, refreshing what expires. */
export class KubeCredentials {
  readonly #config: KubeClientConfig;
  readonly #now: () => number;
  readonly #refreshMs: number;
  readonly #runExec: ExecRunner;
  #token: { value: string; readAt: number } | undefined;
  /** The plugin's answer; its certificate as one object per run, so the TLS agent is kept until it changes. */
  #exec: { status: ExecCredentialStatus; cert: RequestCredentials["clientCertificate"] } | undefined;
  #pending: Promise<RequestCredentials> | undefined;

  constructor(config: KubeClientConfig, opts: KubeCredentialsOptions = {}) {
    this.#config = config;
    this.#now = opts.now ?? Date.now;
    this.#refreshMs = opts.tokenFileRefreshMs ?? 60_000;
    this.#runExec = opts.runExec ?? runExecPlugin;
  }

  /** The credentials for the next request (one exec run or file read at a time). */
  current(): Promise<RequestCredentials> {
    if (!this.#stale()) return Promise.resolve(this.#assemble());
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The server answered 401: the next request reads the token file or runs the plugin again. */
  invalidate(): void {
    if (this.#config.credential.kind === "tokenFile")
      this.#token = this.#token && { ...this.#token, readAt: -Infinity };
    if (this.#config.credential.kind === "exec") this.#exec = undefined;
  }

  #stale(): boolean {
    const c = this.#config.credential;
    if (c.kind === "tokenFile") return this.#token === undefined || this.#now() - this.#token.readAt >= this.#refreshMs;
    if (c.kind === "exec") {
      const exp = this.#exec?.status.expiresAt;
      return this.#exec === undefined || (exp !== undefined && exp <= this.#now());
    }
    return false;
  }

  async #refresh(): Promise<RequestCredentials> {
    const c = this.#config.credential;
    if (c.kind === "tokenFile") {
      try {
        const value = (await readFile(c.path, "utf8")).trim();
        if (value === "") throw new Error("it is empty");
        this.#token = { value, readAt: this.#now() };
      } catch (e) {
        // A failed re-read keeps the last good token (the kubelet may be mid-rotation).
        if (this.#token === undefined)
          throw new Error(`${this.#config.origin}: cannot read the token file ${c.path}: ${(e as Error).message}`);
        this.#token = { ...this.#token, readAt: this.#now() };
      }
    } else if (c.kind === "exec") {
      const status = await this.#runPlugin(c.plugin);
      const { clientCertificateData: cert, clientKeyData: key } = status;
      this.#exec = { status, cert: cert === undefined || key === undefined ? undefined : { cert, key } };
    }
    return this.#assemble();
  }

  async #runPlugin(plugin: ExecPlugin): Promise<ExecCredentialStatus> {
    const info = JSON.stringify({
      apiVersion: plugin.apiVersion,
      kind: "ExecCredential",
      spec: { interactive: false },
    });
    const env: Record<string, string> = {};
    for (const { name, value } of plugin.env) env[name] = value;
    env["KUBERNETES_EXEC_INFO"] = info;
    let out: { stdout: string; stderr: string };
    try {
      out = await this.#runExec(plugin, env);
    } catch (e) {
      const err = e instanceof PluginFailure ? e : new PluginFailure(String(e), undefined, "");
      const hint = err.code === "ENOENT" && plugin.installHint !== undefined ? `; ${plugin.installHint.trim()}` : "";
      const stderr = err.stderr.trim() !== "" ? `: ${lastLine(err.stderr)}` : "";
      throw new Error(
        `${this.#config.origin}: exec plugin ${plugin.command} failed (${String(err.code ?? err.message)})${stderr}${hint}`,
      );
    }
    try {
      return parseExecCredential(out.stdout, plugin.apiVersion);
    } catch (e) {
      throw new Error(`${this.#config.origin}: exec plugin ${plugin.command}: ${(e as Error).message}`);
    }
  }

  #assemble(): RequestCredentials {
    const c = this.#config;
    const headers: Record<string, string | string[]> = {};
    let cert = c.clientCertificate;
    const cred = c.credential;
    if (cred.kind === "token") headers["Authorization"] = `Bearer ${cred.token}`;
    else if (cred.kind === "tokenFile" && this.#token !== undefined)
      headers["Authorization"] = `Bearer ${this.#token.value}`;
    else if (cred.kind === "basic")
      headers["Authorization"] = `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString("base64")}`;
    else if (cred.kind === "exec" && this.#exec !== undefined) {
      if (this.#exec.status.token !== undefined) headers["Authorization"] = `Bearer ${this.#exec.status.token}`;
      cert = this.#exec.cert ?? cert;
    }
    if (c.impersonate !== undefined) {
      if (c.impersonate.user !== undefined) headers["Impersonate-User"] = c.impersonate.user;
      if (c.impersonate.uid !== undefined) headers["Impersonate-Uid"] = c.impersonate.uid;
      if (c.impersonate.groups.length > 0) headers["Impersonate-Group"] = [...c.impersonate.groups];
    }
    return { headers, ...(cert === undefined ? {} : { clientCertificate: cert }) };
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
