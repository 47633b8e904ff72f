// What a new user meets first, through the built CLI: --version, defaults shown as host:port,
// serve's /healthz and /readyz (503 with the reason until ready), and one "listening" line for xDS.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { probesHandler } from "../../src/metrics/http.js";
import { ROOT, ServeProcess, oooi, until } from "../support/cli.js";
import { exampleCopy } from "../support/examples.js";

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

describe("oooi CLI first contact", () => {
  it("prints its version with --version and -v", async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    for (const flag of ["--version", "-v"]) {
      const r = await oooi([flag]);
      expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
    }
  });

  it("shows host:port defaults in help, not JSON", async () => {
    const serve = await oooi(["serve", "--help"]);
    expect(serve.stdout.replace(/\s+/g, " ")).toContain("(default: 127.0.0.1:5353)");
    expect(serve.stdout).not.toContain('{"host"');
    const verify = await oooi(["verify", "--help"]);
    expect(verify.stdout.replace(/\s+/g, " ")).toContain("(default: 127.0.0.1:5353)");
  });

  it("serve answers /healthz and /readyz once rendered, and logs xDS listening once", async () => {
    const serve = new ServeProcess([
      "--manifests",
      exampleCopy("standalone"),
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--http-listen",
      "127.0.0.1:0",
    ]);
    try {
      await until(() => /metrics on http:\/\/127\.0\.0\.1:\d+\/metrics/.test(serve.log), "http listening");
      const port = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(serve.log)?.[1] ?? "";
      await until(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, "ready");
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect([health.status, await health.text()]).toEqual([200, "ok\n"]);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/nothing`)).status).toBe(404);
      expect(serve.lines().filter((l) => /listening/.test(l.msg) && /xDS/.test(l.msg))).toHaveLength(1);
    } finally {
      await serve.stop();
    }
  });

  it("/readyz says why it is not ready (503) and /healthz fails while shutting down", async () => {
    let live = true;
    const server = createServer(
      probesHandler({ live: () => live, notReady: () => "manifests not rendered yet" }, (_req, res) => {
        res.writeHead(404).end();
      }),
    );
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.text()]).toEqual([503, "manifests not rendered yet\n"]);
    live = false;
    expect((await fetch(`${base}/healthz`)).status).toBe(503);
  });
});
