// The authenticators we plug into client-node's KubeConfig, with the clock injected: a rotating token
// file read again after a minute (the last good token kept through a failed read) and at once after a
// 401; an exec plugin — a real script — run once per credential lifetime (a credential without expiry:
// until a 401), once for concurrent requests, and readable messages when a plugin misbehaves.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RequestOptions } from "node:https";
import { ExecPluginAuth, parseExecCredential, type ExecPlugin } from "../../src/kube/exec-auth.js";
import { TokenFileAuth } from "../../src/kube/token-file-auth.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-credentials-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const V1 = "client.authentication.k8s.io/v1";
const ORIGIN = 'kubeconfig test, context "c"';
const USER = { name: "u" };

/** What an authenticator adds to a request's options (starting from `opts`). */
async function applied(
  auth: TokenFileAuth | ExecPluginAuth,
  opts: RequestOptions = { headers: {} },
): Promise<RequestOptions> {
  await auth.applyAuthentication(USER, opts);
  return opts;
}
const bearer = async (auth: TokenFileAuth | ExecPluginAuth): Promise<unknown> =>
  (await applied(auth)).headers?.["Authorization" as keyof RequestOptions["headers"]];
const exec = (command: string, extra: Partial<ExecPlugin> = {}): ExecPlugin => ({
  command,
  args: [],
  env: [],
  apiVersion: V1,
  ...extra,
});

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

/** A plugin script printing `body` (shell-expanded), counting its runs in `<name>.runs`. */
function plugin(name: string, body: string): { command: string; runs: () => number } {
  const command = join(dir, `${name}.sh`);
  const runs = join(dir, `${name}.runs`);
  writeFileSync(command, `#!/bin/sh\necho run >> '${runs}'\n${body}\n`);
  chmodSync(command, 0o755);
  return {
    command,
    runs: () => (existsSync(runs) ? readFileSync(runs, "utf8").trim().split("\n").length : 0),
  };
}

const execCredential = (status: Record<string, unknown>, apiVersion = V1): string =>
  JSON.stringify({ apiVersion, kind: "ExecCredential", status });

describe("a token file", () => {
  it("read at first use, again once a minute has passed; a failed re-read keeps the last good token", async () => {
    const path = join(dir, "token");
    writeFileSync(path, "one\n");
    const c = clock();
    const auth = new TokenFileAuth(path, ORIGIN, { now: c.now });
    expect(await bearer(auth)).toBe("Bearer one");
    writeFileSync(path, "two\n");
    c.advance(59_999);
    expect(await bearer(auth)).toBe("Bearer one");
    c.advance(1);
    expect(await bearer(auth)).toBe("Bearer two");
    rmSync(path);
    c.advance(60_000);
    expect(await bearer(auth)).toBe("Bearer two");
  });

  it("a 401 makes the next request read it at once", async () => {
    const path = join(dir, "token-401");
    writeFileSync(path, "old");
    const auth = new TokenFileAuth(path, ORIGIN, { now: clock().now });
    await bearer(auth);
    writeFileSync(path, "new");
    auth.refused();
    expect(await bearer(auth)).toBe("Bearer new");
  });

  it("missing or empty at first use: an error naming the file", async () => {
    const empty = join(dir, "token-empty");
    writeFileSync(empty, "\n");
    await expect(bearer(new TokenFileAuth(join(dir, "absent"), ORIGIN))).rejects.toThrow(
      /kubeconfig test, context "c": cannot read the token file .*absent/,
    );
    await expect(bearer(new TokenFileAuth(empty, ORIGIN))).rejects.toThrow(/it is empty/);
  });
});

