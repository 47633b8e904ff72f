// The ADS gRPC server: AggregatedDiscoveryService (SotW and Delta) plus the per-type LDS, CDS,
// EDS and RDS services, all driven by one engine reading the snapshot cache. A snapshot change
// wakes only the streams of the node group that changed.
import { randomBytes } from "node:crypto";
import type { PeerCertificate } from "node:tls";
import {
  Server,
  ServerCredentials,
  status as GrpcStatus,
  type ServerDuplexStream,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { SnapshotCache } from "../cache/cache.js";
import { admittedIdentityKey, identityAuthorization, identityKey, type TokenCheck } from "./authz.js";
import { XdsStatus, type XdsStatusView } from "../client-status.js";
import { SILENT_LOGGER, type Logger } from "../../util/logger.js";
import { systemClock, type Clock } from "./clock.js";
import type { DeltaRequest, SotwRequest, WireResponse } from "./codec.js";
import { Interner } from "./intern.js";
import { NodeMemory } from "./memory.js";
import { DISCOVERY_SERVICES, methodDefinitions, type DiscoveryService } from "./services.js";
import { RecentSet } from "./recent-set.js";
import { connectionCap, FILE_HEADROOM, listenCapped, openFilesLimit } from "./listener.js";
import {
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_NAMES_PER_STREAM,
  DEFAULT_MAX_STREAM_AGE_MS,
  DEFAULT_MAX_WARNED_NODES,
} from "./limits.js";
import { Session, type SessionContext, type StreamCall } from "./session.js";
import { SharedResponses } from "./shared.js";

export type { Clock } from "./clock.js";
export { systemClock } from "./clock.js";
export type { StreamCall } from "./session.js";
export { Session } from "./session.js";
export {
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_NAMES_PER_STREAM,
  DEFAULT_MAX_STREAM_AGE_MS,
  DEFAULT_MAX_WARNED_NODES,
} from "./limits.js";

/** Options of the xDS engine (the services, without a listening socket). */
export interface XdsEngineOptions {
  readonly cache: SnapshotCache;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** Status recorder to write to (default: a new one). */
  readonly status?: XdsStatus;
  /** Maximum stream age in ms; 0 disables. Default 30 min. */
  readonly maxStreamAgeMs?: number;
  /** ± fraction of jitter on the maximum age (default 0.1). */
  readonly maxStreamAgeJitter?: number;
  /** Nodes in unknown groups remembered as already warned about (default 1,024; older ones are warned again). */
  readonly maxWarnedNodes?: number;
  /** Resource names one stream may subscribe to (default DEFAULT_MAX_NAMES_PER_STREAM); past it the stream ends with RESOURCE_EXHAUSTED. */
  readonly maxNamesPerStream?: number;
}

/** Options of startXdsServer. */
export interface XdsServerOptions extends XdsEngineOptions {
  /** "host:port"; port 0 picks a free port. Default "127.0.0.1:0". */
  readonly listen?: string;
  /** TLS / mTLS credentials (default insecure). */
  readonly credentials?: ServerCredentials;
  /**
   * Authorize every call by the client certificate's identity (authz.ts); needs mTLS credentials.
   * Default false: plaintext on loopback trusts whoever connects.
   */
  readonly requireIdentity?: boolean;
  /**
   * With requireIdentity: a bearer token this check allows stands for the administrator identity on
   * the administrative services (authz.ts). The credentials must then let a client without a
   * certificate connect (RotatingServerCredentials `clientCertificate: "optional"`).
   */
  readonly tokens?: TokenCheck;
  /**
   * Open connections the port accepts (--xds-max-connections, default DEFAULT_MAX_CONNECTIONS),
   * lowered to leave the process FILE_HEADROOM of its open-files limit; more are closed at once.
   */
  readonly maxConnections?: number;
}

/** A running xDS server. */
export interface XdsServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /** Per-stream and per-node sync state, push history and events, for introspection. */
  readonly status: XdsStatusView;
  /** Connections the port accepts (the cap in force). */
  readonly maxConnections: number;
  /** The underlying gRPC server (introspection services may be added to it before traffic). */
  readonly grpcServer: Server;
  /** Number of open xDS streams. */
  streamCount(): number;
  /** Ends every stream (UNAVAILABLE, so clients reconnect) and stops listening. */
  close(): Promise<void>;
}

/** Why a node receives nothing: its node.cluster names no group the cache holds. */
export function unknownGroupMessage(node: string, group: string, known: readonly string[]): string {
  const list = known.length === 0 ? "none yet" : known.join(", ");
  return `node ${node}: node.cluster "${group}" is no known node group, so nothing is sent to it; known groups: ${list}`;
}

