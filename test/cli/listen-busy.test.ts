// A busy port, through the built CLI: every listening flag of `serve` and `operator` on an address
// another process holds → exit 2, one line naming the address and the flag that moves it, no stack
// trace; and the message helper's wording for the other bind failures.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindErrorCode, listenFailureMessage } from "../../src/cli/listen-error.js";
import { CLI, ROOT } from "../support/cli.js";

const exec = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "oooi-listen-busy-"));
const example = join(ROOT, "examples", "minimal");
let holder: Server;
let busy = "";

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
  const address = holder.address();
  busy = `127.0.0.1:${String(typeof address === "object" && address !== null ? address.port : 0)}`;
  // An API server nobody answers at: the operator must fail on its port before it matters.
  writeFileSync(
    join(dir, "kubeconfig"),
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
      "users: [{name: u, user: {token: t}}]",
      "contexts: [{name: x, context: {cluster: c, user: u}}]",
      "current-context: x",
    ].join("\n"),
  );
});
afterAll(() => {
  holder.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  try {
    const r = await exec(process.execPath, [CLI, ...args], {
      timeout: 30_000,
      env: { ...process.env, POD_NAMESPACE: "oooi-system" },
    });
    return { code: 0, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
}

describe("a busy port names the flag that moves it", () => {
  it.each([
    {
      name: "serve --xds-listen",
      args: () => ["serve", "--manifests", example, "--no-dns", "--xds-listen", busy],
      flag: "--xds-listen",
      off: "--no-xds",
    },
    {
      name: "serve --dns-listen",
      args: () => ["serve", "--manifests", example, "--xds-listen", "127.0.0.1:0", "--dns-listen", busy],
      flag: "--dns-listen",
      off: "--no-dns",
    },
    {
      name: "serve --http-listen",
      args: () => ["serve", "--manifests", example, "--no-dns", "--xds-listen", "127.0.0.1:0", "--http-listen", busy],
      flag: "--http-listen",
      off: undefined,
    },
    {
      name: "operator --xds-listen",
      args: () => [
        "operator",
        "--kubeconfig",
        join(dir, "kubeconfig"),
        // The API server is unreachable here: the operator checks its ports before it waits for it.
        "--xds-plaintext",
        "--xds-listen",
        busy,
        "--http-listen",
        "127.0.0.1:0",
      ],
      flag: "--xds-listen",
      off: undefined,
    },
    {
      name: "operator --xds-listen, mTLS (its CA waits for the API server; the port is checked first)",
      args: () => [
        "operator",
        "--kubeconfig",
        join(dir, "kubeconfig"),
        "--xds-listen",
        busy,
        "--http-listen",
        "127.0.0.1:0",
      ],
      flag: "--xds-listen",
      off: undefined,
    },
    {
      name: "operator --http-listen",
      args: () => [
        "operator",
        "--kubeconfig",
        join(dir, "kubeconfig"),
        // The API server is unreachable here: the operator checks its ports before it waits for it.
        "--xds-plaintext",
        "--xds-listen",
        "127.0.0.1:0",
        "--http-listen",
        busy,
      ],
      flag: "--http-listen",
      off: undefined,
    },
  ])("$name", async ({ args, flag, off }) => {
    const r = await run(args());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`error: ${busy} is already in use (${flag})`);
    expect(r.stderr).toContain(`move it with ${flag} HOST:PORT (port 0 picks a free one)`);
    if (off !== undefined) expect(r.stderr).toContain(`or ${off}`);
    // No stack trace: no "    at fn (file:line)" frame.
    expect(r.stderr).not.toMatch(/^\s+at .+\(.*:\d+:\d+\)$/m);
  });
});

describe("listenFailureMessage", () => {
  it.each([
    {
      name: "grpc-js's wording of a busy port",
      error: new Error(
        "No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:18000]",
      ),
      code: "EADDRINUSE",
      text: "127.0.0.1:18000 is already in use (--xds-listen)",
    },
    {
      name: "an address of no interface",
      error: Object.assign(new Error("listen EADDRNOTAVAIL: address not available 192.0.2.1:8080"), {
        code: "EADDRNOTAVAIL",
      }),
      code: "EADDRNOTAVAIL",
      text: "no interface of this host has that address",
    },
    {
      name: "a privileged port",
      error: Object.assign(new Error("listen EACCES: permission denied 0.0.0.0:80"), { code: "EACCES" }),
      code: "EACCES",
      text: "permission denied (ports below 1024 need privileges)",
    },
    {
      name: "anything else",
      error: new Error("boom"),
      code: undefined,
      text: "cannot listen on 127.0.0.1:18000 (--xds-listen): boom",
    },
  ])("$name", ({ error, code, text }) => {
    expect(bindErrorCode(error)).toBe(code);
    const message = listenFailureMessage("--xds-listen", "127.0.0.1:18000", error);
    expect(message).toContain(text);
    expect(message).toMatch(/move it with --xds-listen HOST:PORT/);
  });
});
