// The render loop's file branch (serve --out): every rendering's files and the DHCP allocations,
// written as one set. It continues from the previous run's index: what that run wrote and no
// longer renders is removed. A failed write (a full disk) keeps the last complete set and is
// retried with backoff.
import type { Observable, Subscription } from "rxjs";
import type { Logger } from "pino";
import { ALLOCATIONS_FILE, type AllocationStore } from "../../pipeline/allocation-store.js";
import { FileSink, OutputWriteError, RetryingFileSink } from "../../pipeline/file-sink.js";
import type { Outputs } from "../../pipeline/outputs.js";

export function writeOutputs(
  dir: string,
  rendered$: Observable<Outputs>,
  allocations: AllocationStore,
  log: Logger,
): { readonly subscription: Subscription; close(): void } {
  const writer = new RetryingFileSink(FileSink.open(dir), {
    synced: (r) => {
      if (r.written.length + r.removed.length > 0)
        log.info({ dir, written: r.written.length, removed: r.removed.length }, "outputs updated");
    },
    failed: (e, attempt, retryInMs) => {
      log.error(
        { dir, attempt, retryInMs, ...(e instanceof OutputWriteError ? { file: e.file, code: e.code } : {}) },
        `cannot write outputs: ${e.message}; ${dir} keeps its last complete set, retrying in ${String(retryInMs)} ms`,
      );
    },
  });
  const subscription = rendered$.subscribe((out) => {
    writer.submit(new Map([...out.files, [ALLOCATIONS_FILE, allocations.encode()]]));
  });
  return {
    subscription,
    close: () => {
      writer.close();
    },
  };
}
