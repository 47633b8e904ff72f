// A bearer token read from a file that is rotated in place (a kubeconfig's `tokenFile`, the pod's
// projected service-account token) → the Authorization header, as a client-node authenticator.
// Why ours: client-node 1.4 ignores the kubeconfig field `tokenFile` (it reads only its own
// `token-file`, once, at load), and its in-cluster FileAuth re-reads on a timer only. client-go
// re-reads a minute after the last read, at once after a 401 (transport/token_source.go,
// ResetTokenOlderThan), and keeps the last good token through a failed read.
import { readFile } from "node:fs/promises";
import type { OutgoingHttpHeaders } from "node:http";
import type { RequestOptions } from "node:https";
import type { User } from "@kubernetes/client-node";

export interface TokenFileAuthOptions {
  readonly now?: () => number;
  /** Read again after this long (client-go: a minute). */
  readonly refreshMs?: number;
}

/** The token in one file; the user it authenticates names it as its auth-provider `name`. */
export class TokenFileAuth {
  static readonly providerName = "oooi-token-file";
  readonly #path: string;
  /** For messages: which kubeconfig entry named the file. */
  readonly #origin: string;
  readonly #now: () => number;
  readonly #refreshMs: number;
  #token: { value: string; readAt: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(path: string, origin: string, opts: TokenFileAuthOptions = {}) {
    this.#path = path;
    this.#origin = origin;
    this.#now = opts.now ?? Date.now;
    this.#refreshMs = opts.refreshMs ?? 60_000;
  }

  isAuthProvider(user: User): boolean {
    return (user.authProvider as { name?: unknown } | undefined)?.name === TokenFileAuth.providerName;
  }

  async applyAuthentication(_user: User, opts: RequestOptions): Promise<void> {
    opts.headers = {
      ...(opts.headers as OutgoingHttpHeaders | undefined),
      Authorization: `Bearer ${await this.token()}`,
    };
  }

  /** The token for the next request (one read at a time). */
  token(): Promise<string> {
    const t = this.#token;
    if (t !== undefined && this.#now() - t.readAt < this.#refreshMs) return Promise.resolve(t.value);
    this.#pending ??= this.#read().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The server refused the token: read the file before the next request. */
  refused(): void {
    if (this.#token !== undefined) this.#token = { ...this.#token, readAt: -Infinity };
  }

  async #read(): Promise<string> {
    try {
      const value = (await readFile(this.#path, "utf8")).trim();
      if (value === "") throw new Error("it is empty");
      this.#token = { value, readAt: this.#now() };
    } catch (e) {
      // The kubelet may be mid-rotation: the last good token stays until the next period.
      if (this.#token === undefined)
        throw new Error(`${this.#origin}: cannot read the token file ${this.#path}: ${(e as Error).message}`);
      this.#token = { ...this.#token, readAt: this.#now() };
    }
    return this.#token.value;
  }
}
