// The ADS server's own thread (src/xds/thread/index.ts), as `serve` runs it: its gRPC server,
// sessions, cache copy (with serve's resource types) and event loop are here, so a render holding the main thread (seconds for one Infra of 5,000 attachments) never
// delays a client's answer. Messages: the main thread sends snapshots and "close"; this thread says
// where it listens, what it records (status calls) and logs, and when it is closed.
import { Writable } from "node:stream";
import { parentPort, workerData } from "node:worker_threads";
import { pino } from "pino";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../../dhcp/kea-config-resource.js";
import { SnapshotCache } from "../../xds/cache/cache.js";
import { adoptSnapshot } from "../../xds/thread/snapshot-relay.js";
import { RelayingXdsStatus } from "../../xds/thread/status-relay.js";
import { startXdsService, type XdsService } from "../../xds/thread/service.js";
import type { ThreadData, ThreadReply, ThreadRequest } from "../../xds/thread/index.js";

const port = parentPort;
const say = (reply: ThreadReply): void => port?.postMessage(reply);
const data = workerData as ThreadData;

// The cache copy takes snapshots from the first message on, before the port is bound.
// Adopted snapshots were checked on the main thread.
const cache = new SnapshotCache({ check: () => [] });
cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
const status = new RelayingXdsStatus((calls) => {
  say({ type: "status", calls });
});
// Each line goes to the main thread's logger, which formats and writes it.
const logger = pino(
  { level: data.logLevel, base: null, timestamp: false },
  new Writable({
    write(chunk: Buffer, _encoding, done): void {
      say({ type: "log", line: chunk.toString() });
      done();
    },
  }),
);

const service: Promise<XdsService | undefined> = startXdsService(cache, status, data.options, logger).then(
  (s) => {
    say({ type: "listening", port: s.server.port, maxConnections: s.server.maxConnections });
    return s;
  },
  (e: unknown) => {
    const err = e as NodeJS.ErrnoException;
    say({ type: "failed", message: err.message, ...(err.code === undefined ? {} : { code: err.code }) });
    return undefined;
  },
);

port?.on("message", (request: ThreadRequest) => {
  if (request.type === "snapshot") {
    adoptSnapshot(cache, request.wire);
    return;
  }
  void service
    .then((s) => s?.close())
    .then(() => {
      say({ type: "closed" });
      port.close();
    });
});
