// The built `oooi` CLI in a child process, as a user runs it: one-shot runs and a long-running serve
// whose stderr (pino JSON lines) a test can wait on.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";

export const ROOT = join(import.meta.dirname, "..", "..");
export const CLI = join(ROOT, "dist", "cli", "main.js");
const exec = promisify(execFile);

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function oooi(args: readonly string[]): Promise<CliRun> {
  try {
    const r = await exec(process.execPath, [CLI, ...args]);
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Polls `check` until it holds; the timeout guards against a hang under load, it measures nothing. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A running long-lived `oooi COMMAND`; `log` accumulates its stderr, `exited` resolves with its exit code. */
export class CliProcess {
  log = "";
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
    this.child = spawn(process.execPath, [CLI, command, ...args], { stdio: ["ignore", "ignore", "pipe"], env });
    this.child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      this.log += d;
    });
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code) => {
        resolve(code);
      });
    });
  }

  /** The complete pino lines logged so far, parsed (a line still being written is left for later). */
  lines(): { level: number; msg: string; [k: string]: unknown }[] {
    return this.log
      .split("\n")
      .slice(0, -1)
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    await this.exited;
  }
}

/** A running `oooi serve`. */
export class ServeProcess extends CliProcess {
  constructor(args: readonly string[]) {
    super("serve", args);
  }

  /** The port the embedded DNS responder logged it listens on (--dns-listen HOST:0), once it has. */
  async dnsPort(): Promise<number> {
    const logged = () => Number(/DNS responder listening on [\d.]+:(\d+)/.exec(this.log)?.[1] ?? 0);
    await until(() => logged() > 0 || this.child.exitCode !== null, "the DNS responder listening");
    if (logged() === 0) throw new Error(`serve exited before its DNS responder listened:\n${this.log}`);
    return logged();
  }
}

/**
 * A running `oooi operator` as its pod runs it (POD_NAMESPACE oooi-system, POD_NAME `pod`), on free
 * loopback ports, with `kubeconfig`; `args` follow (e.g. --xds-plaintext, --http-auth none).
 */
export class OperatorProcess extends CliProcess {
  constructor(kubeconfig: string, args: readonly string[] = [], pod = "oooi-0") {
    const env: NodeJS.ProcessEnv = { ...process.env, POD_NAMESPACE: "oooi-system", POD_NAME: pod };
    super(
      "operator",
      ["--kubeconfig", kubeconfig, "--xds-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", ...args],
      env,
    );
  }

  /** The HTTP port's base URL as the operator logged it (https:// unless --http-auth=none without a certificate). */
  async httpBase(): Promise<string> {
    const logged = () => /probes and metrics on (https?:\/\/[\d.]+:\d+)/.exec(this.log)?.[1];
    await until(() => logged() !== undefined || this.child.exitCode !== null, "the operator's HTTP port");
    const base = logged();
    if (base === undefined) throw new Error(`the operator exited before listening:\n${this.log}`);
    return base;
  }
}

/** A loopback port nothing listens on (bound, then closed): TCP and, on loopback, UDP are refused. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}
