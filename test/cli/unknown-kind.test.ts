// A misspelled kind of oooi's group (`kind: Infar`), through the built CLI: `render` refuses the
// manifest (exit 2, input error) naming file:line:column, the field `kind` and the kind meant; `serve`
// logs the same line and keeps serving the file's last good version. It was ignored with exit 0,
// the Infra silently gone (issue 27, finding 8).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { oooi, ServeProcess, until } from "../support/cli.js";
import { exampleCopy } from "../support/examples.js";

const MEANT = "kind: Infar is no kind of hostedcluster.densityops.com — did you mean Infra?";

/** examples/standalone's infra.yaml with its kind misspelled, and the line of that kind. */
function misspelled(text: string): { text: string; line: number } {
  const lines = text.split("\n");
  const line = lines.indexOf("kind: Infra") + 1;
  expect(line).toBeGreaterThan(0);
  return { text: text.replace(/^kind: Infra$/m, "kind: Infar"), line };
}

describe("a misspelled kind of oooi's group", () => {
  it("render exits 2 naming file:line:column, the field kind and the kind meant", async () => {
    const dir = exampleCopy("standalone");
    const infra = join(dir, "infra.yaml");
    const { text, line } = misspelled(readFileSync(infra, "utf8"));
    writeFileSync(infra, text);
    const r = await oooi(["render", "--manifests", dir, "--out", join(dir, "..", `${String(process.pid)}-out`)]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`infra.yaml:${String(line)}:7: ${MEANT}`);
  });

  it("serve logs it once at warn and keeps serving the Infra it read before", async () => {
    const dir = exampleCopy("standalone");
    const infra = join(dir, "infra.yaml");
    const serve = new ServeProcess([
      "--manifests",
      dir,
      "--xds-listen",
      "127.0.0.1:0",
      "--no-dns",
      "--http-listen",
      "127.0.0.1:0",
      "--log-format",
      "json",
    ]);
    try {
      await until(() => /status page on (http:\/\/[\d.:]+)/.test(serve.log) || serve.child.exitCode !== null, "http");
      const base = /status page on (http:\/\/[\d.:]+)/.exec(serve.log)?.[1] ?? "";
      const infras = async () =>
        ((await (await fetch(`${base}/status.json`)).json()) as { infras?: { name: string }[] }).infras?.map(
          (i) => i.name,
        ) ?? [];
      await until(async () => (await infras()).includes("clusters/tenant-vlan"), "the Infra served");

      const { text, line } = misspelled(readFileSync(infra, "utf8"));
      writeFileSync(`${infra}.tmp`, text);
      renameSync(`${infra}.tmp`, infra);
      const warned = () => serve.lines().filter((l) => l.level === 40 && l.msg.includes(MEANT));
      await until(() => warned().length > 0, "the warning");
      expect(warned()[0]).toMatchObject({ file: infra, line });
      expect(warned()[0]?.msg).toMatch(/not applied: its last good version, if any, is still served/);
      expect(await infras()).toContain("clusters/tenant-vlan");
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
