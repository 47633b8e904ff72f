// Parsing never blocks answering (issue 25 row 11): while the built `oooi serve` parses a manifest of
// several MiB (the yaml package takes seconds over it), its embedded DNS keeps answering. A client
// asks one name over and over, one query at a time, for as long as the answer is the old one: the
// new answer is in the large file, so every old answer after the file was put in place came while
// it was read, parsed and taken in. Parsed on the event loop, that whole time answers nothing.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, ServeProcess, until } from "../support/cli.js";
import { answersUntil, askA } from "../dns/server/helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-serve-parse-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const NAME = "console-openshift-console.apps.alpha.clusters.example.com";
const VLAN_CLIENT = "127.0.8.5";

/** The A answer to one query for NAME from a VLAN address, or undefined when none came within `waitMs`. */
function ask(port: number, id: number, waitMs: number): Promise<string | undefined> {
  return askA(port, { id, name: NAME, from: VLAN_CLIENT }, waitMs);
}

/** About `bytes` of small Services in a namespace nothing attaches (`namespace`, default "bulk"). */
function services(bytes: number, namespace = "bulk"): string {
  const docs: string[] = [];
  for (let i = 0, size = 0; size < bytes; i += 1) {
    const doc = `---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s-${String(i)}\n  namespace: ${namespace}\nspec:\n  type: ClusterIP\n  clusterIP: 172.31.${String((i >> 8) & 255)}.${String(i & 255)}\n  ports:\n    - port: 443\n`;
    docs.push(doc);
    size += doc.length;
  }
  return docs.join("");
}

describe("oooi serve parsing a large manifest", () => {
  it("answers DNS while a file of several MiB is parsed", async () => {
    const manifests = join(scratch, "m");
    cpSync(join(ROOT, "examples", "standalone"), manifests, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      manifests,
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--debounce",
      "20",
    ]);
    try {
      let port = 0;
      await until(() => {
        port = Number(/DNS responder listening on 127\.0\.0\.1:(\d+)/.exec(serve.log)?.[1] ?? 0);
        return port > 0;
      }, "the DNS listener");
      let id = 0;
      await until(async () => (await ask(port, ++id, 1000)) === "127.0.8.200", "the example's answer", 60_000);

      // The attachment's new address, followed by 6 MiB of Services (the limit is 8 MiB), put in place at once.
      const file = join(manifests, "attachments.yaml");
      const staged = join(scratch, "attachments.yaml");
      writeFileSync(
        staged,
        `${readFileSync(file, "utf8").replaceAll("127.0.8.200", "127.0.8.201")}\n${services(6 << 20)}`,
      );
      renameSync(staged, file);

      // Generous: a reply later than 2 s is one a resolver would have given up on.
      const { old, missed } = await answersUntil(() => ask(port, ++id, 2000), {
        previous: "127.0.8.200",
        next: "127.0.8.201",
        never: "the new manifest was never taken in",
      });
      // Parsed on the event loop, a handful of answers come before the parse starts, none during it.
      expect(old).toBeGreaterThanOrEqual(50);
      expect(missed).toBeLessThanOrEqual(1);
    } finally {
      await serve.stop();
    }
  }, 240_000);

  // A folder of many files each above the in-thread size: one folder read hands them to the parse
  // threads (one per core) at once. Every file's objects are taken in, whichever thread parsed it,
  // and a broken file among them is named without holding the others back.
  it("a new folder of many files: each parsed off the event loop, all taken in, a broken one named", async () => {
    const manifests = join(scratch, "folder");
    cpSync(join(ROOT, "examples", "standalone"), manifests, { recursive: true });
    const serve = new ServeProcess([
      "--manifests",
      manifests,
      "--xds-listen",
      "127.0.0.1:0",
      "--dns-listen",
      "127.0.0.1:0",
      "--debounce",
      "20",
    ]);
    try {
      let port = 0;
      await until(() => {
        port = Number(/DNS responder listening on 127\.0\.0\.1:(\d+)/.exec(serve.log)?.[1] ?? 0);
        return port > 0;
      }, "the DNS listener");
      let id = 0;
      await until(async () => (await ask(port, ++id, 1000)) === "127.0.8.200", "the example's answer", 60_000);

      const staged = join(scratch, "bulk");
      mkdirSync(staged);
      const attachments = readFileSync(join(manifests, "attachments.yaml"), "utf8").replaceAll(
        "127.0.8.200",
        "127.0.8.201",
      );
      // The attachment last, behind 64 KiB of Services: its file too is parsed by a thread.
      writeFileSync(join(staged, "attachments.yaml"), `${services(64 << 10, "bulk-a")}---\n${attachments}`);
      for (let i = 0; i < 6; i++)
        writeFileSync(join(staged, `s-${String(i)}.yaml`), services(64 << 10, `bulk-${String(i)}`));
      writeFileSync(join(staged, "broken.yaml"), `${services(64 << 10, "bulk-b")}---\nkind: Service\n  metadata: [\n`);
      rmSync(join(manifests, "attachments.yaml"));
      renameSync(staged, join(manifests, "bulk"));

      await until(
        async () => (await ask(port, ++id, 1000)) === "127.0.8.201",
        "the attachment from the new folder",
        120_000,
      );
      const broken = join(manifests, "bulk", "broken.yaml");
      await until(
        () => serve.lines().some((l) => l.level === 40 && l.file === broken),
        "a warning naming the broken file",
      );
      expect(serve.lines().filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await serve.stop();
    }
  }, 240_000);
});
