// Sends one command to Kea's unix control socket. Kea 2.2 serves exactly one JSON command per
// connection, so every call opens a fresh connection and reads a single JSON answer.
import { connect } from "node:net";

/** Kea's answer: result 0 ok, 1 error, 2 unsupported, 3 empty (e.g. no leases). */
export interface KeaAnswer {
  readonly result: number;
  readonly text?: string;
  readonly arguments?: Record<string, unknown>;
}

/** Sends `{command, arguments}` and resolves with Kea's parsed answer. */
export function keaCommand(
  socketPath: string,
  command: string,
  args?: Record<string, unknown>,
  timeoutMs = 10_000,
): Promise<KeaAnswer> {
  return new Promise((resolve, reject) => {
    const sock = connect(socketPath);
    let buf = "";
    let done = false;
    const finish = (err: Error | undefined, answer?: KeaAnswer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err !== undefined) reject(err);
      else if (answer !== undefined) resolve(answer);
    };
    // The answer may arrive in pieces; it is complete once it parses (Kea then closes too).
    const tryParse = (final: boolean): void => {
      try {
        const parsed = JSON.parse(buf) as unknown;
        if (isAnswer(parsed)) finish(undefined, parsed);
        else finish(new Error(`not a Kea answer: ${buf.slice(0, 200)}`));
      } catch {
        if (final) finish(new Error(`incomplete answer to ${command}: ${buf.slice(0, 200)}`));
      }
    };
    const timer = setTimeout(() => {
      finish(new Error(`no answer to ${command} within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.setEncoding("utf8");
    sock.on("connect", () => {
      sock.write(JSON.stringify(args === undefined ? { command } : { command, arguments: args }));
    });
    sock.on("data", (d: string) => {
      buf += d;
      tryParse(false);
    });
    sock.on("end", () => {
      tryParse(true);
    });
    sock.on("error", (err) => {
      finish(err);
    });
  });
}

function isAnswer(v: unknown): v is KeaAnswer {
  return typeof v === "object" && v !== null && typeof (v as { result?: unknown }).result === "number";
}
