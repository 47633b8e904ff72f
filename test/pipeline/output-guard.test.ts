// checkOutputDir on real folders and symlinks, row by row from docs/cli.md#oooi-render: --out may not
// be, contain or lie inside --manifests (symlinks resolved, also of an --out that does not exist yet);
// it must be a folder, new, empty, or one an earlier render wrote (its OUT/.oooi-index.json, in either
// layout), unless --force (requireOwned off). Manifests from stdin leave only the folder check.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkOutputDir } from "../../src/pipeline/output-guard.js";

const scratch = mkdtempSync(join(tmpdir(), "oooi-output-guard-"));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

let n = 0;
/** A fresh workspace: `m` a manifests folder holding one file, beside nothing else. */
function workspace(): { dir: string; manifests: string } {
  const dir = join(scratch, `ws-${String(++n)}`);
  const manifests = join(dir, "m");
  mkdirSync(manifests, { recursive: true });
  writeFileSync(join(manifests, "infra.yaml"), "kind: Infra\n");
  return { dir, manifests };
}

const render = { requireOwned: true };
const force = { requireOwned: false };
const INDEX = JSON.stringify({ generator: "oooi", files: ["status.json"] });

/** The refusal's message, or "ok". */
async function verdict(out: string, manifests: string | undefined, opts = render): Promise<string> {
  const r = await checkOutputDir(out, manifests, opts);
  return r.ok ? "ok" : r.message;
}

describe("checkOutputDir: --out against --manifests", () => {
  it("refuses --out equal to the manifests folder, spelled directly, with a trailing slash, via .. or a symlink", async () => {
    const { dir, manifests } = workspace();
    symlinkSync(manifests, join(dir, "link"));
    const spellings = [manifests, `${manifests}/`, join(dir, "x", "..", "m"), join(dir, "link")];
    for (const out of spellings)
      expect(await verdict(out, manifests), out).toBe(`--out ${out} is the manifests folder; choose another folder`);
    // The manifests named through the link are the same folder.
    expect(await verdict(manifests, join(dir, "link"))).toMatch(/ is the manifests folder;/);
  });

  it("refuses --out that contains the manifests folder, directly or further up, naming both", async () => {
    const { dir, manifests } = workspace();
    const contains = (out: string): string =>
      `--out ${out} contains the manifests folder ${manifests}; choose a folder outside it`;
    expect(await verdict(dir, manifests)).toBe(contains(dir));
    expect(await verdict(scratch, manifests)).toBe(contains(scratch));
  });

  it("refuses --out inside the manifests folder, one level down or deeper, existing or not", async () => {
    const { manifests } = workspace();
    mkdirSync(join(manifests, "existing"));
    const inside = (out: string): string =>
      `--out ${out} is inside the manifests folder ${manifests} (outputs would be read back as manifests); ` +
      "choose a folder outside it";
    for (const out of [join(manifests, "out"), join(manifests, "existing"), join(manifests, "a", "b", "c")])
      expect(await verdict(out, manifests), out).toBe(inside(out));
    // A name that starts with two dots is still a child, not a parent.
    expect(await verdict(join(manifests, "..out"), manifests)).toBe(inside(join(manifests, "..out")));
  });

  it("resolves the symlinks of an --out that does not exist yet through its nearest existing parent", async () => {
    const { dir, manifests } = workspace();
    symlinkSync(manifests, join(dir, "link"));
    const out = join(dir, "link", "new", "deeper");
    expect(await verdict(out, manifests)).toMatch(/^--out .* is inside the manifests folder /);
    // And of the manifests: an --out containing the folder a link names is refused too.
    symlinkSync(join(dir, "link"), join(dir, "link2"));
    expect(await verdict(dir, join(dir, "link2", "."))).toMatch(/ contains the manifests folder /);
  });

  it("accepts a sibling whose name only starts with the manifests folder's, and a sibling that shares its parent", async () => {
    const { dir, manifests } = workspace();
    expect(await verdict(`${manifests}2`, manifests)).toBe("ok");
    expect(await verdict(join(dir, "out"), manifests)).toBe("ok");
    // The manifests inside a sibling whose name extends --out's: not contained.
    const other = join(dir, "outer");
    mkdirSync(join(other, "m"), { recursive: true });
    expect(await verdict(join(dir, "out"), join(other, "m"))).toBe("ok");
  });

  it("takes a relative --out from the working folder", async () => {
    const { manifests } = workspace();
    const out = relative(process.cwd(), join(manifests, "out"));
    expect(await verdict(out, manifests)).toMatch(/^--out .* is inside the manifests folder /);
  });

  it("checks only the folder itself when the manifests come from stdin", async () => {
    const { manifests } = workspace();
    // The manifests folder is a non-empty folder no render wrote: refused for that reason alone.
    expect(await verdict(manifests, undefined)).toMatch(/is not empty and holds no earlier render/);
    expect(await verdict(join(manifests, "out"), undefined)).toBe("ok");
  });
});

