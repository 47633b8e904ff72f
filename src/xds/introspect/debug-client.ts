// Client of oooi.debug.v1.DebugService (what `oooi debug` and tests use): promise-returning calls
// with a deadline, and connection failures turned into one readable error.
import {
  credentials,
  makeClientConstructor,
  Metadata,
  status as GrpcStatus,
  type ChannelCredentials,
  type Client,
  type ServiceError,
} from "@grpc/grpc-js";
import { DEBUG_SERVICE, loadDebugDefinition, service } from "./protos.js";
import type {
  GetNodeConfigRequest,
  GetVersionResponse,
  ListFleetRequest,
  ListFleetResponse,
  ListNodesRequest,
  NodeMessage,
  PushHistoryRequest,
  PushMessage,
  TypeConfigMessage,
} from "./debug-service.js";

export type {
  FleetNodeMessage,
  FleetTypeStateMessage,
  GetNodeConfigRequest,
  GetVersionResponse,
  ListFleetRequest,
  ListFleetResponse,
  ListNodesRequest,
  NackMessage,
  NodeMessage,
  PushHistoryRequest,
  PushMessage,
  ReplicaMessage,
  ResourceMessage,
  StreamMessage,
  TypeConfigMessage,
  TypeStateMessage,
} from "./debug-service.js";

/** The xDS server could not be reached (refused, TLS failure, or no answer before the deadline). */
/** The server answered NOT_FOUND (e.g. GetNodeConfig for a node id it does not know). */
export class XdsNotFoundError extends Error {}

export class XdsUnreachableError extends Error {
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`cannot reach the xDS server at ${address}: ${reason}`);
  }
}

/** The server refused the caller: UNAUTHENTICATED (no or a bad token) or PERMISSION_DENIED (not allowed). */
export class DebugRefusedError extends Error {
  constructor(
    readonly code: GrpcStatus,
    readonly details: string,
  ) {
    super(details);
  }
}

/** Options of a DebugClient. */
export interface DebugClientOptions {
  /** "host:port" of the xDS server. */
  readonly address: string;
  /** TLS credentials (default: plaintext). */
  readonly credentials?: ChannelCredentials;
  /** Per-call deadline in ms (default 5000). */
  readonly timeoutMs?: number;
  /**
   * Sent as `authorization: Bearer <token>` on every call (needs TLS credentials): a Kubernetes
   * token the operator checks instead of the admin certificate (docs/security.md "Who may debug").
   */
  readonly token?: string;
  /** The name the server's certificate must carry when `address` is not it (a port-forward's 127.0.0.1:port). */
  readonly serverName?: string;
}

type Unary = (req: object, options: { deadline: Date }, cb: (err: ServiceError | null, res?: unknown) => void) => void;

/** A connection to oooi.debug.v1.DebugService. */
export class DebugClient {
  readonly #client: Client & Record<string, Unary>;
  readonly #timeoutMs: number;

  constructor(readonly options: DebugClientOptions) {
    const Ctor = makeClientConstructor(service(loadDebugDefinition(), DEBUG_SERVICE), DEBUG_SERVICE);
    const token = options.token;
    const channel = options.credentials ?? credentials.createInsecure();
    const withToken =
      token === undefined
        ? channel
        : credentials.combineChannelCredentials(
            channel,
            credentials.createFromMetadataGenerator((_params, done) => {
              const metadata = new Metadata();
              metadata.set("authorization", `Bearer ${token}`);
              done(null, metadata);
            }),
          );
    const serverName = options.serverName;
    this.#client = new Ctor(
      options.address,
      withToken,
      serverName === undefined
        ? {}
        : { "grpc.ssl_target_name_override": serverName, "grpc.default_authority": serverName },
    ) as Client & Record<string, Unary>;
    this.#timeoutMs = options.timeoutMs ?? 5000;
  }

  /** Connected nodes (and recently disconnected ones when asked). */
  async listNodes(req: ListNodesRequest = {}): Promise<NodeMessage[]> {
    return (await this.#call<{ nodes: NodeMessage[] }>("ListNodes", req)).nodes;
  }

  /** What a node holds, per stream and type. */
  async nodeConfig(req: GetNodeConfigRequest): Promise<{ node: NodeMessage; configs: TypeConfigMessage[] }> {
    return this.#call("GetNodeConfig", req);
  }

  /** Recent pushes, oldest first. */
  async pushHistory(req: PushHistoryRequest = {}): Promise<PushMessage[]> {
    return (await this.#call<{ pushes: PushMessage[] }>("PushHistory", req)).pushes;
  }

  /** Every node of the operator's fleet with its replica (empty replica off an operator). */
  async listFleet(req: ListFleetRequest = {}): Promise<ListFleetResponse> {
    return this.#call("ListFleet", req);
  }

  /** Which oooi answers. */
  async version(): Promise<GetVersionResponse> {
    return this.#call("GetVersion", {});
  }

  /** Closes the channel. */
  close(): void {
    this.#client.close();
  }

  async #call<T>(method: string, req: object): Promise<T> {
    const fn = this.#client[method];
    if (fn === undefined) throw new Error(`${DEBUG_SERVICE} has no method ${method}`);
    return new Promise<T>((resolve, reject) => {
      fn.call(this.#client, req, { deadline: new Date(Date.now() + this.#timeoutMs) }, (err, res) => {
        if (err) reject(toError(this.options.address, err));
        else resolve(res as T);
      });
    });
  }
}

function toError(address: string, err: ServiceError): Error {
  if (err.code === GrpcStatus.UNAVAILABLE)
    // grpc-js appends an empty "Resolution note:" to a refused connection's details.
    return new XdsUnreachableError(address, (err.details || "unavailable").replace(/\.? *Resolution note: *$/, ""));
  if (err.code === GrpcStatus.DEADLINE_EXCEEDED)
    return new XdsUnreachableError(address, "no answer before the deadline");
  if (err.code === GrpcStatus.NOT_FOUND) return new XdsNotFoundError(err.details || "not found");
  if (err.code === GrpcStatus.UNAUTHENTICATED || err.code === GrpcStatus.PERMISSION_DENIED)
    return new DebugRefusedError(err.code, err.details || err.message);
  if (err.code === GrpcStatus.UNIMPLEMENTED)
    return new Error(
      `the server at ${address} does not serve ${DEBUG_SERVICE} (not an oooi xDS server, or an older one)`,
    );
  return new Error(err.details || err.message);
}
