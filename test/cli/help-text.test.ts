// `--help` reads as prose wrapped to the terminal: descriptions break lines only between paragraphs,
// before an indented list line or after a line that introduces one — never mid-sentence, which
// commander would keep as a ragged short line at any width — and every line fits 80 columns
// (commander's width for a pipe) unless one word alone is longer. $COLUMNS sets the width.
import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram, helpWidth } from "../../src/cli/program.js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { CLI } from "../support/cli.js";

const exec = promisify(execFile);

function commands(c: Command, path = "oooi"): { path: string; command: Command }[] {
  return [{ path, command: c }, ...c.commands.flatMap((s) => commands(s, `${path} ${s.name()}`))];
}

const all = commands(buildProgram());

/** Line breaks inside a paragraph: the end of the line before and the start of the line after. */
function midSentenceBreaks(text: string): string[] {
  const lines = text.split("\n");
  return lines.flatMap((line, i) => {
    const next = lines[i + 1];
    if (next === undefined || next === "" || line === "" || next.startsWith("  ") || line.endsWith(":")) return [];
    return [`…${line.slice(-30)}⏎${next.slice(0, 30)}…`];
  });
}

/** Lines longer than `width` that a space would have let commander break. */
function overlong(text: string, width: number): string[] {
  return text.split("\n").filter((l) => l.length > width && /\S\s+\S/.test(l.trim().slice(0, width)));
}

describe("--help text", () => {
  it("covers every command", () => {
    expect(all.map((c) => c.path)).toEqual(
      expect.arrayContaining(["oooi serve", "oooi debug nodes", "oooi verify", "oooi completion"]),
    );
  });

  it.each(all)("$path: no line break inside a paragraph", ({ command }) => {
    expect(midSentenceBreaks(command.description())).toEqual([]);
  });

  it.each(all)("$path: every line fits 80 columns", ({ command }) => {
    command.configureHelp({ helpWidth: 80 });
    expect(overlong(command.helpInformation(), 80)).toEqual([]);
  });

  it("finds a planted mid-sentence break and an overlong line", () => {
    expect(midSentenceBreaks("Serves DNS and\nxDS.\n\nNext paragraph:\n  a list")).toEqual(["…Serves DNS and⏎xDS.…"]);
    expect(overlong(`${"word ".repeat(20)}\n${"x".repeat(90)}`, 80)).toHaveLength(1);
  });

  it("wraps to $COLUMNS when set, else the terminal's width, else commander's 80", async () => {
    expect(helpWidth("120", { isTTY: false })).toBe(120);
    expect(helpWidth(undefined, { isTTY: true, columns: 100 })).toBe(100);
    expect(helpWidth("", { isTTY: false })).toBe(80);
    expect(helpWidth("wide", { isTTY: true, columns: 90 })).toBe(90);
    const { stdout } = await exec(process.execPath, [CLI, "render", "--help"], {
      env: { ...process.env, COLUMNS: "50" },
    });
    const prose = stdout.split("\n").filter((l) => !l.startsWith(" "));
    expect(prose.some((l) => l.length > 40)).toBe(true);
    expect(prose.filter((l) => l.length > 50)).toEqual([]);
  });
});
