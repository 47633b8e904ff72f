// Client for kea-dhcp4's unix control socket. Kea 2.2 reads one JSON command per connection,
// answers, and closes; commands are strictly serialized because Kea handles them one at a time
// and a config-set must never race a config-test of another config.
import { connect, type Socket } from "node:net";
import { KeaTimeoutError, KeaTransportError, KeaUnreachableError, resultError } from "./errors.js";
import { SerialCalls } from "../../util/serial-calls.js";

/** A successful (result 0) answer from Kea. */
export interface KeaAnswer {
  readonly result: number;
  readonly text?: string;
  readonly arguments?: unknown;
}

/** Anything that sends a Kea command and resolves with a result-0 answer (or throws a KeaError). */
export interface KeaCommander {
  command(command: string, args?: object, options?: { readonly timeoutMs?: number }): Promise<KeaAnswer>;
}

/** Options of KeaControlClient. */
export interface KeaClientOptions {
  /** Per-command limit from connect to complete answer; default 10 s (config-set of thousands of reservations takes a while). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** One client per control socket; every command goes through its queue, never two in flight. */
export class KeaControlClient implements KeaCommander {
  private readonly commands = new SerialCalls();
  private readonly timeoutMs: number;

  constructor(
    readonly socketPath: string,
    options: KeaClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * Sends `{command, arguments}` once the previous command has finished. Resolves with the
   * answer when `result` is 0; otherwise rejects with the typed error for its result code.
   */
  command(command: string, args?: object, options: { readonly timeoutMs?: number } = {}): Promise<KeaAnswer> {
    const run = (): Promise<KeaAnswer> => exchange(this.socketPath, command, args, options.timeoutMs ?? this.timeoutMs);
    return this.commands.run(run);
  }
}

function exchange(
  socketPath: string,
  command: string,
  args: object | undefined,
  timeoutMs: number,
): Promise<KeaAnswer> {
  return new Promise((resolve, reject) => {
    let connected = false;
    let settled = false;
    const chunks: string[] = [];
    const finish = (err: Error | undefined, answer?: KeaAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err !== undefined) reject(err);
      else resolve(answer as KeaAnswer);
    };
    // Kea closes after answering; parsing early (once the text looks complete) also copes
    // with a server that keeps the connection open.
    const tryParse = (final: boolean): void => {
      const text = chunks.join("");
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        if (final)
          finish(
            new KeaTransportError(
              command,
              text === "" ? "connection closed without an answer" : `incomplete answer: ${text.slice(0, 200)}`,
            ),
          );
        return;
      }
      // The control agent wraps answers in a list; the daemon's own socket does not.
      const answer = Array.isArray(parsed) ? (parsed[0] as unknown) : parsed;
      if (!isAnswer(answer)) {
        finish(new KeaTransportError(command, `not a Kea answer: ${text.slice(0, 200)}`));
        return;
      }
      const text2 = typeof answer.text === "string" ? answer.text : "";
      if (answer.result === 0) finish(undefined, { result: 0, text: text2, arguments: answer.arguments });
      else finish(resultError(command, answer.result, text2, answer.arguments));
    };
    const timer = setTimeout(() => {
      finish(new KeaTimeoutError(command, timeoutMs));
    }, timeoutMs);
    const sock: Socket = connect(socketPath);
    sock.setEncoding("utf8");
    sock.on("connect", () => {
      connected = true;
      sock.write(JSON.stringify(args === undefined ? { command } : { command, arguments: args }));
    });
    sock.on("data", (d: string) => {
      chunks.push(d);
      if (d.trimEnd().endsWith("}") || d.trimEnd().endsWith("]")) tryParse(false);
    });
    sock.on("end", () => {
      tryParse(true);
    });
    sock.on("close", () => {
      tryParse(true);
    });
    sock.on("error", (err: NodeJS.ErrnoException) => {
      const code = err.code ?? "";
      if (!connected && (code === "ENOENT" || code === "ECONNREFUSED"))
        finish(new KeaUnreachableError(socketPath, code));
      else finish(new KeaTransportError(command, err.message));
    });
  });
}

function isAnswer(v: unknown): v is { result: number; text?: unknown; arguments?: unknown } {
  return typeof v === "object" && v !== null && typeof (v as { result?: unknown }).result === "number";
}
