// TLS and mutual TLS for the xDS port (ADS and introspection share it): server credentials from a
// certificate, key and optional client CA, and the matching client side for `oooi debug` and tests.
import { readFileSync } from "node:fs";
import type { SecureContextOptions } from "node:tls";
import { credentials, ServerCredentials, type ChannelCredentials } from "@grpc/grpc-js";
import { SYSTEM_CLOCK, type Clock, type TimerHandle } from "../../util/clock.js";

/** PEM contents (not paths) of the server's certificate chain and key, and of the client CA. */
export interface ServerTlsOptions {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** CA that signs client certificates: when set, clients must present a certificate it verifies (mTLS). */
  readonly ca?: string | Buffer;
}

/** gRPC server credentials: TLS, or mutual TLS when `ca` is given. */
export function serverCredentials(options: ServerTlsOptions): ServerCredentials {
  const ca = options.ca === undefined ? null : Buffer.from(options.ca);
  return ServerCredentials.createSsl(
    ca,
    [{ cert_chain: Buffer.from(options.cert), private_key: Buffer.from(options.key) }],
    ca !== null,
  );
}

/** PEM contents of what a client trusts and presents. */
export interface ClientTlsOptions {
  /** CA that signs the server's certificate (default: the system roots). */
  readonly ca?: string | Buffer;
  /** Client certificate chain and key, for mTLS; both or neither. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

/** gRPC channel credentials for a TLS (or mTLS, with cert and key) connection to the xDS port. */
export function clientCredentials(options: ClientTlsOptions): ChannelCredentials {
  if ((options.cert === undefined) !== (options.key === undefined))
    throw new Error("a client certificate needs its key, and a key its certificate");
  const buf = (v: string | Buffer | undefined): Buffer | null => (v === undefined ? null : Buffer.from(v));
  return credentials.createSsl(buf(options.ca), buf(options.key), buf(options.cert));
}

/** Paths of PEM files, as given on a command line. */
export interface TlsFiles {
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

/** Reads the PEM files named in `files`; the error names the file that cannot be read. */
export function readTlsFiles(files: TlsFiles): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const read = (what: string, file: string | undefined): Buffer | undefined => {
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(
        `cannot read the TLS ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  };
  const ca = read("CA", files.ca);
  const cert = read("certificate", files.cert);
  const key = read("key", files.key);
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

/** How often certificate files are read again, so a rotated certificate is used without a restart. */
export const TLS_FILE_REFRESH_MS = 10_000;

/** PEM certificate, key and (for mTLS) client CA bundle. */
export interface ServerTlsMaterial {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  readonly ca?: string | Buffer | undefined;
}

function contextOf(material: ServerTlsMaterial): SecureContextOptions {
  return {
    cert: Buffer.from(material.cert),
    key: Buffer.from(material.key),
    ...(material.ca === undefined ? {} : { ca: Buffer.from(material.ca) }),
  };
}

/**
 * Server credentials whose certificate can be replaced while the server runs: update() hands the
 * next certificate (and CA bundle) to grpc-js, which sets it as the secure context of the listening
 * socket, so new connections use it at once and open streams keep theirs. grpc-js' own
 * certificate-provider credentials start without a context until the first asynchronous read and
 * drop the connections that arrive before it; these hold one from the start.
 */
export class RotatingServerCredentials extends ServerCredentials {
  readonly #mutual: boolean;
  #stop: (() => void) | undefined;

  /**
   * With a CA, clients must present a certificate it verifies — unless `clientCertificate` is
   * "optional": then a client without one (or with one the CA does not verify) still connects but
   * has no identity (grpc-js reports a peer certificate only when the TLS socket verified it), so
   * it may call only what needs none, or what its bearer token allows (authz.ts).
   */
  constructor(material: ServerTlsMaterial, options: { readonly clientCertificate?: "required" | "optional" } = {}) {
    const mutual = material.ca !== undefined;
    super(
      { requestCert: mutual, rejectUnauthorized: mutual && options.clientCertificate !== "optional" },
      contextOf(material),
    );
    this.#mutual = mutual;
  }

  /** Replaces the certificate for new connections; mTLS stays mTLS (a CA is required then). */
  update(material: ServerTlsMaterial): void {
    if (this.#mutual && material.ca === undefined) throw new Error("mutual TLS credentials need a client CA");
    this.updateSecureContextOptions(contextOf(material));
  }

  /** Stops re-reading files (see serverCredentialsFromFiles). */
  close(): void {
    this.#stop?.();
    this.#stop = undefined;
  }

  /** @internal */
  onClose(stop: () => void): void {
    this.#stop = stop;
  }

  _equals(other: ServerCredentials): boolean {
    return other === this;
  }
}

/**
 * Server credentials from PEM files (`--xds-tls-cert/--xds-tls-key/--xds-tls-ca`): TLS with cert and
 * key, mutual TLS when a client CA is given too. The files are read again as pollTlsFiles says: a
 * change (a re-mounted Secret, a renewed certificate) serves new connections without a restart.
 * Throws a readable error naming a missing or unreadable file at start.
 */
export function serverCredentialsFromFiles(
  files: TlsFiles & { readonly clientCertificate?: "required" | "optional" },
  refreshMs = TLS_FILE_REFRESH_MS,
  clock: Clock = SYSTEM_CLOCK,
): RotatingServerCredentials {
  const holder: { credentials?: RotatingServerCredentials } = {};
  const polled = pollTlsFiles(
    files,
    "the xDS port",
    (next) => {
      holder.credentials?.update(next);
    },
    refreshMs,
    clock,
  );
  const credentials = new RotatingServerCredentials(polled.first, {
    clientCertificate: files.clientCertificate ?? "required",
  });
  holder.credentials = credentials;
  credentials.onClose(polled.stop);
  return credentials;
}

/**
 * Reads the certificate, key and optional CA of `files` now — throwing a readable error that names a
 * missing or unreadable file, or says that `what` needs both certificate and key — and again every
 * `refreshMs` on `clock`, handing a changed set to `onChange`. A file that cannot be read later (a
 * Secret volume swaps a symlink; a file half-written) keeps the set in use.
 */
export function pollTlsFiles(
  files: TlsFiles,
  what: string,
  onChange: (next: ServerTlsMaterial) => void,
  refreshMs = TLS_FILE_REFRESH_MS,
  clock: Clock = SYSTEM_CLOCK,
): { readonly first: ServerTlsMaterial; readonly stop: () => void } {
  const read = (): ServerTlsMaterial => {
    const { cert, key, ca } = readTlsFiles(files);
    if (cert === undefined || key === undefined)
      throw new Error(`TLS for ${what} needs both a certificate and its key`);
    return { cert, key, ca };
  };
  const first = read();
  let current = first;
  const same = (a: ServerTlsMaterial, b: ServerTlsMaterial): boolean =>
    Buffer.from(a.cert).equals(Buffer.from(b.cert)) &&
    Buffer.from(a.key).equals(Buffer.from(b.key)) &&
    (a.ca === undefined) === (b.ca === undefined) &&
    (a.ca === undefined || b.ca === undefined || Buffer.from(a.ca).equals(Buffer.from(b.ca)));
  let timer: TimerHandle | undefined;
  const poll = (): void => {
    try {
      const next = read();
      if (!same(next, current)) {
        onChange(next);
        current = next;
      }
    } catch {
      // Half-written or missing for a moment: keep serving what is in use.
    }
    timer = clock.setTimeout(poll, refreshMs);
  };
  timer = clock.setTimeout(poll, refreshMs);
  return {
    first,
    stop: () => {
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
