// The background scan's listing and stats run in a worker thread of the built process
// (src/watchers/manifest-scan.ts); the tests run from the sources, where the scan stays in-thread.
// Here the built module's worker and the in-thread walk must agree on a folder with every entry a
// user's folder can hold: nested folders, hidden entries, other extensions, a linked folder, a
// symbolic link loop and a dangling link.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { statTree, type TreeStats } from "../../src/watchers/manifest-tree.js";
import { ROOT } from "../support/cli.js";

const built = (await import(pathToFileURL(join(ROOT, "dist", "watchers", "manifest-scan.js")).href)) as {
  statTreeOffThread: (dir: string) => Promise<TreeStats>;
};

const scratch = mkdtempSync(join(tmpdir(), "oooi-scan-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(scratch, "f-"));
  mkdirSync(join(dir, "infra-1", "deeper"), { recursive: true });
  mkdirSync(join(dir, ".hidden"));
  mkdirSync(join(scratch, "elsewhere"), { recursive: true });
  writeFileSync(join(scratch, "elsewhere", "linked.yaml"), "kind: Namespace\n");
  for (const [path, text] of [
    ["a.yaml", "a"],
    ["b.json", "{}"],
    ["c.YML", "c"],
    ["notes.txt", "x"],
    [".editor.swp", "x"],
    [".hidden/h.yaml", "h"],
    ["infra-1/infra.yaml", "i"],
    ["infra-1/deeper/m.yaml", "m"],
  ] as const)
    writeFileSync(join(dir, path), text);
  symlinkSync(join(scratch, "elsewhere"), join(dir, "linked"));
  symlinkSync(dir, join(dir, "infra-1", "loop"));
  symlinkSync(join(dir, "nowhere.yaml"), join(dir, "dangling.yaml"));
  return dir;
}

describe("the scan in the built worker thread", () => {
  it("lists and stats the same files, keys and folders as the in-thread walk", async () => {
    const dir = folder();
    const inThread = await statTree(dir);
    const worker = await built.statTreeOffThread(dir);
    expect(worker).toEqual(inThread);
    // What both must hold, from the folder's rules (docs/cli.md): manifests by extension, hidden
    // entries skipped, links followed once, a dangling link listed without a key.
    expect(worker.files).toEqual([
      "a.yaml",
      "b.json",
      "c.YML",
      "dangling.yaml",
      "infra-1/deeper/m.yaml",
      "infra-1/infra.yaml",
      "linked/linked.yaml",
    ]);
    expect(worker.keys.map((k) => k === undefined)).toEqual([false, false, false, true, false, false, false]);
    expect([...worker.dirs].sort()).toEqual(["", "infra-1", "infra-1/deeper", "linked"]);
  });

  it("rejects a folder that cannot be listed, as the in-thread walk does", async () => {
    const gone = join(scratch, "never-made");
    await expect(statTree(gone)).rejects.toThrow(/ENOENT/);
    await expect(built.statTreeOffThread(gone)).rejects.toThrow(/ENOENT/);
  });
});
