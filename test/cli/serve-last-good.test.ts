// Issue 9 through the built CLI: `oooi serve` on examples/standalone; an invalid Infra field and a
// newcomer claiming a working cluster's domain change none of the written outputs (Envoy
// listeners, Kea config, Corefile and zones) nor the DNS answers; status says what is served.
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { digShort } from "../dns/server/helpers.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const digMissing = skipUnless(toolMissing("dig", "apt-get install bind9-dnsutils")) !== undefined;
const dir = mkdtempSync(join(tmpdir(), "oooi-serve-last-good-"));
const manifests = join(dir, "manifests");
const out = join(dir, "out");
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached within 15 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every written file except status.json, by the relative path users read it at. */
function outputs(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string): void => {
    for (const f of readdirSync(d)) {
      // ..data and the generation folders are how a set is switched; users read through the links.
      if (f.startsWith("..")) continue;
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f !== "status.json") files.set(relative(out, p), readFileSync(p, "utf8"));
    }
  };
  walk(out);
  return files;
}

/** As editors save: a whole new file renamed over the old one (never a half-written file). */
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

const status = (): string =>
  existsSync(join(out, "status.json")) ? readFileSync(join(out, "status.json"), "utf8") : "";
const NAMES = ["api.alpha.clusters.example.com", "api.beta.clusters.example.com", "oauth.alpha.clusters.example.com"];

describe.skipIf(digMissing)("oooi serve keeps the last good configuration per object", () => {
  it("an invalid Infra field and a conflicting newcomer change no output and no answer", async () => {
    cpSync(join(ROOT, "examples", "standalone"), manifests, { recursive: true });
    const child = spawn(
      process.execPath,
      [
        CLI,
        "serve",
        "--manifests",
        manifests,
        "--out",
        out,
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
        port = Number(/DNS responder listening on 127\.0\.0\.1:(\d+)/.exec(log)?.[1] ?? 0);
        return port > 0 && status() !== "";
      });
      await eventually(async () => (await digShort(port, "127.0.8.5", NAMES[0] ?? "", 1)) === "127.0.8.4");
      const answers = async () =>
        Promise.all(NAMES.flatMap((n) => [digShort(port, "127.0.8.5", n, 1), digShort(port, "127.0.0.1", n, 1)]));
      const goodAnswers = await answers();
      const goodFiles = outputs();
      expect([...goodFiles.keys()].some((k) => k.endsWith("envoy.json"))).toBe(true);
      expect([...goodFiles.keys()].some((k) => k.endsWith("kea-dhcp4.json"))).toBe(true);

      const infraFile = join(manifests, "infra.yaml");
      replaceFile(infraFile, readFileSync(infraFile, "utf8").replace(`cidr: "127.0.8.0/24"`, `cidr: "127.0.8.0/33"`));
      await eventually(() => status().includes("is still served") && status().includes("spec.networkConfig.cidr"));
      expect(outputs()).toEqual(goodFiles);
      expect(await answers()).toEqual(goodAnswers);

      const attFile = join(manifests, "attachments.yaml");
      const attachments = readFileSync(attFile, "utf8");
      const beta = attachments.indexOf("name: beta");
      replaceFile(
        attFile,
        attachments.slice(0, beta) + attachments.slice(beta).replace("clusterName: beta", "clusterName: alpha"),
      );
      await eventually(() => status().includes("DuplicateHostname"));
      expect(outputs()).toEqual(goodFiles);
      expect(await answers()).toEqual(goodAnswers);
      // beta is refused, says so once, and keeps being served as accepted; alpha is told nothing.
      const objects = (
        JSON.parse(status()) as {
          objects: { name: string; status: { conditions: { status: string; reason: string; message: string }[] } }[];
        }
      ).objects;
      const condition = (name: string) => objects.find((o) => o.name === name)?.status.conditions[0];
      expect(condition("beta")?.reason).toBe("DuplicateHostname");
      expect(condition("beta")?.message.split("already served by alpha").length).toBe(2);
      expect(condition("beta")?.message).toContain("is still served");
      expect(condition("alpha")?.status).toBe("True");
    } finally {
      child.kill("SIGTERM");
    }
  });
});