describe("an exec plugin", () => {
  it("runs once while its token is valid, again when it expires and after a 401", async () => {
    const c = clock(Date.parse("2026-01-01T00:00:00Z"));
    const p = plugin(
      "expiring",
      `printf '%s' '${execCredential({ token: "tok", expirationTimestamp: "2026-01-01T00:10:00Z" })}'`,
    );
    const auth = new ExecPluginAuth(exec(p.command), ORIGIN, { now: c.now });
    expect(await Promise.all([bearer(auth), bearer(auth), bearer(auth)])).toEqual([
      "Bearer tok",
      "Bearer tok",
      "Bearer tok",
    ]);
    expect(p.runs()).toBe(1);
    c.advance(9 * 60_000);
    await bearer(auth);
    expect(p.runs()).toBe(1);
    c.advance(60_000);
    await bearer(auth);
    expect(p.runs()).toBe(2);
    auth.refused();
    await bearer(auth);
    expect(p.runs()).toBe(3);
  });

  // client-node 1.4's ExecAuth runs such a plugin for every request; client-go keeps its answer until a 401.
  it("without expirationTimestamp: reused however much time passes, until a 401", async () => {
    const c = clock();
    const p = plugin("no-expiry", `printf '%s' '${execCredential({ token: "forever" })}'`);
    const auth = new ExecPluginAuth(exec(p.command), ORIGIN, { now: c.now });
    for (let i = 0; i < 5; i++) {
      expect(await bearer(auth)).toBe("Bearer forever");
      c.advance(24 * 3_600_000);
    }
    expect(p.runs()).toBe(1);
    auth.refused();
    await bearer(auth);
    expect(p.runs()).toBe(2);
  });

  it("gets its args, its env and KUBERNETES_EXEC_INFO; a client certificate replaces the kubeconfig's", async () => {
    const p = plugin(
      "args-env",
      `[ "$1" = get-token ] && [ "$REGION" = eu ] || exit 4\n` +
        `case "$KUBERNETES_EXEC_INFO" in *'"kind":"ExecCredential"'*'"interactive":false'*) ;; *) exit 5;; esac\n` +
        `printf '%s' '${execCredential({ clientCertificateData: "CERT", clientKeyData: "KEY" })}'`,
    );
    const auth = new ExecPluginAuth(
      exec(p.command, { args: ["get-token"], env: [{ name: "REGION", value: "eu" }] }),
      ORIGIN,
    );
    expect(await applied(auth, { headers: {}, cert: "FROM-KUBECONFIG", key: "K" })).toEqual({
      headers: {},
      cert: "CERT",
      key: "KEY",
    });
  });

  it.each([
    [
      "exits non-zero: its last stderr line",
      `echo 'first line' >&2; echo 'token expired, run login' >&2; exit 1`,
      /exec plugin .* failed \(1\): token expired, run login/,
    ],
    ["prints no JSON", "echo hello", /its output is not JSON/],
    [
      "answers another version",
      `printf '%s' '${execCredential({ token: "t" }, "client.authentication.k8s.io/v1beta1")}'`,
      /answered apiVersion "client\.authentication\.k8s\.io\/v1beta1"/,
    ],
    [
      "answers neither token nor certificate",
      `printf '%s' '${execCredential({})}'`,
      /neither a token nor a client certificate/,
    ],
  ])("%s", async (name, body, message) => {
    const p = plugin(`bad-${name.replace(/\W+/g, "-")}`, body);
    await expect(bearer(new ExecPluginAuth(exec(p.command), ORIGIN))).rejects.toThrow(message);
  });

  it("not installed: its install hint", async () => {
    const auth = new ExecPluginAuth(
      exec(join(dir, "no-such-plugin"), { installHint: "Install it from the vendor.\n" }),
      ORIGIN,
    );
    await expect(bearer(auth)).rejects.toThrow(/failed \(ENOENT\); Install it from the vendor\.$/);
  });
});

describe("parseExecCredential", () => {
  it.each([
    [
      "a token with its expiry",
      { token: "t", expirationTimestamp: "2026-01-01T00:00:00Z" },
      { token: "t", expiresAt: Date.parse("2026-01-01T00:00:00Z") },
    ],
    [
      "a certificate, no expiry",
      { clientCertificateData: "C", clientKeyData: "K" },
      { clientCertificateData: "C", clientKeyData: "K" },
    ],
  ])("%s", (_name, status, expected) => {
    expect(parseExecCredential(execCredential(status), V1)).toEqual(expected);
  });

  it.each([
    ["a certificate without its key", { clientCertificateData: "C", token: "t" }, /go together/],
    ["a bad expiry", { token: "t", expirationTimestamp: "tomorrow" }, /not an RFC 3339 time/],
    ["a token that is a number", { token: 7 }, /status\.token must be a string/],
  ])("refuses %s", (_name, status, message) => {
    expect(() => parseExecCredential(execCredential(status), V1)).toThrow(message);
  });

  it("refuses another kind", () => {
    expect(() => parseExecCredential(JSON.stringify({ apiVersion: V1, kind: "Status" }), V1)).toThrow(
      /not an ExecCredential/,
    );
  });
});
