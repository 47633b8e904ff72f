// The commands' logger: human-readable lines for a person at a terminal, JSON lines (one object per
// line, for log collectors) otherwise or when asked.
import { pino, type Logger } from "pino";
import { build as prettyStream } from "pino-pretty";
import type { LogFormat } from "./options.js";

/** The explicit choice wins; a terminal gets pretty lines, a pipe or file JSON. */
export function logFormat(flag: LogFormat | undefined, stderrIsTTY: boolean): LogFormat {
  return flag ?? (stderrIsTTY ? "pretty" : "json");
}

/** A logger writing synchronously to stderr, so a fatal line is out before process.exit. */
export function cliLogger(cmd: string, level: string, flag: LogFormat | undefined): Logger {
  const tty = process.stderr.isTTY;
  const options = { level, base: { cmd } };
  if (logFormat(flag, tty) === "json") return pino(options, pino.destination(2));
  return pino(
    options,
    prettyStream({
      destination: 2,
      sync: true,
      colorize: tty && (process.env["NO_COLOR"] ?? "") === "",
      translateTime: "SYS:HH:MM:ss.l",
      singleLine: true,
      // The person ran the command; pid, host and command name on every line are noise at a terminal.
      ignore: "pid,hostname,cmd",
    }),
  );
}
