// A helper process answering UDP on the responder's own socket (./udp-helpers.ts). Node's dgram
// (20) has no SO_REUSEPORT, and a thread cannot share a socket, but a child process can receive
// the bound socket itself: both processes then read the one socket, and the kernel hands each
// datagram to whichever reads first. Nearly all of a UDP answer's cost is in Node's dgram and the
// kernel, not in our code (docs/reference.md#dns-embedded), so only another process puts another
// core to it. It answers from the responder's rendered files (the same SOA serials), forwards
// with its own upstream sockets, and exits when its parent goes away.
import type { Socket as UdpSocket } from "node:dgram";
import { Forwarder } from "./forward.js";
import { QueryHandler } from "./handler.js";
import { servingFromFiles } from "./serving.js";
import { UdpAnswerer } from "./udp-answerer.js";
import type { HelperReply, HelperRequest, HelperSettings } from "./udp-helpers.js";

let handler: QueryHandler | undefined;
let forwarder: Forwarder | undefined;
let settings: HelperSettings | undefined;

const say = (reply: HelperReply): void => {
  if (process.connected) process.send?.(reply);
};
const log = (msg: string): void => {
  say({ type: "log", msg });
};

process.on("message", (request: HelperRequest, socket?: UdpSocket) => {
  if (request.type === "start") {
    if (socket === undefined || handler !== undefined) return;
    settings = request.settings;
    forwarder = new Forwarder([], { timeoutMs: settings.upstreamTimeoutMs, maxInFlight: settings.maxForwardsInFlight });
    handler = new QueryHandler(forwarder, log);
    new UdpAnswerer(socket, handler, log);
    say({ type: "ready" });
    return;
  }
  if (handler === undefined || forwarder === undefined || settings === undefined) return;
  if (request.files === undefined) {
    handler.table = undefined;
    forwarder.setUpstreams([]);
    return;
  }
  try {
    const next = servingFromFiles(request.files, {
      resolvConf: settings.resolvConf,
      port: settings.upstreamPort,
      self: [{ host: settings.host, port: settings.port }],
    });
    handler.table = next.table;
    forwarder.setUpstreams(next.upstreams);
  } catch (err) {
    log(`dns: UDP helper ${String(process.pid)}: update failed, still serving the previous records: ${String(err)}`);
  }
});

// The parent closed the channel or died: nothing will update this process's records again.
process.on("disconnect", () => {
  process.exit(0);
});
// Ctrl-C reaches the whole process group: serve's own shutdown ends this process, by the channel.
process.on("SIGINT", () => undefined);
