// `--manifests` as a folder, one file, or `-` (standard input), through the built CLI: render writes
// the same outputs from all three; unreadable input names <stdin> or the file with its position
// (exit 2); serve refuses `-` and watches a single file, atomic saves included.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, ROOT, ServeProcess, oooi, until } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "oooi-manifests-input-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
const example = join(ROOT, "examples", "minimal");

/** The example's files as one multi-document YAML stream. */
function oneStream(): string {
  return readdirSync(example)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((f) => readFileSync(join(example, f), "utf8").trimEnd())
    .join("\n---\n");
}

function renderStdin(input: string, out: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "render", "--manifests", "-", "--out", out], {
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.once("exit", (code) => {
      resolve({ code, stderr });
    });
    child.stdin.end(input);
  });
}

/** Every rendered file but the index, relative path → content. */
function tree(out_: string): Map<string, string> {
  // The current generation holds the whole set (its folder's name differs between runs).
  const root = join(out_, "..data");
  const out = new Map<string, string>();
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.name === ".oooi-index.json") continue;
    const abs = join(e.parentPath, e.name);
    out.set(relative(root, abs), readFileSync(abs, "utf8"));
  }
  return out;
}

describe("render --manifests FILE and -", () => {
  it("names <stdin> with line and column when standard input is not YAML (exit 2)", async () => {
    const r = await renderStdin("kind: Infra\nspec: [\n", join(dir, "bad-out"));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oooi render: cannot read manifests: <stdin>:\d+:\d+: /m);
  });

  it("names a missing file (exit 2), without writing anything", async () => {
    const r = await oooi(["render", "--manifests", join(dir, "missing.yaml"), "--out", join(dir, "missing-out")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(dir, "missing.yaml")}: ENOENT: no such file or directory`);
    expect(readdirSync(dir)).not.toContain("missing-out");
  });

  it("writes the same outputs from the folder, from one file and from standard input", async () => {
    const file = join(dir, "all.yaml");
    writeFileSync(file, oneStream());
    const fromDir = await oooi(["render", "--manifests", example, "--out", join(dir, "from-dir")]);
    const fromFile = await oooi(["render", "--manifests", file, "--out", join(dir, "from-file")]);
    const fromStdin = await renderStdin(oneStream(), join(dir, "from-stdin"));
    expect([fromDir.code, fromFile.code, fromStdin.code], fromStdin.stderr).toEqual([0, 0, 0]);
    const expected = tree(join(dir, "from-dir"));
    expect([...expected.keys()]).toContain(join("clusters", "tenant-vlan100-proxy", "envoy.json"));
    expect(tree(join(dir, "from-file"))).toEqual(expected);
    expect(tree(join(dir, "from-stdin"))).toEqual(expected);
  });
});

describe("serve --manifests FILE", () => {
  it("refuses - (standard input cannot be watched) with exit 2", async () => {
    const r = await oooi(["serve", "--manifests", "-", "--no-xds", "--no-dns"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--manifests - (standard input) is for `oooi render`");
  });

  it("serves one file and follows an atomic save of it (temp file + rename)", async () => {
    const folder = join(dir, "watched");
    rmSync(folder, { recursive: true, force: true });
    const file = join(dir, "watched.yaml");
    writeFileSync(file, oneStream());
    const serve = new ServeProcess([
      "--manifests",
      file,
      "--no-xds",
      "--no-dns",
      "--http-listen",
      "127.0.0.1:0",
      "--debounce",
      "20",
    ]);
    try {
      await until(() => /status page on http:\/\/127\.0\.0\.1:\d+\//.test(serve.log), "http listening");
      const url = `${/status page on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(serve.log)?.[1] ?? ""}status.json`;
      const domains = async (): Promise<string[]> => {
        const view = (await (await fetch(url)).json()) as { infras: { attachments: { domain: string }[] }[] };
        return view.infras.flatMap((i) => i.attachments.map((a) => a.domain));
      };
      await until(async () => (await domains()).includes("example-hcp.clusters.example.com"), "the file served");
      writeFileSync(
        `${file}.tmp`,
        oneStream().replace("baseDomain: clusters.example.com", "baseDomain: edited.example.com"),
      );
      renameSync(`${file}.tmp`, file);
      await until(async () => (await domains()).includes("example-hcp.edited.example.com"), "the atomic save served");
      expect(serve.child.exitCode).toBe(null);
    } finally {
      await serve.stop();
    }
  });
});