describe("checkOutputDir: what --out holds", () => {
  it("accepts a folder that does not exist yet, and an empty one", async () => {
    const { dir, manifests } = workspace();
    expect(await verdict(join(dir, "new", "deeper"), manifests)).toBe("ok");
    mkdirSync(join(dir, "empty"));
    expect(await verdict(join(dir, "empty"), manifests)).toBe("ok");
    expect(await verdict(join(dir, "empty"), undefined)).toBe("ok");
  });

  it("refuses an --out that is a file, with --force too", async () => {
    const { dir, manifests } = workspace();
    const out = join(dir, "file");
    writeFileSync(out, "x\n");
    for (const opts of [render, force]) {
      expect(await verdict(out, manifests, opts)).toBe(`--out ${out} exists and is not a folder`);
      expect(await verdict(out, undefined, opts)).toBe(`--out ${out} exists and is not a folder`);
    }
  });

  it("refuses a non-empty folder no render wrote, names the index and --force; --force accepts it", async () => {
    const { dir, manifests } = workspace();
    const out = join(dir, "foreign");
    mkdirSync(out);
    writeFileSync(join(out, "keep.txt"), "keep\n");
    expect(await verdict(out, manifests)).toBe(
      `--out ${out} is not empty and holds no earlier render (no .oooi-index.json); choose a new or empty folder, ` +
        "or pass --force to write there (oooi then replaces only the files it writes and never removes the others)",
    );
    expect(await verdict(out, manifests, force)).toBe("ok");
    expect(await verdict(out, undefined, force)).toBe("ok");
    // A folder holding only a subfolder is not empty either.
    const nested = join(dir, "nested");
    mkdirSync(join(nested, "sub"), { recursive: true });
    expect(await verdict(nested, manifests)).toMatch(/is not empty and holds no earlier render/);
  });

  it("accepts a folder an earlier render wrote, in the generation layout and the earlier in-place one", async () => {
    const { dir, manifests } = workspace();
    const inPlace = join(dir, "in-place");
    mkdirSync(inPlace);
    writeFileSync(join(inPlace, ".oooi-index.json"), INDEX);
    writeFileSync(join(inPlace, "status.json"), "{}\n");
    expect(await verdict(inPlace, manifests)).toBe("ok");

    const generations = join(dir, "generations");
    const generation = "..2026_01_02_03_04_05.1a2b3c4d";
    mkdirSync(join(generations, generation), { recursive: true });
    writeFileSync(join(generations, generation, ".oooi-index.json"), INDEX);
    symlinkSync(generation, join(generations, "..data"));
    expect(await verdict(generations, manifests)).toBe("ok");
  });

  it("refuses a folder whose index is not oooi's", async () => {
    const { dir, manifests } = workspace();
    const out = join(dir, "other");
    mkdirSync(out);
    writeFileSync(join(out, ".oooi-index.json"), JSON.stringify({ generator: "else", files: [] }));
    expect(await verdict(out, manifests)).toMatch(/is not empty and holds no earlier render/);
  });

  it("reads the folder a symlinked --out names", async () => {
    const { dir, manifests } = workspace();
    const target = join(dir, "target");
    mkdirSync(target);
    writeFileSync(join(target, "keep.txt"), "keep\n");
    symlinkSync(target, join(dir, "out-link"));
    expect(await verdict(join(dir, "out-link"), manifests)).toMatch(
      /^--out .*out-link is not empty and holds no earlier render/,
    );
  });
});
