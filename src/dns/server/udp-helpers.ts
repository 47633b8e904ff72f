// The processes answering UDP beside the responder (./udp-process.ts), started by it when
// `udpProcesses` is above 1: each gets the bound UDP socket and every rendering's files. One that
// exits unexpectedly is started again a second later; closing the responder ends them all.
import { fork, type ChildProcess } from "node:child_process";
import type { Socket as UdpSocket } from "node:dgram";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./udp-process.js", import.meta.url));
const RESTART_DELAY_MS = 1000;

/** What a helper needs to answer and forward as the responder does. */
export interface HelperSettings {
  readonly host: string;
  readonly port: number;
  readonly upstreamPort: number;
  readonly resolvConf: readonly string[];
  readonly upstreamTimeoutMs: number;
  readonly maxForwardsInFlight: number;
}

export type HelperRequest =
  | { readonly type: "start"; readonly settings: HelperSettings }
  | { readonly type: "serve"; readonly files: Readonly<Record<string, string>> | undefined };

export type HelperReply = { readonly type: "ready" } | { readonly type: "log"; readonly msg: string };

/** Helper processes sharing one UDP socket. */
export class UdpHelpers {
  private readonly children = new Set<ChildProcess>();
  private files: Readonly<Record<string, string>> | undefined;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly udp: UdpSocket,
    private readonly settings: HelperSettings,
    private readonly log: (msg: string) => void,
  ) {}

  /**
   * Starts `count` helpers on `udp` and resolves once each answers. Run from the TypeScript
   * sources, where no compiled helper script exists, it starts none and says so.
   */
  static async start(
    udp: UdpSocket,
    count: number,
    settings: HelperSettings,
    log: (msg: string) => void,
  ): Promise<UdpHelpers> {
    const helpers = new UdpHelpers(udp, settings, log);
    if (!existsSync(SCRIPT)) {
      log(`dns: UDP helper processes need the built oooi (${SCRIPT} is missing); answering UDP in one process`);
      return helpers;
    }
    await Promise.all(Array.from({ length: count }, () => helpers.spawn()));
    return helpers;
  }

  /** Helper processes running now. */
  get running(): number {
    return this.children.size;
  }

  /** Serves these rendered files (undefined: refuse everything) in every helper, now and after a restart. */
  serve(files: Readonly<Record<string, string>> | undefined): void {
    this.files = files;
    const request: HelperRequest = { type: "serve", files };
    for (const child of this.children) send(child, request);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.all(
      [...this.children].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              resolve();
              return;
            }
            child.once("exit", () => {
              resolve();
            });
            // Closing the channel ends the helper (it exits on 'disconnect'); a helper that hangs is killed.
            if (child.connected) child.disconnect();
            const kill = setTimeout(() => child.kill("SIGKILL"), 2000);
            kill.unref();
          }),
      ),
    );
    this.children.clear();
  }

  private spawn(): Promise<void> {
    // Advanced serialization: the rendered files cross as a structured clone, not JSON text.
    const child = fork(SCRIPT, [], { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.children.add(child);
    const ready = new Promise<void>((resolve) => {
      child.on("message", (reply: HelperReply) => {
        if (reply.type === "log") this.log(reply.msg);
        else resolve();
      });
      child.once("exit", () => {
        resolve();
      });
    });
    child.once("exit", (code, signal) => {
      this.children.delete(child);
      if (this.closed) return;
      this.log(
        `dns: UDP helper process ${String(child.pid)} exited (${signal ?? `code ${String(code)}`}); ` +
          `starting another in ${String(RESTART_DELAY_MS / 1000)} s`,
      );
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.closed) void this.spawn();
      }, RESTART_DELAY_MS);
      this.timers.add(timer);
    });
    child.on("error", (err) => {
      this.log(`dns: UDP helper process: ${err.message}`);
    });
    const start: HelperRequest = { type: "start", settings: this.settings };
    child.send(start, this.udp);
    send(child, { type: "serve", files: this.files });
    return ready;
  }
}

function send(child: ChildProcess, request: HelperRequest): void {
  // A helper gone between the check and the send is started again by its exit handler.
  if (child.connected) child.send(request, () => undefined);
}
