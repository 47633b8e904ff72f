// The README's CLI table against the built CLI's --help: every command `oooi --help` lists has a
// row, every row names a real command, and every --flag a row mentions is one that command takes
// (a renamed or removed flag breaks this test, not a reader's first try). The table is one block:
// a blank line inside it would end the Markdown table early.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, oooi } from "../support/cli.js";

const readme = readFileSync(join(ROOT, "README.md"), "utf8");

/** The rows of the table under "## The CLI": [command, the whole row]. */
function cliRows(): [string, string][] {
  const section = readme.slice(readme.indexOf("## The CLI"));
  const lines = section.split("\n");
  const start = lines.findIndex((l) => l.startsWith("| command |"));
  const rows: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("| `oooi ")) break;
    rows.push(line);
  }
  return rows.map((r) => [/^\| `oooi ([a-z-]+)/.exec(r)?.[1] ?? "", r]);
}

/** Commands of `oooi --help`, in its order. */
async function commands(): Promise<string[]> {
  const help = (await oooi(["--help"])).stdout;
  const list = help.slice(help.indexOf("Commands:"));
  return [...list.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1] ?? "").filter((c) => c !== "help");
}

/** Every --flag of a command, with its sub-commands' (debug nodes|config|pushes). */
async function flags(command: string): Promise<Set<string>> {
  const help = (await oooi([command, "--help"])).stdout;
  const list = help.includes("Commands:") ? help.slice(help.indexOf("Commands:")) : "";
  const subs = [...list.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1] ?? "").filter((c) => c !== "help");
  const texts = [help, ...(await Promise.all(subs.map(async (s) => (await oooi([command, s, "--help"])).stdout)))];
  return new Set(texts.flatMap((t) => [...t.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0])));
}

describe("README's CLI table", () => {
  it("has one row per command of `oooi --help`, in one unbroken table", async () => {
    const rows = cliRows();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map(([c]) => c).sort()).toEqual((await commands()).sort());
  });

  // Each --help is a process start (seconds on a loaded machine): all of them at once.
  it("mentions only flags the command takes", { timeout: 180_000 }, async () => {
    const rows = cliRows();
    const known = await Promise.all(rows.map(([command]) => flags(command)));
    const unknown: string[] = [];
    for (const [i, [command, row]] of rows.entries()) {
      // Flags of other tools quoted in a row (kubectl, dig) are backticked with their tool's name.
      const mentioned = [...row.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]);
      for (const flag of new Set(mentioned)) {
        const expanded = flag === "--xds-tls-cert" ? ["--xds-tls-cert", "--xds-tls-key", "--xds-tls-ca"] : [flag];
        for (const f of expanded) if (known[i]?.has(f) !== true) unknown.push(`${command} ${f}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
