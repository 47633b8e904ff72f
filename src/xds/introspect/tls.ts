// TLS and mutual TLS for the xDS port (ADS and introspection share it): server credentials from a
// certificate, key and optional client CA, and the matching client side for `oooi debug` and tests.
import { readFileSync } from "node:fs";
import { credentials, ServerCredentials, type ChannelCredentials } from "@grpc/grpc-js";

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

/**
 * Server credentials from PEM files (`--xds-tls-cert/--xds-tls-key/--xds-tls-ca`): TLS with cert and
 * key, mutual TLS when a client CA is given too. Throws a readable error naming a missing or unreadable file.
 */
export function serverCredentialsFromFiles(files: TlsFiles): ServerCredentials {
  if (files.cert === undefined || files.key === undefined)
    throw new Error("TLS for the xDS port needs both a certificate and its key");
  const { cert, key, ca } = readTlsFiles(files);
  if (cert === undefined || key === undefined)
    throw new Error("TLS for the xDS port needs both a certificate and its key");
  return serverCredentials({ cert, key, ...(ca ? { ca } : {}) });
}
