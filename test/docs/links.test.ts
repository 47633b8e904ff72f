// Every relative link in the repository's Markdown (README, docs/, bench/, deploy/, examples/ …)
// names a file that exists, and every #anchor a heading or id of its target, as GitHub renders it.
// The checker is first run on planted documents, so a checker that cannot fail fails here.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf, brokenLinks, linksOf, slug, type Tree } from "./links.js";

const ROOT = process.cwd();

/** Markdown files git knows of: tracked, and new ones not ignored (a doc being written counts). */
const markdownFiles = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.md"], {
  cwd: ROOT,
  encoding: "utf8",
})
  .split("\n")
  .filter((f) => f !== "" && existsSync(join(ROOT, f)));

const repoTree: Tree = {
  markdown: (path) =>
    path.endsWith(".md") && existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), "utf8") : undefined,
  exists: (path) => existsSync(join(ROOT, path)),
};

function memoryTree(files: Record<string, string>, others: readonly string[] = []): Tree {
  return {
    markdown: (path) => files[path],
    exists: (path) => path in files || others.includes(path),
  };
}

describe("GitHub's heading slugs", () => {
  it.each([
    ["Security model", "security-model"],
    ["serve, the whole path", "serve-the-whole-path"],
    ["`oooi serve`", "oooi-serve"],
    ["Who may use the xDS port?", "who-may-use-the-xds-port"],
    ["Add a backend kind (a row, not a branch)", "add-a-backend-kind-a-row-not-a-branch"],
    ["A → B: one change", "a--b-one-change"],
    ["[Linked](x.md) heading", "linked-heading"],
    ["snake_case stays", "snake_case-stays"],
  ])("%s → %s", (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it("numbers repeated headings and takes explicit ids", () => {
    const anchors = anchorsOf('# Rules\n## Rule\n## Rule\n<a id="rule-one"></a>\n```\n# not a heading\n```\n');
    expect([...anchors].sort()).toEqual(["rule", "rule-1", "rule-one", "rules"]);
  });
});

describe("links of a document", () => {
  it("finds relative links, skips URLs, code spans and fenced code", () => {
    const text = [
      "See [install](docs/install.md#three-steps) and [x](https://example.com).",
      "Code: `[not](a-link.md)`, ![img](pic.png), [ref]: docs/ref.md",
      "```",
      "[inside](a-fence.md)",
      "```",
      "[same file](#top)",
    ].join("\n");
    expect(linksOf(text)).toEqual([
      { target: "docs/install.md#three-steps", line: 1 },
      { target: "pic.png", line: 2 },
      { target: "#top", line: 6 },
    ]);
  });

  it("reports a planted broken file, a planted broken anchor, and passes good links", () => {
    const tree = memoryTree(
      {
        "README.md": [
          "# Top",
          "[ok](docs/a.md#first-part) [ok](#top) [ok](src/x.ts) [ok](docs/) [ok](docs/a.md)",
          "[gone](docs/missing.md) [bad anchor](docs/a.md#no-such-part) [up](../outside.md)",
        ].join("\n"),
        "docs/a.md": "# A\n## First part\n[back](../README.md#top) [self](#a)\n",
      },
      ["src/x.ts", "docs"],
    );
    expect(brokenLinks(["README.md", "docs/a.md"], tree)).toEqual([
      { file: "README.md", line: 3, target: "docs/missing.md", reason: "no file docs/missing.md" },
      {
        file: "README.md",
        line: 3,
        target: "docs/a.md#no-such-part",
        reason: "no heading or id #no-such-part in docs/a.md",
      },
      { file: "README.md", line: 3, target: "../outside.md", reason: "points outside the repository" },
    ]);
  });
});

describe("the repository's Markdown", () => {
  it("reads the documents the README promises", () => {
    for (const doc of [
      "README.md",
      "docs/install.md",
      "docs/cli.md",
      "docs/troubleshooting.md",
      "docs/security.md",
      "docs/architecture.md",
      "docs/testing.md",
      "docs/reference.md",
      "docs/xds-protocol.md",
      "bench/README.md",
    ]) {
      expect(markdownFiles).toContain(doc);
    }
  });

  it("has no relative link to a missing file or anchor", () => {
    expect(brokenLinks(markdownFiles, repoTree)).toEqual([]);
  });
});
