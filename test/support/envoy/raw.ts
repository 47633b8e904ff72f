// A bare ADS (or per-type) stream for protocol tests that need exact control over every request:
// stale nonces, error_detail, initial_resource_versions. Responses queue up until read.
import { Client, credentials, Metadata, type ChannelCredentials, type ClientDuplexStream } from "@grpc/grpc-js";
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  encodeDeltaRequest,
  encodeSotwRequest,
  type DeltaRequestInit,
  type DeltaResponse,
  type SotwRequestInit,
  type SotwResponse,
} from "./wire.js";

/** gRPC method paths of the discovery services. */
export const METHODS = {
  adsSotw: "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
  adsDelta: "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources",
  ldsSotw: "/envoy.service.listener.v3.ListenerDiscoveryService/StreamListeners",
  ldsDelta: "/envoy.service.listener.v3.ListenerDiscoveryService/DeltaListeners",
  cdsSotw: "/envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters",
  cdsDelta: "/envoy.service.cluster.v3.ClusterDiscoveryService/DeltaClusters",
  edsSotw: "/envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints",
  rdsSotw: "/envoy.service.route.v3.RouteDiscoveryService/StreamRoutes",
} as const;

/**
 * HTTP/2 receive windows Envoy advertises as an xDS client: `Http2ProtocolOptions`
 * `initial_stream_window_size` and `initial_connection_window_size` both default to 268435456
 * (256 MiB) and a bootstrap that sets neither gets those
 * (https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/core/v3/protocol.proto#config-core-v3-http2protocoloptions).
 * grpc-js's `grpc-node.flow_control_window` sets both; without it a client advertises 65,535 and
 * a server pushing a megabyte-sized listener waits on WINDOW_UPDATEs no Envoy would make it wait for.
 */
export const ENVOY_WINDOW_BYTES = 268_435_456;

/** Channel options of a stand-in connection: its own connection, Envoy's windows. */
export const ENVOY_CHANNEL_OPTIONS = {
  // Own connection per stream, like separate Envoy processes.
  "grpc.use_local_subchannel_pool": 1,
  "grpc-node.flow_control_window": ENVOY_WINDOW_BYTES,
} as const;

/** How a stream ended. */
export interface StreamEnd {
  readonly code: number;
  readonly details: string;
}

/** A raw bidi discovery stream with a queue of decoded responses. */
export class RawStream<Req, Res> {
  readonly received: Res[] = [];
  #read = 0;
  #waiters: (() => void)[] = [];
  #ended: StreamEnd | undefined;
  readonly #call: ClientDuplexStream<Req, Res>;

  constructor(
    readonly client: Client,
    method: string,
    serialize: (r: Req) => Buffer,
    deserialize: (b: Buffer) => Res,
  ) {
    this.#call = client.makeBidiStreamRequest(method, serialize, deserialize, new Metadata());
    this.#call.on("data", (res: Res) => {
      this.received.push(res);
      this.#notify();
    });
    this.#call.on("status", (s: StreamEnd) => {
      this.#ended = { code: s.code, details: s.details };
      this.#notify();
    });
    this.#call.on("error", () => {
      /* reported through "status" */
    });
  }

  /** Writes one request. */
  send(req: Req): void {
    this.#call.write(req);
  }

  /** The next unread response (waits for it; fails after `timeoutMs` or when the stream ends). */
  async next(timeoutMs = 5000): Promise<Res> {
    await this.#until(() => this.received.length > this.#read, timeoutMs, "a response");
    const res = this.received[this.#read];
    this.#read += 1;
    return res as Res;
  }

  /** Unread responses so far (without waiting). */
  unread(): Res[] {
    return this.received.slice(this.#read);
  }

  /** Resolves with the stream's final status. */
  async ended(timeoutMs = 5000): Promise<StreamEnd> {
    await this.#until(() => this.#ended !== undefined, timeoutMs, "the stream to end");
    return this.#ended as StreamEnd;
  }

  /** Half-closes and cancels the stream and closes its channel. */
  close(): void {
    this.#call.cancel();
    this.client.close();
  }

  #notify(): void {
    const ws = this.#waiters;
    this.#waiters = [];
    for (const w of ws) w();
  }

  async #until(ready: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (this.#ended && !ready())
        throw new Error(`stream ended (${this.#ended.code} ${this.#ended.details}) while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

/** A SotW stream (ADS by default). */
export type SotwStream = RawStream<SotwRequestInit, SotwResponse>;
/** A Delta stream (ADS by default). */
export type DeltaStream = RawStream<DeltaRequestInit, DeltaResponse>;

function newClient(address: string, creds: ChannelCredentials): Client {
  return new Client(address, creds, ENVOY_CHANNEL_OPTIONS);
}

/** Opens a SotW stream on `address` (plaintext unless `creds` say otherwise). */
export function openSotw(
  address: string,
  method: string = METHODS.adsSotw,
  creds: ChannelCredentials = credentials.createInsecure(),
): SotwStream {
  return new RawStream(newClient(address, creds), method, encodeSotwRequest, decodeSotwResponse);
}

/** Opens a Delta stream on `address` (plaintext unless `creds` say otherwise). */
export function openDelta(
  address: string,
  method: string = METHODS.adsDelta,
  creds: ChannelCredentials = credentials.createInsecure(),
): DeltaStream {
  return new RawStream(newClient(address, creds), method, encodeDeltaRequest, decodeDeltaResponse);
}
