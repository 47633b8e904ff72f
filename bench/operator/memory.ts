// Process memory after a full collection (the bench's processes run with --expose-gc), and per
// watched object.
import { mib, round } from "./stats.js";

/** One reading, MiB. */
export interface Memory {
  readonly rss_mib: number;
  readonly heap_used_mib: number;
  readonly heap_total_mib: number;
  readonly external_mib: number;
}

/** Collects garbage (when exposed) and reads the process's memory. */
export function memory(): Memory {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return {
    rss_mib: mib(m.rss),
    heap_used_mib: mib(m.heapUsed),
    heap_total_mib: mib(m.heapTotal),
    external_mib: mib(m.external),
  };
}

/** KB per object of a reading, and of what it holds above `before` (the process before the objects). */
export function perObject(
  m: Memory,
  before: Memory,
  objects: number,
): { rss_kb: number; heap_used_kb: number; rss_above_before_kb: number; heap_above_before_kb: number } {
  const kb = (v: number): number => round((v * 1024) / Math.max(1, objects));
  return {
    rss_kb: kb(m.rss_mib),
    heap_used_kb: kb(m.heap_used_mib),
    rss_above_before_kb: kb(m.rss_mib - before.rss_mib),
    heap_above_before_kb: kb(m.heap_used_mib - before.heap_used_mib),
  };
}
