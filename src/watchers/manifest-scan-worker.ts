// The scan worker's thread (./manifest-scan.ts): a folder's path in, its manifest files' stat keys out.
import { parentPort } from "node:worker_threads";
import { statTree, type TreeStats } from "./manifest-tree.js";

export type ScanReply = { readonly tree: TreeStats } | { readonly failed: string };

parentPort?.once("message", (dir: string) => {
  statTree(dir).then(
    (tree) => {
      parentPort?.postMessage({ tree } satisfies ScanReply);
    },
    (e: unknown) => {
      parentPort?.postMessage({ failed: e instanceof Error ? e.message : String(e) } satisfies ScanReply);
    },
  );
});