/** The discovery services over one cache; mount on any grpc-js Server with addTo(). */
export class XdsEngine {
  /** The status recorder this engine writes. */
  readonly status: XdsStatus;
  readonly #sessions = new Set<Session>();
  readonly #groups = new Map<string, Set<Session>>();
  readonly #ctx: SessionContext;
  readonly #unsubscribe: () => void;
  readonly #logger: Logger;

  constructor(options: XdsEngineOptions) {
    this.#logger = options.logger ?? SILENT_LOGGER;
    this.status = options.status ?? new XdsStatus({ logger: this.#logger });
    const prefix = randomBytes(6).toString("base64url");
    let nonces = 0;
    let streams = 0;
    const clock = options.clock ?? systemClock;
    this.#ctx = {
      cache: options.cache,
      status: this.status,
      logger: this.#logger,
      clock,
      nonce: () => {
        nonces += 1;
        return { seq: nonces, text: `${prefix}-${nonces.toString(36)}` };
      },
      shared: new SharedResponses((fn) => {
        clock.defer(fn);
      }),
      streamId: () => `${prefix}-s${(streams += 1).toString(36)}`,
      maxStreamAgeMs: options.maxStreamAgeMs ?? DEFAULT_MAX_STREAM_AGE_MS,
      maxStreamAgeJitter: options.maxStreamAgeJitter ?? 0.1,
      maxNamesPerStream: options.maxNamesPerStream ?? DEFAULT_MAX_NAMES_PER_STREAM,
      memory: new NodeMemory(),
      strings: new Interner(),
      join: (s) => {
        const group = s.group;
        if (group === undefined) return;
        this.#warnUnknownGroup(s.node?.id ?? "", group);
        let set = this.#groups.get(group);
        if (!set) this.#groups.set(group, (set = new Set()));
        set.add(s);
      },
      leave: (s) => {
        this.#sessions.delete(s);
        const group = s.group;
        if (group === undefined) return;
        const set = this.#groups.get(group);
        set?.delete(s);
        if (set?.size === 0) this.#groups.delete(group);
      },
    };
    this.#warned = new RecentSet(options.maxWarnedNodes ?? DEFAULT_MAX_WARNED_NODES);
    this.#unsubscribe = options.cache.subscribe((group) => {
      this.#wake(group);
    });
  }

  /** (group, node) pairs warned about; bounded: both are the client's to choose. */
  readonly #warned: RecentSet;

  /**
   * A mistyped node.cluster otherwise only shows as "nothing sent": said at warn once per node
   * (again once the node was forgotten among many newer ones).
   */
  #warnUnknownGroup(node: string, group: string): void {
    const known = this.#ctx.cache.groups();
    const key = JSON.stringify([group, node]);
    if (known.includes(group) || this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#logger.warn({ node, group, known }, unknownGroupMessage(node, group, known));
  }

  /** Open streams. */
  streamCount(): number {
    return this.#sessions.size;
  }

  /** Adds the ADS and per-type discovery services to `server`. */
  addTo(server: Server): void {
    for (const service of DISCOVERY_SERVICES) {
      const defs = methodDefinitions(service);
      const impl: UntypedServiceImplementation = {
        [service.sotwMethod]: (call: ServerDuplexStream<SotwRequest, WireResponse>) => {
          this.#attach(call, "sotw", service);
        },
        [service.deltaMethod]: (call: ServerDuplexStream<DeltaRequest, WireResponse>) => {
          this.#attach(call, "delta", service);
        },
      };
      server.addService({ [service.sotwMethod]: defs.sotw, [service.deltaMethod]: defs.delta }, impl);
    }
  }

  /**
   * Opens a session on any transport (grpc-js calls use this; tests and in-process clients may
   * too). `service` is a label from DISCOVERY_SERVICES ("ads" unless a per-type service).
   */
  openSession(call: StreamCall, protocol: "sotw" | "delta", service = "ads"): Session {
    const def = DISCOVERY_SERVICES.find((d) => d.label === service);
    if (!def) throw new Error(`unknown discovery service ${service}`);
    const session = new Session(this.#ctx, call, protocol, def.label, def.typeUrl);
    this.#sessions.add(session);
    return session;
  }

  /** Ends every stream with UNAVAILABLE and stops listening to the cache. */
  close(): void {
    this.#unsubscribe();
    for (const s of [...this.#sessions]) s.fail(GrpcStatus.UNAVAILABLE, "xDS server shutting down");
  }

  // Only the changed group's streams are woken; each builds its response from the new snapshot.
  #wake(group: string): void {
    for (const s of this.#groups.get(group) ?? []) {
      try {
        s.schedule();
      } catch (e) {
        this.#logger.error({ err: e, stream: s.id }, "xDS push failed");
        s.fail(GrpcStatus.INTERNAL, "internal error");
      }
    }
  }

  #attach<Req extends SotwRequest | DeltaRequest>(
    call: ServerDuplexStream<Req, WireResponse>,
    protocol: "sotw" | "delta",
    service: DiscoveryService,
  ): void {
    const session = this.openSession(new GrpcStreamCall(call), protocol, service.label);
    // Few closures per stream, sharing one context: this runs once per idle Envoy.
    call.on("data", (req: Req) => {
      try {
        if (protocol === "sotw") session.handleSotw(req as SotwRequest);
        else session.handleDelta(req as DeltaRequest);
      } catch (e) {
        this.#failed(session, e);
      }
    });
    call.on("drain", () => {
      try {
        session.drained();
      } catch (e) {
        this.#failed(session, e);
      }
    });
    call.on("end", () => {
      session.clientEnded();
    });
    const gone = (reason: string): void => {
      session.transportClosed(reason);
      this.#sessions.delete(session);
    };
    call.on("cancelled", () => {
      gone("the client cancelled the stream");
    });
    call.on("close", () => {
      gone("the connection closed");
    });
    call.on("error", (e: Error) => {
      gone(`transport error: ${e.message}`);
    });
  }

  #failed(session: Session, e: unknown): void {
    this.#logger.error({ err: e, stream: session.id }, "xDS request handling failed");
    session.fail(GrpcStatus.INTERNAL, "internal error");
  }
}

