// Typed failures of a Kea control-socket command: transport problems (Kea absent, slow, or the
// connection broke) versus an answer whose result code says no, carrying Kea's own text.

/** Kea's answer codes (Kea ARM "Management API"): 0 success, 1 error, 2 unsupported command, 3 empty result. */
export const KEA_RESULT = { success: 0, error: 1, unsupported: 2, empty: 3 } as const;

/** Base of every failure raised by the control-socket client. */
export class KeaError extends Error {
  override readonly name: string = "KeaError";
}

/** The control socket does not exist or nobody listens on it (ENOENT / ECONNREFUSED): Kea is not running (yet). */
export class KeaUnreachableError extends KeaError {
  override readonly name = "KeaUnreachableError";
  constructor(
    readonly socketPath: string,
    readonly code: string,
  ) {
    super(`Kea not reachable on ${socketPath} (${code})`);
  }
}

/** Kea did not answer the command within the per-command limit. */
export class KeaTimeoutError extends KeaError {
  override readonly name = "KeaTimeoutError";
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {
    super(`Kea did not answer ${command} within ${timeoutMs} ms`);
  }
}

/** The connection broke or the answer was not a Kea answer (Kea crashed mid-command, wrong socket). */
export class KeaTransportError extends KeaError {
  override readonly name = "KeaTransportError";
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(`${command}: ${message}`);
  }
}

/** Kea answered with a non-zero result code; `text` is Kea's own explanation. */
export class KeaResultError extends KeaError {
  override readonly name: string = "KeaResultError";
  constructor(
    readonly command: string,
    readonly result: number,
    readonly text: string,
    readonly args: unknown,
  ) {
    super(`${command} failed (result ${result}): ${text}`);
  }
}

/** Result 1: Kea refused or failed the command (e.g. an invalid configuration). */
export class KeaCommandError extends KeaResultError {
  override readonly name = "KeaCommandError";
}

/** Result 2: the command is unknown to this Kea (or its hook is not loaded). */
export class KeaUnsupportedError extends KeaResultError {
  override readonly name = "KeaUnsupportedError";
}

/** Result 3: the command succeeded but found nothing (e.g. lease4-get-all with no leases). */
export class KeaEmptyError extends KeaResultError {
  override readonly name = "KeaEmptyError";
}

/** The typed error for a non-zero result code (unknown codes count as errors). */
export function resultError(command: string, result: number, text: string, args: unknown): KeaResultError {
  if (result === KEA_RESULT.unsupported) return new KeaUnsupportedError(command, result, text, args);
  if (result === KEA_RESULT.empty) return new KeaEmptyError(command, result, text, args);
  return new KeaCommandError(command, result, text, args);
}

/** Whether retrying later may succeed: Kea absent, slow or restarting, as opposed to a refusal. */
export function isTransient(err: unknown): boolean {
  return err instanceof KeaUnreachableError || err instanceof KeaTimeoutError || err instanceof KeaTransportError;
}
