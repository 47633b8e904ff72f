// TLS and mutual TLS for the xDS port (ADS and introspection share it): server credentials from a
// certificate, key and optional client CA, and the matching client side for `oooi debug` and tests.
import { readFileSync } from "node:fs";
import { credentials, experimental, ServerCredentials, type ChannelCredentials } from "@grpc/grpc-js";

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
export const TLS_FILE_REFRESH_MS = 30_000;

/**
 * Server credentials from PEM files (`--xds-tls-cert/--xds-tls-key/--xds-tls-ca`): TLS with cert and
 * key, mutual TLS when a client CA is given too. The files are read again every `refreshMs` (grpc-js'
 * FileWatcherCertificateProvider), so a rotated certificate (a re-mounted Secret) serves new
 * connections without a restart. Throws a readable error naming a missing or unreadable file.
 */
export function serverCredentialsFromFiles(files: TlsFiles, refreshMs = TLS_FILE_REFRESH_MS): ServerCredentials {
  if (files.cert === undefined || files.key === undefined)
    throw new Error("TLS for the xDS port needs both a certificate and its key");
  readTlsFiles(files); // fail now, with the file's name, rather than refuse every handshake later
  const provider = new experimental.FileWatcherCertificateProvider({
    certificateFile: files.cert,
    privateKeyFile: files.key,
    ...(files.ca === undefined ? {} : { caCertificateFile: files.ca }),
    refreshIntervalMs: refreshMs,
  });
  // One provider serves both the identity and the CA (grpc-js' factory takes them in either order).
  return experimental.createCertificateProviderServerCredentials(
    provider,
    files.ca === undefined ? null : provider,
    files.ca !== undefined,
  );
}

/** PEM certificate, key and client CA handed over in process (the operator's own CA issues them). */
export interface ServerTlsMaterial {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  readonly ca: string | Buffer;
}

/**
 * A grpc-js certificate provider fed in process: the operator passes each rotated serving
 * certificate (and CA bundle) to update(); new connections use it at once, open streams keep theirs.
 */
export class RotatingCertificates implements experimental.CertificateProvider {
  #identity: experimental.IdentityCertificateUpdate;
  #ca: experimental.CaCertificateUpdate;
  readonly #identityListeners = new Set<experimental.IdentityCertificateUpdateListener>();
  readonly #caListeners = new Set<experimental.CaCertificateUpdateListener>();

  constructor(initial: ServerTlsMaterial) {
    this.#identity = { certificate: Buffer.from(initial.cert), privateKey: Buffer.from(initial.key) };
    this.#ca = { caCertificate: Buffer.from(initial.ca) };
  }

  /** Server credentials that require a client certificate signed by the current CA bundle. */
  serverCredentials(): ServerCredentials {
    return experimental.createCertificateProviderServerCredentials(this, this, true);
  }

  update(material: ServerTlsMaterial): void {
    this.#identity = { certificate: Buffer.from(material.cert), privateKey: Buffer.from(material.key) };
    this.#ca = { caCertificate: Buffer.from(material.ca) };
    for (const listener of this.#identityListeners) listener(this.#identity);
    for (const listener of this.#caListeners) listener(this.#ca);
  }

  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.#caListeners.add(listener);
    listener(this.#ca);
  }
  removeCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.#caListeners.delete(listener);
  }
  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.#identityListeners.add(listener);
    listener(this.#identity);
  }
  removeIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.#identityListeners.delete(listener);
  }
}
