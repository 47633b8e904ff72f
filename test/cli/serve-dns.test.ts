// `npm start`'s promise, through the real CLI: `oooi serve` on examples/standalone answers the same
// name differently to a VLAN source and a pod-network source (real dig), and follows edits live.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { digShort } from "../dns/server/helpers.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const dir = mkdtempSync(join(tmpdir(), "oooi-serve-dns-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached within 30 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(digMissing)("oooi serve answers split-horizon DNS", () => {
  it("VLAN and pod-network sources get different answers; an edit reaches the answers without a restart", async () => {
    cpSync(join(ROOT, "examples", "standalone"), dir, { recursive: true });
    const child = spawn(
      process.execPath,
      [
        CLI,
        "serve",
        "--manifests",
        dir,
        "--xds-listen",
        "127.0.0.1:0",
        "--dns-listen",
        "127.0.0.1:0",
        "--debounce",
        "20",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let log = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      log += d;
    });
    try {
      let port = 0;
      await eventually(() => {
        const m = /DNS responder listening on 127\.0\.0\.1:(\d+)/.exec(log);
        port = Number(m?.[1] ?? 0);
        return Promise.resolve(port > 0 && log.includes("rendered"));
      });
      const name = "api.alpha.clusters.example.com";
      await eventually(async () => (await digShort(port, "127.0.8.5", name)) === "127.0.8.4");
      expect(await digShort(port, "127.0.0.1", name)).toBe("172.30.200.10");
      expect(await digShort(port, "127.0.8.5", "console-openshift-console.apps.alpha.clusters.example.com")).toBe(
        "127.0.8.200",
      );

      const file = join(dir, "attachments.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replaceAll("127.0.8.200", "127.0.8.201"));
      await eventually(
        async () =>
          (await digShort(port, "127.0.8.5", "console-openshift-console.apps.alpha.clusters.example.com")) ===
          "127.0.8.201",
      );
    } finally {
      child.kill("SIGTERM");
    }
  });
});
