// Parsing never blocks answering (issue 25 row 11): while the built `oooi serve` parses a manifest of
// several MiB (the yaml package takes seconds over it), its embedded DNS keeps answering. A client
// asks one name over and over, one query at a time, for as long as the answer is the old one: the
// new answer is in the large file, so every old answer after the file was put in place came while
// it was read, parsed and taken in. Parsed on the event loop, that whole time answers nothing.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
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

/**
 * The built serve on a copy of examples/standalone in `manifests`, once its DNS answers the example's
 * name; `ask` sends the next query (a new id each).
 */
async function serveExample(
  manifests: string,
): Promise<{ serve: ServeProcess; ask: (waitMs: number) => Promise<string | undefined> }> {
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
  let port = 0;
  let id = 0;
  const next = (waitMs: number) => ask(port, ++id, waitMs);
  try {
    port = await serve.dnsPort();
    await until(async () => (await next(1000)) === "127.0.8.200", "the example's answer", 60_000);
  } catch (e) {
    await serve.stop();
    throw e;
  }
  return { serve, ask: next };
}

describe("oooi serve parsing a large manifest", () => {
  it("answers DNS while a file of several MiB is parsed", async () => {
    const manifests = join(scratch, "m");
    const { serve, ask: next } = await serveExample(manifests);
    try {
      // The attachment's new address, followed by 6 MiB of Services (the limit is 8 MiB), put in place at once.
      const file = join(manifests, "attachments.yaml");
      const staged = join(scratch, "attachments.yaml");
      writeFileSync(
        staged,
        `${readFileSync(file, "utf8").replaceAll("127.0.8.200", "127.0.8.201")}\n${services(6 << 20)}`,
      );
      renameSync(staged, file);

      // Generous: a reply later than 2 s is one a resolver would have given up on.
      const { old, missed } = await answersUntil(() => next(2000), {
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
    const { serve, ask: next } = await serveExample(manifests);
    try {
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

      await until(async () => (await next(1000)) === "127.0.8.201", "the attachment from the new folder", 120_000);
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

  // A first read of a large folder parses its small files in the threads too. What a user is told
  // about a file must not depend on where it was parsed: an unknown field keeps its file, line and column,
  // a broken file its line, and every object is taken in.
  it("a folder of many small files read at start: parsed in the threads, positions kept, all taken in", async () => {
    const manifests = join(scratch, "small");
    cpSync(join(ROOT, "examples", "minimal"), manifests, { recursive: true });
    // An unknown field under spec: a warning that names its line and column, nothing refused.
    const infra = join(manifests, "infra.yaml");
    const lines = readFileSync(infra, "utf8").split("\n");
    const spec = lines.indexOf("spec:");
    lines.splice(spec + 1, 0, "  colour: blue");
    writeFileSync(infra, lines.join("\n"));
    mkdirSync(join(manifests, "bulk"));
    // What the attachment needs (its HostedCluster, namespace, Services), one small file per object.
    const observed = join(manifests, "observed.yaml");
    readFileSync(observed, "utf8")
      .split(/^---$/m)
      .filter((doc) => doc.includes("kind:"))
      .forEach((doc, i) => {
        writeFileSync(join(manifests, "bulk", `observed-${String(i)}.yaml`), doc);
      });
    rmSync(observed);
    for (let i = 0; i < 70; i++)
      writeFileSync(join(manifests, "bulk", `s-${String(i)}.yaml`), services(1 << 10, `small-${String(i)}`));
    const broken = join(manifests, "bulk", "broken.yaml");
    writeFileSync(broken, `${services(1 << 10, "small-b")}---\nkind: Service\n  metadata: [\n`);
    const out = join(scratch, "small-out");
    const serve = new ServeProcess(["--manifests", manifests, "--out", out, "--no-xds", "--no-dns"]);
    try {
      const unknown = () => serve.lines().filter((l) => l.level === 40 && l.field === "spec.colour");
      await until(() => unknown().length > 0, "the unknown field's warning", 60_000);
      expect(unknown()[0]).toMatchObject({ file: infra, line: spec + 2, column: 3, reason: "UnknownField" });
      await until(() => serve.lines().some((l) => l.level === 40 && l.file === broken), "the broken file's warning");
      expect(serve.lines().find((l) => l.file === broken)?.line).toBeGreaterThan(1);
      // The attachment is served: every object it needs came from a file parsed in a thread.
      const ready = (): unknown => {
        const text = existsSync(join(out, "status.json")) ? readFileSync(join(out, "status.json"), "utf8") : "{}";
        const objects =
          (JSON.parse(text) as { objects?: { kind: string; status: { conditions: { status: string }[] } }[] })
            .objects ?? [];
        return objects.find((o) => o.kind === "InfraClusterAttachment")?.status.conditions[0]?.status;
      };
      await until(() => ready() === "True", "the attachment Ready in status.json");
      expect(serve.lines().filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await serve.stop();
    }
  }, 120_000);
});
