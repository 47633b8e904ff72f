// The ADS port as `serve` runs it: the discovery services over a cache, with CSDS, oooi.debug.v1,
// health and reflection beside them, over TLS read from files when given. Started on the ADS
// thread (./worker.ts), or on the calling thread where no compiled worker exists (the tests run the
// TypeScript sources).
import type { Logger } from "pino";
import type { SnapshotCache } from "../cache/cache.js";
import type { XdsStatus } from "../client-status.js";
import { addIntrospection } from "../introspect/index.js";
import type { ServerVersion } from "../introspect/debug-service.js";
import { startXdsServer, type XdsServer } from "../server/index.js";
import { serverCredentialsFromFiles, type TlsFiles } from "../server/tls.js";

/** What the ADS port is started with; crosses to the ADS thread as is. */
export interface XdsServiceOptions {
  /** "host:port" (--xds-listen; port 0 picks one). */
  readonly listen: string;
  /** Certificate and key (TLS), and a client CA (mutual TLS); read again as they change. */
  readonly tls?: TlsFiles;
  /** Authorize every call by the client certificate's identity (authz.ts). */
  readonly requireIdentity: boolean;
  readonly maxConnections?: number;
  readonly maxNamesPerStream?: number;
  /** Which oooi answers GetVersion. */
  readonly server: ServerVersion;
}

/** A running ADS port. */
export interface XdsService {
  readonly server: XdsServer;
  /** Says NOT_SERVING on health, ends every stream, stops listening and reading the TLS files. */
  close(): Promise<void>;
}

/** Binds the ADS port over `cache`, recording into `status`; rejects as the bind or the TLS files fail. */
export async function startXdsService(
  cache: SnapshotCache,
  status: XdsStatus,
  opts: XdsServiceOptions,
  logger: Logger,
): Promise<XdsService> {
  const credentials = opts.tls === undefined ? undefined : serverCredentialsFromFiles(opts.tls);
  let server: XdsServer;
  try {
    server = await startXdsServer({
      cache,
      status,
      listen: opts.listen,
      logger,
      ...(credentials === undefined ? {} : { credentials }),
      requireIdentity: opts.requireIdentity,
      ...(opts.maxConnections === undefined ? {} : { maxConnections: opts.maxConnections }),
      ...(opts.maxNamesPerStream === undefined ? {} : { maxNamesPerStream: opts.maxNamesPerStream }),
    });
  } catch (e) {
    credentials?.close();
    throw e;
  }
  // CSDS, oooi.debug.v1, health and reflection share the ADS port (`oooi debug nodes`).
  const introspection = addIntrospection(server.grpcServer, { status, cache, server: opts.server });
  return {
    server,
    close: async () => {
      introspection.setServing(false);
      await server.close();
      credentials?.close();
    },
  };
}
