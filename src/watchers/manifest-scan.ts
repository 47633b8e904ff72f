// The background scan's listing and stats (ManifestReader.scan) off the event loop that answers DNS
// and xDS: a promise per stat cost the main thread ~13 µs a file — ~25 ms a scan at 1,800 files,
// ~250 ms at 18,000 — once a second while changes keep coming (bench/README.md, "serve, the whole
// path"). Each scan runs in a short-lived worker thread, so an idle process holds no thread for it;
// the main thread only compares the keys. Run from the TypeScript sources (the tests), where no
// compiled worker script exists, the scan runs here.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { ScanReply } from "./manifest-scan-worker.js";
import { statTree, type TreeStats } from "./manifest-tree.js";

const SCRIPT = new URL("./manifest-scan-worker.js", import.meta.url);
const available = existsSync(fileURLToPath(SCRIPT));

/** statTree(dir), in a worker thread when the compiled worker script is there. */
export function statTreeOffThread(dir: string): Promise<TreeStats> {
  if (!available) return statTree(dir);
  return new Promise((resolve, reject) => {
    const thread = new Worker(SCRIPT);
    let settled = false;
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      f();
      void thread.terminate();
    };
    thread.once("message", (r: ScanReply) => {
      settle(() => {
        if ("tree" in r) resolve(r.tree);
        else reject(new Error(r.failed));
      });
    });
    thread.once("error", (e) => {
      settle(() => {
        reject(e);
      });
    });
    thread.once("exit", (code) => {
      settle(() => {
        reject(new Error(`the manifest scan worker exited (${String(code)})`));
      });
    });
    thread.postMessage(dir);
  });
}
