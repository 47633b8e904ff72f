// The embedded responder on a worker thread (./thread-worker.ts), for `oooi serve`: the render
// loop shares the main thread with xDS and the status page, and one large render holds it for
// seconds (bench/README.md#a-large-render-beside-dns); answers must not wait for it. The main
// thread only hands over each new DnsModel (a structured clone, only when the model object changed).
// Run from the TypeScript sources (the tests), where no compiled worker script exists, the
// responder runs on this thread instead.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { DnsModel } from "../../model/types.js";
import { startDnsResponder, type DnsResponderAddress, type DnsResponderOptions } from "./responder.js";

const SCRIPT = new URL("./thread-worker.js", import.meta.url);

/** DnsResponderOptions that can cross to a thread (no clock, the logger stays here). */
export type ThreadResponderOptions = Omit<DnsResponderOptions, "clock" | "logger">;

export type ThreadRequest =
  { readonly type: "update"; readonly model: DnsModel | undefined } | { readonly type: "close" };

export type ThreadReply =
  | { readonly type: "listening"; readonly address: DnsResponderAddress }
  | { readonly type: "failed"; readonly message: string; readonly code?: string }
  | { readonly type: "log"; readonly msg: string }
  | { readonly type: "closed" };

/** A responder answering on its own thread. */
export interface ThreadedDnsResponder {
  readonly address: DnsResponderAddress;
  /** Serves `model` from the next query on (undefined: refuse everything); the same object is not sent again. */
  update(model: DnsModel | undefined): void;
  close(): Promise<void>;
}

/** Starts the responder on a worker thread; resolves once both transports listen, rejects as a bind fails. */
export function startDnsResponderThread(
  opts: ThreadResponderOptions & { readonly logger?: (msg: string) => void },
): Promise<ThreadedDnsResponder> {
  const { logger, ...crossing } = opts;
  if (!existsSync(fileURLToPath(SCRIPT)))
    return startDnsResponder(undefined, { ...crossing, ...(logger === undefined ? {} : { logger }) });
  const log = logger ?? ((): void => undefined);
  const thread = new Worker(SCRIPT, { workerData: crossing });
  const exited = new Promise<void>((resolve) =>
    thread.once("exit", () => {
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    let sent: DnsModel | undefined;
    void exited.then(() => {
      reject(new Error("the DNS responder thread exited before it listened"));
    });
    let listening = false;
    thread.on("error", (e) => {
      // Before it listens: the start fails. After: as an exception on this thread would have done.
      if (!listening) reject(e);
      else
        process.nextTick(() => {
          throw e;
        });
    });
    thread.on("message", (reply: ThreadReply) => {
      if (reply.type === "log") log(reply.msg);
      else if (reply.type === "failed")
        reject(Object.assign(new Error(reply.message), reply.code === undefined ? {} : { code: reply.code }));
      else if (reply.type === "listening") {
        listening = true;
        resolve({
          address: reply.address,
          update: (model) => {
            if (model === sent) return;
            sent = model;
            const request: ThreadRequest = { type: "update", model };
            thread.postMessage(request);
          },
          close: async () => {
            const request: ThreadRequest = { type: "close" };
            thread.postMessage(request);
            await exited;
          },
        });
      }
    });
  });
}
