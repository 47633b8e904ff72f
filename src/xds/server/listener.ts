// The ADS port's socket: a plain TCP server with a cap on open connections, whose sockets are
// handed to grpc-js (Server.createConnectionInjector does TLS and HTTP/2 as bindAsync would).
// grpc-js has no limit of its own: enough idle connections take every file descriptor of the
// process, and DNS, health checks and the manifest watch then fail with EMFILE.
// Past the cap, Node closes a new connection at once (net.Server.maxConnections) and it is said
// once at warn until a connection closes again.
import { readFileSync } from "node:fs";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import type { Server, ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "../../util/logger.js";

/**
 * File descriptors left to the rest of the process (DNS over TCP and forwarding, the HTTP port,
 * manifest files and watches, logs) when the open-files limit is lower than cap + this.
 */
export const FILE_HEADROOM = 2048;

/** The cap in force: `requested`, lowered to leave FILE_HEADROOM of `openFiles` (the soft RLIMIT_NOFILE). */
export function connectionCap(requested: number, openFiles: number | undefined): number {
  if (openFiles === undefined) return requested;
  return Math.max(1, Math.min(requested, openFiles - FILE_HEADROOM));
}

/** The soft open-files limit of this process (Linux /proc/self/limits), if it can be read. */
export function openFilesLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.slice("Max open files".length).trim().split(/\s+/)[0]);
    return Number.isInteger(soft) && soft > 0 ? soft : undefined;
  } catch {
    return undefined;
  }
}

/** "host:port", "[v6]:port", ":port" (all IPv4 interfaces). */
function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  const port = Number(m?.[3]);
  if (m === null || !Number.isInteger(port) || port > 65535)
    throw new Error(`expected host:port, e.g. 127.0.0.1:18000, not "${listen}"`);
  return { host: m[1] ?? (m[2] === "" || m[2] === undefined ? "0.0.0.0" : m[2]), port };
}

/** A bound, capped listener feeding a grpc-js server. */
export interface CappedListener {
  readonly port: number;
  /** The cap in force (see connectionCap). */
  readonly maxConnections: number;
  /** Stops accepting; resolves once every connection closed (the gRPC server ends them, or destroy()). */
  close(): Promise<void>;
  /** Cuts the connections still open (also those that never spoke HTTP/2). */
  destroy(): void;
}

/** Listens on `listen` and hands every connection up to `maxConnections` to `server`. */
export async function listenCapped(
  server: Server,
  credentials: ServerCredentials,
  listen: string,
  maxConnections: number,
  logger: Logger,
): Promise<CappedListener> {
  const { host, port } = parseListen(listen);
  const injector = server.createConnectionInjector(credentials);
  let saturated = false;
  const sockets = new Set<Socket>();
  const net: NetServer = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      saturated = false;
    });
    injector.injectConnection(socket);
  });
  net.maxConnections = maxConnections;
  net.on("drop", (data) => {
    if (saturated) return;
    saturated = true;
    logger.warn(
      { listen, maxConnections, refused: data?.remoteAddress },
      `xDS port: ${String(maxConnections)} connections open, refusing more (--xds-max-connections)`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    net.once("error", reject);
    net.listen({ host, port }, () => {
      net.off("error", reject);
      resolve();
    });
  });
  net.on("error", (e) => {
    logger.error({ err: e, listen }, "xDS listener failed");
  });
  const address = net.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : port,
    maxConnections,
    close: () =>
      new Promise<void>((resolve) => {
        injector.destroy();
        net.close(() => {
          resolve();
        });
      }),
    destroy: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}
