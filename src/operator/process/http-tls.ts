// TLS for the operator's HTTP port (docs/security.md#the-operators-http-port): the bearer tokens it
// reviews must not cross the pod network in the clear. Files given (--http-tls-cert/--http-tls-key,
// e.g. a cert-manager or OpenShift service-ca Secret), they are read again every
// TLS_FILE_REFRESH_MS, so a rotated Secret is served without a restart; none given, a self-signed
// certificate made in memory at start, as controller-runtime's secure metrics serving does. Its
// clients cannot verify it: the kubelet's HTTPS probes never verify, a scraper must be told to skip.
import { issueSelfSignedServer } from "../../pki/issue.js";
import { SYSTEM_CLOCK, type Clock } from "../../util/clock.js";
import { pollTlsFiles, TLS_FILE_REFRESH_MS } from "../../xds/server/tls.js";

/** A PEM certificate chain and its private key. */
export interface TlsKeyPair {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/** What the HTTP port serves over TLS, and how it changes. */
export interface HttpTls {
  readonly first: TlsKeyPair;
  /** Nobody but this process vouches for the certificate. */
  readonly selfSigned: boolean;
  /** Hands each later pair (a rotated file) to `update`, until stop(). */
  onChange(update: (next: TlsKeyPair) => void): void;
  stop(): void;
}

/** A self-signed certificate lives this long; its clients verify nothing, expiry included. */
export const SELF_SIGNED_LIFETIME_MS = 365 * 24 * 3600_000;

/** The certificate and key of `files`, read now (throws naming an unreadable file) and polled. */
export function httpTlsFromFiles(
  files: { readonly cert: string; readonly key: string },
  refreshMs = TLS_FILE_REFRESH_MS,
  clock: Clock = SYSTEM_CLOCK,
): HttpTls {
  let update: ((next: TlsKeyPair) => void) | undefined;
  const polled = pollTlsFiles(
    files,
    "the HTTP port (--http-tls-cert, --http-tls-key)",
    (next) => {
      update?.(next);
    },
    refreshMs,
    clock,
  );
  return {
    first: polled.first,
    selfSigned: false,
    onChange: (u) => {
      update = u;
    },
    stop: polled.stop,
  };
}

/** A certificate for `dnsNames` that this process signs itself; it never changes. */
export async function selfSignedHttpTls(dnsNames: readonly string[], clock: Clock = SYSTEM_CLOCK): Promise<HttpTls> {
  const issued = await issueSelfSignedServer(dnsNames[0] ?? "localhost", dnsNames, {
    now: clock.now(),
    lifetimeMs: SELF_SIGNED_LIFETIME_MS,
  });
  return {
    first: { cert: issued.certPem, key: issued.keyPem },
    selfSigned: true,
    onChange: () => undefined,
    stop: () => undefined,
  };
}