/** A grpc-js duplex call as a session's transport (a class: no closures per stream). */
class GrpcStreamCall implements StreamCall {
  readonly peer: string;
  readonly identity: string;

  constructor(private readonly call: ServerDuplexStream<unknown, WireResponse>) {
    this.peer = safePeer(call);
    // Read once per stream: what the authorization interceptor admitted the call as, when it ran.
    this.identity = admittedIdentityKey(call.metadata) ?? identityKey(safeAuth(call));
  }

  write(response: WireResponse): boolean {
    return this.call.write(response);
  }

  end(): void {
    this.call.end();
  }

  fail(code: GrpcStatus, details: string): void {
    this.call.emit("error", { code, details });
  }
}

// The peer certificate a TLS connection verified; undefined on plaintext (see identityKey).
function safeAuth(call: ServerDuplexStream<unknown, unknown>): PeerCertificate | undefined {
  try {
    return call.getAuthContext().sslPeerCertificate;
  } catch {
    return undefined;
  }
}

function safePeer(call: ServerDuplexStream<unknown, unknown>): string {
  try {
    return call.getPeer();
  } catch {
    return "unknown";
  }
}

/** Starts the ADS server on `listen` and returns once it is bound. */
export async function startXdsServer(options: XdsServerOptions): Promise<XdsServer> {
  const engine = new XdsEngine(options);
  const logger = options.logger ?? SILENT_LOGGER;
  const discoveryPaths = new Set(
    DISCOVERY_SERVICES.flatMap((s) => {
      const defs = methodDefinitions(s);
      return [defs.sotw.path, defs.delta.path];
    }),
  );
  const server = new Server({
    ...(options.requireIdentity === true
      ? {
          interceptors: [
            identityAuthorization({
              logger,
              discoveryPaths,
              ...(options.tokens === undefined ? {} : { tokens: options.tokens }),
            }),
          ],
        }
      : {}),
    // Envoy keeps ADS streams open for a long time; let gRPC keepalives find dead peers.
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
    "grpc.max_send_message_length": -1,
  });
  engine.addTo(server);
  const listen = options.listen ?? "127.0.0.1:0";
  const requested = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const limit = openFilesLimit();
  const cap = connectionCap(requested, limit);
  if (cap < requested)
    logger.warn(
      { requested, openFilesLimit: limit, maxConnections: cap },
      `xDS port: at most ${String(cap)} connections, not ${String(requested)} (--xds-max-connections): the open-files limit ${String(limit)} leaves ${String(FILE_HEADROOM)} to the rest of the process`,
    );
  const listener = await listenCapped(
    server,
    options.credentials ?? ServerCredentials.createInsecure(),
    listen,
    cap,
    logger,
  );
  const port = listener.port;
  // The command logs the one "listening" line users read (with its address); this one is for debugging.
  logger.debug(
    { listen, port, requireIdentity: options.requireIdentity === true, maxConnections: cap },
    "xDS server bound",
  );
  return {
    port,
    maxConnections: cap,
    status: engine.status,
    grpcServer: server,
    streamCount: () => engine.streamCount(),
    close: async () => {
      engine.close();
      const unbound = listener.close();
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
        // Streams were failed above; anything still open is cut.
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000).unref();
      });
      listener.destroy();
      await unbound;
    },
  };
}
