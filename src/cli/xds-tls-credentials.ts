// What the --tls* flags of debug, verify and explain (xds-tls-flags.ts) ask for, as gRPC credentials.
import type { ChannelCredentials } from "@grpc/grpc-js";
import { clientCredentials, readTlsFiles } from "../xds/server/tls.js";
import type { XdsTlsOptions } from "./xds-tls-flags.js";

/** The channel credentials the flags ask for; undefined for plaintext. Throws naming an unreadable file. */
export function xdsCredentials(opts: XdsTlsOptions): ChannelCredentials | undefined {
  const tls = opts.tls === true || opts.tlsCa !== undefined || opts.tlsCert !== undefined || opts.tlsKey !== undefined;
  if (!tls) return undefined;
  return clientCredentials(readTlsFiles({ ca: opts.tlsCa, cert: opts.tlsCert, key: opts.tlsKey }));
}
