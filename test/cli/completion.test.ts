// `oooi completion bash|zsh` from the built CLI, run by the real shells: the script is sourced and
// its completion function called with the words a user typed, as the shell's completion would.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oooi } from "../support/cli.js";
import { skipUnless, toolMissing } from "../support/peers.js";

const exec = promisify(execFile);
const HAVE_ZSH = skipUnless(toolMissing("zsh", "apt-get install zsh")) === undefined;
const dir = mkdtempSync(join(tmpdir(), "oooi-completion-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const scripts: Record<"bash" | "zsh", string> = { bash: "", zsh: "" };
beforeAll(async () => {
  for (const shell of ["bash", "zsh"] as const) {
    const r = await oooi(["completion", shell]);
    expect(r.code).toBe(0);
    scripts[shell] = join(dir, `oooi.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
  // Files for the --manifests completion.
  writeFileSync(join(dir, "infra.yaml"), "");
  writeFileSync(join(dir, "infra-2.yaml"), "");
});

/** What the completion offers for `line` (the last word is the one being completed). */
async function complete(shell: "bash" | "zsh", line: string): Promise<string[]> {
  const words = line.split(" ");
  const array = words.map((w) => `'${w}'`).join(" ");
  const body =
    shell === "bash"
      ? `source '${scripts.bash}'; COMP_WORDS=(${array}); COMP_CWORD=${String(words.length - 1)}; _oooi; printf '%s\\n' "\${COMPREPLY[@]}"`
      : // bashcompinit calls the function with KSH_ARRAYS on (0-based arrays), as here.
        `source '${scripts.zsh}'; setopt ksharrays; COMP_WORDS=(${array}); COMP_CWORD=${String(words.length - 1)}; _oooi; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = await exec(shell, shell === "zsh" ? ["-f", "-c", body] : ["--norc", "-c", body], { cwd: dir });
  const offered = r.stdout.split("\n").filter((l) => l !== "");
  // zsh's bashcompinit hands COMPREPLY to compadd, which keeps the words matching what was typed
  // (its compgen does not filter); bash's compgen filters itself.
  const typed = words.at(-1) ?? "";
  return shell === "zsh" ? offered.filter((w) => w.startsWith(typed)) : offered;
}

const rows: readonly { line: string; want: string[] }[] = [
  {
    line: "oooi ",
    want: ["completion", "debug", "dhcp-agent", "explain", "help", "operator", "render", "serve", "verify", "version"],
  },
  { line: "oooi de", want: ["debug"] },
  { line: "oooi debug ", want: ["config", "nodes", "pushes"] },
  { line: "oooi debug nodes --cl", want: ["--cluster"] },
  { line: "oooi debug nodes -o ", want: ["json", "table", "yaml"] },
  { line: "oooi debug config node-1 --output ", want: ["json", "yaml"] },
  { line: "oooi serve --log-format p", want: ["pretty"] },
  { line: "oooi operator --http-auth ", want: ["kubernetes", "none"] },
  // A flag's value is not a command: "debug" here is the folder given to --manifests.
  { line: "oooi serve --manifests debug --no-d", want: ["--no-dns"] },
  { line: "oooi render --manifests infra", want: ["infra-2.yaml", "infra.yaml"] },
  { line: "oooi serve --xds-listen ", want: [] },
  { line: "oooi completion ", want: [] },
];

describe.each(["bash", "zsh"] as const)("oooi completion %s", (shell) => {
  it.skipIf(shell === "zsh" && !HAVE_ZSH).each(rows)("$line", async ({ line, want }) => {
    expect((await complete(shell, line)).sort()).toEqual(want);
  });
});

describe("oooi completion", () => {
  it("refuses another shell with exit 2", async () => {
    const r = await oooi(["completion", "fish"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bash, zsh");
  });
});
