// The DNS responder's own thread (./thread.ts): its sockets, table and event loop are here, so a
// render holding the main thread (seconds for one Infra of 5,000 attachments, with garbage
// collection pauses of 200 ms on its heap) never delays an answer. Messages: the main thread
// sends models and "close"; this thread says where it listens, what it logs and when it is closed.
import { parentPort, workerData } from "node:worker_threads";
import { startDnsResponder, type DnsResponder } from "./responder.js";
import type { ThreadRequest, ThreadReply, ThreadResponderOptions } from "./thread.js";

const port = parentPort;
const say = (reply: ThreadReply): void => port?.postMessage(reply);

async function main(): Promise<void> {
  const opts = workerData as ThreadResponderOptions;
  let responder: DnsResponder;
  try {
    responder = await startDnsResponder(undefined, {
      ...opts,
      logger: (msg) => {
        say({ type: "log", msg });
      },
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    say({ type: "failed", message: err.message, ...(err.code === undefined ? {} : { code: err.code }) });
    return;
  }
  port?.on("message", (request: ThreadRequest) => {
    if (request.type === "update") {
      responder.update(request.model);
      return;
    }
    void responder.close().then(() => {
      say({ type: "closed" });
      port.close();
    });
  });
  say({ type: "listening", address: responder.address });
}

void main();
