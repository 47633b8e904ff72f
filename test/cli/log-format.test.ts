// Logs a person reads at a terminal are pretty; a pipe (log collectors, the other tests) gets JSON
// lines; --log-format overrides either. The terminal is a real pseudo-terminal (util-linux script).
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { logFormat } from "../../src/cli/logger.js";
import { CLI, ServeProcess, oooi, until } from "../support/cli.js";
import { exampleCopy } from "../support/examples.js";

const MANIFESTS = exampleCopy("standalone");
const QUIET = ["--manifests", MANIFESTS, "--no-xds", "--no-dns"];

/** `oooi serve ARGS` with stderr on a pseudo-terminal, until `done` holds for its output. */
async function serveOnTerminal(args: readonly string[], done: (out: string) => boolean): Promise<string> {
  const command = [process.execPath, CLI, "serve", ...args].map((a) => `'${a}'`).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, NO_COLOR: "" },
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const exited = new Promise((r) => child.once("exit", r));
  try {
    await until(() => done(out), "serve's first lines on the terminal");
  } finally {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    await exited;
  }
  return out;
}

describe("log format", () => {
  it("follows the terminal unless --log-format says otherwise", () => {
    expect(logFormat(undefined, true)).toBe("pretty");
    expect(logFormat(undefined, false)).toBe("json");
    expect(logFormat("json", true)).toBe("json");
    expect(logFormat("pretty", false)).toBe("pretty");
  });

  it("refuses an unknown --log-format, naming the choices", async () => {
    const r = await oooi(["serve", ...QUIET, "--log-format", "jsn"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("--log-format");
    expect(r.stderr).toContain("json, pretty");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("is pretty on a terminal: level names and local times, no JSON", async () => {
    const out = await serveOnTerminal(QUIET, (o) => o.includes("rendered"));
    expect(out).toContain("\u001b[32mINFO"); // coloured, as NO_COLOR is not set
    // eslint-disable-next-line no-control-regex -- removing the colour codes the terminal got
    const plain = out.replace(/\u001b\[\d+m/g, "");
    expect(plain).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] INFO: rendered/);
    expect(plain).not.toContain('"level"');
  });

  it("is JSON on a terminal with --log-format json", async () => {
    const out = await serveOnTerminal([...QUIET, "--log-format", "json"], (o) => /"msg":"rendered"/.test(o));
    const line = out.split(/\r?\n/).find((l) => l.includes('"msg":"rendered"')) ?? "";
    expect(JSON.parse(line)).toMatchObject({ level: 30, cmd: "serve", msg: "rendered" });
  });

  it("is pretty in a pipe with --log-format pretty", async () => {
    const serve = new ServeProcess([...QUIET, "--log-format", "pretty"]);
    try {
      await until(() => serve.log.includes("rendered"), "rendered");
      expect(serve.log).toMatch(/INFO: rendered/);
      expect(serve.lines()).toEqual([]);
    } finally {
      await serve.stop();
    }
  });
});
