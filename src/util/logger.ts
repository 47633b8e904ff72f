// The one logger shape every module takes: pino's (a context object, then a message), so the
// composition root passes its pino logger and tests pass a plain object. A module that uses only
// some levels asks for Pick<Logger, …>.

/** A pino-compatible logger. */
export interface Logger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything. */
export const SILENT_LOGGER: Logger = { debug() {}, info() {}, warn() {}, error() {} };
