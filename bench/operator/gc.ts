// What the garbage collector did during a phase, and where a phase allocated. GC pauses are the
// suspected tail of event → LDS under a heap cap (the Deployment's 512Mi limit gives Node a 256 MiB
// old space), so each phase reports its collections beside its latencies.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { PerformanceObserver, constants, type PerformanceEntry } from "node:perf_hooks";
import { round } from "./stats.js";

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "scavenge",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "mark_compact",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental_marking",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak_callbacks",
};

/** Per kind of collection: how many, their summed and longest main-thread pause (ms). */
export type GcStats = Record<string, { count: number; total_ms: number; max_ms: number }>;

/** Records every collection from now until `stop()`. */
export function recordGc(): { stop(): GcStats } {
  const stats: GcStats = {};
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      const kind = KINDS[e.detail?.kind ?? -1] ?? "other";
      const s = (stats[kind] ??= { count: 0, total_ms: 0, max_ms: 0 });
      s.count += 1;
      s.total_ms += e.duration;
      s.max_ms = Math.max(s.max_ms, e.duration);
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop: () => {
      observer.disconnect();
      for (const s of Object.values(stats)) {
        s.total_ms = round(s.total_ms);
        s.max_ms = round(s.max_ms);
      }
      return stats;
    },
  };
}

/**
 * V8's sampling heap profiler over a phase, counting objects already collected too (so it shows
 * where the garbage comes from, not only what stays). `stop()` writes a .heapprofile (Chrome
 * DevTools' format) to `file`.
 */
export async function sampleAllocations(file: string): Promise<{ stop(): Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return {
    stop: async () => {
      const { profile } = await session.post("HeapProfiler.stopSampling");
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
