// The ADS server on a worker thread of its own, for `oooi serve` (its script:
// src/cli/serve/xds-thread-worker.ts, which registers the resource types serve adds): the render loop
// holds the main thread for seconds on a large Infra (bench/README.md#a-large-render-beside-dns),
// and a client's answer must not wait for it. The main thread keeps the cache the renders publish
// into (it checks, encodes and versions there) and sends each change across (./snapshot-relay.ts);
// the server's thread sends back what it records (./status-relay.ts), replayed into an XdsStatus
// here for the status page, metrics, the change log and the operator's data-plane view.
// Run from the TypeScript sources (the tests), where no compiled worker script exists, the server
// runs on this thread instead, over `cache` itself.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { SnapshotCache } from "../cache/cache.js";
import { XdsStatus, type XdsStatusView } from "../client-status.js";
import { relaySnapshots, type SnapshotWire } from "./snapshot-relay.js";
import { StatusReplay, type StatusCall } from "./status-relay.js";
import { startXdsService, type XdsServiceOptions } from "./service.js";

/** What the ADS thread starts with. */
export interface ThreadData {
  readonly options: XdsServiceOptions;
  /** The main thread's log level: lines below it are not sent across. */
  readonly logLevel: string;
}

export type ThreadRequest = { readonly type: "snapshot"; readonly wire: SnapshotWire } | { readonly type: "close" };

export type ThreadReply =
  | { readonly type: "listening"; readonly port: number; readonly maxConnections: number }
  | { readonly type: "failed"; readonly message: string; readonly code?: string }
  | { readonly type: "status"; readonly calls: StatusCall[] }
  | { readonly type: "log"; readonly line: string }
  | { readonly type: "closed" };

/** The ADS port, wherever it runs. */
export interface ThreadedXdsServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /** Connections the port accepts (the cap in force). */
  readonly maxConnections: number;
  /** Streams, nodes and pushes as the server recorded them (a replay on this thread). */
  readonly status: XdsStatusView;
  /** Ends every stream (UNAVAILABLE, so clients reconnect) and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts the ADS port on a thread running `script` (a module answering ThreadRequests), serving what
 * `cache` holds now and from now on; resolves once it is bound, rejects as the bind or the TLS files
 * fail.
 */
export function startXdsServerThread(
  script: URL,
  cache: SnapshotCache,
  options: XdsServiceOptions,
  logger: Logger,
): Promise<ThreadedXdsServer> {
  const status = new XdsStatus({ logger });
  if (!existsSync(fileURLToPath(script))) {
    return startXdsService(cache, status, options, logger).then((s) => ({
      port: s.server.port,
      maxConnections: s.server.maxConnections,
      status,
      close: () => s.close(),
    }));
  }
  const data: ThreadData = { options, logLevel: logger.level };
  const thread = new Worker(script, { workerData: data });
  const exited = new Promise<void>((resolve) =>
    thread.once("exit", () => {
      resolve();
    }),
  );
  const send = (request: ThreadRequest): void => {
    thread.postMessage(request);
  };
  const unsubscribe = relaySnapshots(cache, (wire) => {
    send({ type: "snapshot", wire });
  });
  const replay = new StatusReplay(status);
  return new Promise((resolve, reject) => {
    let listening = false;
    let closing = false;
    void exited.then(() => {
      unsubscribe();
      reject(new Error("the xDS server thread exited before it listened"));
      // Gone while serving (not closed by us, no exception reported): as a crash on this thread.
      if (listening && !closing)
        process.nextTick(() => {
          throw new Error("the xDS server thread exited while serving");
        });
    });
    thread.on("error", (e) => {
      // Before it listens: the start fails. After: as an exception on this thread would have done.
      closing = true;
      if (!listening) reject(e);
      else
        process.nextTick(() => {
          throw e;
        });
    });
    thread.on("message", (reply: ThreadReply) => {
      switch (reply.type) {
        case "status":
          replay.apply(reply.calls);
          return;
        case "log":
          relayLog(logger, reply.line);
          return;
        case "failed":
          reject(Object.assign(new Error(reply.message), reply.code === undefined ? {} : { code: reply.code }));
          void thread.terminate();
          return;
        case "closed":
          // Closed cleanly; whatever timer a library left behind does not keep the thread.
          void thread.terminate();
          return;
        case "listening":
          listening = true;
          resolve({
            port: reply.port,
            maxConnections: reply.maxConnections,
            status,
            close: async () => {
              closing = true;
              unsubscribe();
              send({ type: "close" });
              await exited;
            },
          });
      }
    });
  });
}

/** Logs a line of the ADS thread's pino (JSON, no time) through `logger`, at its level. */
function relayLog(logger: Logger, line: string): void {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    logger.warn({ line }, "unreadable log line from the xDS server thread");
    return;
  }
  const { level, msg, ...fields } = record;
  const label = typeof level === "number" ? logger.levels.labels[level] : undefined;
  const text = typeof msg === "string" ? msg : "";
  switch (label) {
    case "fatal":
      logger.fatal(fields, text);
      return;
    case "error":
      logger.error(fields, text);
      return;
    case "warn":
      logger.warn(fields, text);
      return;
    case "info":
      logger.info(fields, text);
      return;
    case "debug":
      logger.debug(fields, text);
      return;
    default:
      logger.trace(fields, text);
  }
}
