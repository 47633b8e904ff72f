// Issue 25 row 14: a writer killed with SIGKILL in the middle of a large set. A child process runs
// the built sink (dist/pipeline/file-sink.js), switching one folder between two sets of a Corefile
// and the 1,500 zone files it names; the test kills it at different points of a write and then
// reads the folder as CoreDNS would: the Corefile it finds names only zone files that exist and
// belong to the same set. A new run then cleans up what the killed one left.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, until } from "../support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-file-sink-kill-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const SINK = pathToFileURL(join(ROOT, "dist", "pipeline", "file-sink.js")).href;
const ZONES = 1_500;

// The child: sets a and b alternate forever; "start N" is printed before the N-th write.
const CHILD = `
import { FileSink } from ${JSON.stringify(SINK)};
const out = process.argv[1];
const set = (tag) => {
  const names = Array.from({ length: ${String(ZONES)} }, (_, i) => "db." + tag + "-" + i);
  return new Map([
    ["ns/x-dns/Corefile", names.map((z) => "file " + z).join("\\n") + "\\n"],
    ...names.map((z) => ["ns/x-dns/" + z, "; " + tag + "\\n" + "x".repeat(512) + "\\n"]),
  ]);
};
const sink = await FileSink.open(out);
for (let n = 1; ; n++) {
  process.stdout.write("start " + n + "\\n");
  await sink.sync(set(n % 2 === 1 ? "a" : "b"));
}
`;

/** What a reader following OUT/ns/x-dns/Corefile finds wrong: missing zones, zones of another set. */
function inconsistencies(out: string): string[] {
  const dnsDir = join(out, "ns", "x-dns");
  const corefile = readFileSync(join(dnsDir, "Corefile"), "utf8");
  const zones = corefile
    .split("\n")
    .filter((l) => l.startsWith("file "))
    .map((l) => l.slice(5));
  const tag = /^db\.(\w+)-/.exec(zones[0] ?? "")?.[1];
  const wrong: string[] = [];
  for (const z of zones) {
    const path = join(dnsDir, z);
    if (!existsSync(path)) wrong.push(`${z} missing`);
    else if (!readFileSync(path, "utf8").startsWith(`; ${tag ?? "?"}\n`)) wrong.push(`${z} of another set`);
  }
  return wrong;
}

/** Runs the child until it printed "start <startLine>", lets it write for `delayMs`, then SIGKILLs it. */
async function killMidWrite(out: string, startLine: number, delayMs: number): Promise<void> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, out], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise((r) => child.once("exit", r));
  try {
    await until(
      () => stdout.includes(`start ${String(startLine)}\n`) || child.exitCode !== null,
      `write ${String(startLine)} started`,
      60_000,
    );
    expect(child.exitCode, stderr).toBeNull();
    await new Promise((r) => setTimeout(r, delayMs));
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

describe("FileSink killed mid-write", () => {
  it("leaves readers a Corefile whose zone files are all there and of its own set", async () => {
    const out = join(scratch, "out");
    // Kill points spread over a write of the second set (the first one must be complete to compare).
    for (const delayMs of [5, 40, 120, 250]) {
      await killMidWrite(out, 2, delayMs);
      expect(inconsistencies(out), `killed ${String(delayMs)} ms into a write`).toEqual([]);
    }
    // A new run removes the half-written generation the kills left.
    await killMidWrite(out, 2, 0);
    const generations = readdirSync(out).filter((f) => /^\.\.\d{4}_/.test(f));
    expect(generations.length).toBeLessThanOrEqual(2);
  });
});
