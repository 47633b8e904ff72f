// Issue 25 rows 3, 4, 6, 11 and 20 through the built CLI: a symbolic link loop, a FIFO, garbage
// and an over-size file in the manifest folder are named and the rest is served (edits of other
// files flow meanwhile), SIGTERM ends the process; `render` names a FIFO instead of hanging; a FIFO
// at --out's dhcp-allocations.json is a clear exit 2 at start. Real FIFOs and symbolic links.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { oooi, ROOT, ServeProcess, until } from "../support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-serve-special-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
let n = 0;
function workspace(): { manifests: string; out: string } {
  const dir = join(scratch, `ws-${String(++n)}`);
  const manifests = join(dir, "m");
  cpSync(join(ROOT, "examples", "minimal"), manifests, { recursive: true });
  return { manifests, out: join(dir, "out") };
}
const statusOf = (out: string): string =>
  existsSync(join(out, "status.json")) ? readFileSync(join(out, "status.json"), "utf8") : "";

describe("oooi serve with special entries in the manifest folder", () => {
  it("a symlink loop, a FIFO, garbage and an over-size file are named; the rest is served, edits flow, SIGTERM exits", async () => {
    const { manifests, out } = workspace();
    symlinkSync("loop2", join(manifests, "loop1"));
    symlinkSync("loop1", join(manifests, "loop2"));
    symlinkSync("loop.yaml", join(manifests, "loop.yaml"));
    execFileSync("mkfifo", [join(manifests, "fifo.yaml")]);
    writeFileSync(join(manifests, "garbage.yaml"), "kind: [oops\n");
    writeFileSync(join(manifests, "big.yaml"), `# ${"x".repeat(5000)}\n`);
    const s = new ServeProcess([
      "--manifests",
      manifests,
      "--out",
      out,
      "--no-xds",
      "--no-dns",
      "--debounce",
      "20",
      "--max-manifest-bytes",
      "4096",
    ]);
    try {
      await until(() => statusOf(out).includes("tenant-vlan100"), "the readable files rendered");
      // Each named under --manifests as given, a path the shell opens.
      const at = (file: string): string => join(manifests, file);
      const warned = (file: string) => s.lines().some((l) => l.level === 40 && l.file === at(file));
      await until(
        () => ["loop1", "loop2", "loop.yaml", "fifo.yaml", "garbage.yaml", "big.yaml"].every(warned),
        "each special entry named",
      );
      const text = s.lines().map((l) => l.msg);
      const startsWith = (prefix: string, rest: RegExp): boolean =>
        text.some((t) => t.startsWith(prefix) && rest.test(t.slice(prefix.length)));
      expect(startsWith(`${at("fifo.yaml")}: `, /^cannot read file: not a regular file.*FIFO/)).toBe(true);
      expect(startsWith(`${at("big.yaml")}: `, /over the limit of 4096 bytes.*--max-manifest-bytes/)).toBe(true);
      expect(startsWith(`${at("loop1")}: `, /^cannot be watched: ELOOP/)).toBe(true);
      // Another file's edit is served while they are there.
      const second = readFileSync(join(manifests, "infra.yaml"), "utf8").replace(
        "name: tenant-vlan100",
        "name: second",
      );
      mkdirSync(join(manifests, "more"));
      writeFileSync(join(manifests, "more", "second.yaml"), second);
      await until(() => statusOf(out).includes('"second"'), "a new file served beside the broken ones");
      // Fixing one resolves it.
      writeFileSync(join(manifests, "garbage.yaml"), "");
      await until(
        () => s.lines().some((l) => l.msg.startsWith(`resolved: ${at("garbage.yaml")}`)),
        "garbage.yaml resolved",
      );
    } finally {
      await s.stop();
    }
    expect(await s.exited).toBe(0);
  });

  it("render names a FIFO (in a folder or given alone) and exits 2 instead of hanging", async () => {
    const { manifests, out } = workspace();
    execFileSync("mkfifo", [join(manifests, "fifo.yaml")]);
    const folder = await oooi(["render", "--manifests", manifests, "--out", out]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(/fifo\.yaml: cannot read file: not a regular file: it is a FIFO/);
    const alone = await oooi(["render", "--manifests", join(manifests, "fifo.yaml"), "--out", out]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/fifo\.yaml: not a regular file: it is a FIFO/);
  });

  it("render refuses a manifest over --max-manifest-bytes, naming it and the limit", async () => {
    const { manifests, out } = workspace();
    const r = await oooi(["render", "--manifests", manifests, "--out", out, "--max-manifest-bytes", "100"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.yaml: cannot read file: \d+ bytes, over the limit of 100 bytes/);
  });

  it("a FIFO at --out's dhcp-allocations.json: exit 2 naming the file, no hang", async () => {
    const { manifests, out } = workspace();
    mkdirSync(out);
    execFileSync("mkfifo", [join(out, "dhcp-allocations.json")]);
    const s = new ServeProcess(["--manifests", manifests, "--out", out, "--no-xds", "--no-dns"]);
    try {
      await until(() => s.child.exitCode !== null, "serve exits");
    } finally {
      await s.stop();
    }
    expect(await s.exited).toBe(2);
    expect(s.log).toMatch(/dhcp-allocations\.json: not a regular file/);
  });
});
