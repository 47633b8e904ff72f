// Runs a command to completion and captures its output; the building block of the netns and
// Kea helpers. Never rejects on a non-zero exit: callers assert on `code`.
import { spawn } from "node:child_process";

/** Outcome of one finished command. `code` is null when a signal ended it. */
export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options for run(): extra environment and a kill-after limit (a safety net, not an assertion). */
export interface RunOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

/** Runs `cmd args…`, resolving with exit code and output once it exits. */
export function run(cmd: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed; rejects with its output otherwise. */
export async function runOk(cmd: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, options);
  if (r.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${String(r.code)}: ${r.stderr.trim() || r.stdout.trim()}`);
  }
  return r;
}

/** Absolute path of an executable on PATH, or undefined. */
export async function which(name: string): Promise<string | undefined> {
  const r = await run("sh", ["-c", 'command -v "$0"', name]).catch(() => undefined);
  const path = r?.stdout.trim();
  return r?.code === 0 && path !== undefined && path !== "" ? path : undefined;
}
