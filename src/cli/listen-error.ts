// A listener that cannot bind → one line naming the address and the flag that moves it (exit 2),
// never a stack trace. Node reports EADDRINUSE as `code`; grpc-js only inside its message
// ("No address added … [listen EADDRINUSE: address already in use 127.0.0.1:18000]").
import { createServer } from "node:net";

/**
 * Binds `address` once and lets it go, rejecting as the bind fails: a listener that must wait for
 * something else first (the operator's xDS server, for its API server) still fails at start on a
 * busy or forbidden address, not minutes later.
 */
export function checkListenable(address: { readonly host: string; readonly port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.close(() => {
        resolve();
      });
    });
  });
}

/** A listener of a command failed to bind; `flag` is the option that chose its address. */
export class ListenError extends Error {
  readonly flag: string;
  readonly address: string;

  constructor(flag: string, address: string, cause: unknown) {
    super(listenFailureMessage(flag, address, cause), { cause });
    this.name = "ListenError";
    this.flag = flag;
    this.address = address;
  }
}

/** Rejects with a ListenError for `flag` when `bound` fails. */
export function tagListen<T>(bound: Promise<T>, flag: string, address: string): Promise<T> {
  return bound.catch((e: unknown) => {
    throw new ListenError(flag, address, e);
  });
}

/** The errno code a bind failure carries, as a property or (grpc-js) in its text. */
export function bindErrorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return /\b(EADDRINUSE|EADDRNOTAVAIL|EACCES)\b/.exec(e instanceof Error ? e.message : String(e))?.[1];
}

/** "127.0.0.1:18000 is already in use (--xds-listen): …; move it with --xds-listen HOST:PORT …". */
export function listenFailureMessage(flag: string, address: string, e: unknown): string {
  const move = `move it with ${flag} HOST:PORT (port 0 picks a free one)`;
  switch (bindErrorCode(e)) {
    case "EADDRINUSE":
      return `${address} is already in use (${flag}): another process — perhaps another oooi — listens there; ${move}`;
    case "EADDRNOTAVAIL":
      return `cannot listen on ${address} (${flag}): no interface of this host has that address; ${move}`;
    case "EACCES":
      return `cannot listen on ${address} (${flag}): permission denied (ports below 1024 need privileges); ${move}`;
    default:
      return `cannot listen on ${address} (${flag}): ${e instanceof Error ? e.message : String(e)}; ${move}`;
  }
}
