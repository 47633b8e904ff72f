// `oooi version` through the built CLI: the client's version from package.json, the server's over
// oooi.debug.v1 GetVersion from a running `oooi serve` (which command, since when), and exit 1 with
// the client's line still printed when nothing answers.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, ServeProcess, closedPort, oooi, until } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-version-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("oooi version", () => {
  it("--client prints this client's version without a server", async () => {
    const r = await oooi(["version", "--client"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`client  oooi ${VERSION} (node ${process.version})\n`);
  });

  it("prints the server's version, command and start over the debug service", async () => {
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const serve = new ServeProcess(["--manifests", dir, "--xds-listen", "127.0.0.1:0", "--no-dns"]);
    try {
      await until(() => /xDS \(ADS\) server listening on [\d.]+:\d+/.test(serve.log), "xDS listening");
      const address = `127.0.0.1:${/xDS \(ADS\) server listening on [\d.]+:(\d+)/.exec(serve.log)?.[1] ?? ""}`;
      const text = await oooi(["version", "--xds", address]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(
        new RegExp(
          `^client  oooi ${VERSION} \\(node v[\\d.]+\\)\\nserver  oooi ${VERSION} \\(serve, node v[\\d.]+, up \\d+s\\) at ${address}\\n$`,
        ),
      );
      const json = await oooi(["version", "--xds", address, "-o", "json"]);
      const report = JSON.parse(json.stdout) as { server: { version: string; command: string; startTime: string } };
      expect(report.server).toMatchObject({ version: VERSION, command: "serve" });
      // The serve process started within the last minute, not at the epoch or in the future.
      const started = Date.parse(report.server.startTime);
      expect(Date.now() - started).toBeGreaterThanOrEqual(0);
      expect(Date.now() - started).toBeLessThan(120_000);
    } finally {
      await serve.stop();
    }
  });

  it("exits 1 naming the address when no server answers, after the client's line", async () => {
    const port = await closedPort();
    const r = await oooi(["version", "--xds", `127.0.0.1:${String(port)}`, "--timeout", "2000"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`client  oooi ${VERSION} (node ${process.version})\n`);
    expect(r.stderr).toContain(`server at 127.0.0.1:${String(port)}`);
  });
});
