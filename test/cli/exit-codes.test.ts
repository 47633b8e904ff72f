// The exit contract of every command, through the built CLI (docs/cli.md): 0 ok, 1 a finding,
// 2 usage or input. Commander's own usage errors exited 1 — the code of "no route matches", "a check
// failed" (issue 27, finding 6) — and say so on stderr in one line, without a stack trace.
import { describe, expect, it } from "vitest";
import { oooi } from "../support/cli.js";

const USAGE_ERRORS: readonly { name: string; args: readonly string[]; message: RegExp }[] = [
  { name: "render without --manifests", args: ["render", "--out", "x"], message: /required option '--manifests/ },
  {
    name: "render --strict without --out",
    args: ["render", "--manifests", "examples/standalone", "--strict"],
    message: /required option '--out/,
  },
  {
    name: "an unknown flag",
    args: ["render", "--manifests", "examples/standalone", "--out", "x", "--frobnicate"],
    message: /unknown option '--frobnicate'/,
  },
  { name: "an unknown command", args: ["rendr"], message: /unknown command 'rendr'/ },
  {
    name: "a value a flag's parser refuses",
    args: ["render", "--manifests", "examples/standalone", "--out", "x", "--xds-address", "nowhere"],
    message: /'--xds-address <host:port>' argument 'nowhere' is invalid/,
  },
  { name: "explain without --from", args: ["explain", "--port", "443", "--manifests", "x"], message: /--from/ },
  { name: "a command group without its subcommand", args: ["debug"], message: /Usage: oooi debug/ },
  { name: "no command at all", args: [], message: /Usage: oooi/ },
];

describe("oooi exit codes", () => {
  it.each(USAGE_ERRORS)("$name exits 2 with commander's message and no stack trace", async ({ args, message }) => {
    const r = await oooi(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toBe("");
  });

  const ASKED = [["--help"], ["-v"], ["--version"], ["help"], ["render", "--help"], ["help", "debug"]];
  it.each(ASKED.map((args) => ({ cli: args.join(" "), args })))("$cli exits 0", async ({ args }) => {
    const r = await oooi(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toBe("");
  });

  it("a command's own input error keeps its code (serve with an unreadable --manifests: 2)", async () => {
    const r = await oooi(["serve", "--manifests", "does/not/exist", "--no-xds", "--no-dns"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --manifests does\/not\/exist cannot be read/);
  });
});
