// The fan-out baseline: a bare @grpc/grpc-js server with one bidi method that writes the same
// pre-encoded bytes to every open stream — no snapshot cache, no per-stream protocol state, no
// flow control beyond what grpc-js does itself. Requests are read and dropped.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";

/** gRPC path of the baseline's broadcast method. */
export const BARE_METHOD = "/oooi.bench.Bare/Broadcast";

/** A running baseline server. */
export interface BareServer {
  readonly port: number;
  /** Open streams. */
  streamCount(): number;
  /** Writes `bytes` (a serialized DiscoveryResponse) to every open stream. */
  broadcast(bytes: Buffer): void;
  close(): Promise<void>;
}

/** Starts the baseline on 127.0.0.1 (a free port). */
export async function startBareServer(): Promise<BareServer> {
  const calls = new Set<ServerDuplexStream<Buffer, Buffer>>();
  const server = new Server({ "grpc.max_send_message_length": -1, "grpc.max_receive_message_length": -1 });
  const identity = (b: Buffer): Buffer => b;
  server.addService(
    {
      Broadcast: {
        path: BARE_METHOD,
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      Broadcast: (call: ServerDuplexStream<Buffer, Buffer>) => {
        calls.add(call);
        call.on("data", () => {
          /* the client's acknowledgement; nothing to do */
        });
        const gone = (): void => {
          calls.delete(call);
        };
        call.on("end", () => {
          gone();
          call.end();
        });
        call.on("cancelled", gone);
        call.on("error", gone);
        call.on("close", gone);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => {
      if (err) reject(err);
      else resolve(p);
    });
  });
  return {
    port,
    streamCount: () => calls.size,
    broadcast: (bytes) => {
      for (const c of calls) c.write(bytes);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of calls) c.end();
        server.tryShutdown(() => {
          resolve();
        });
        setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000).unref();
      }),
  };
}
