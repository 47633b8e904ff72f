// Two (or more) cluster sizes in one run: the operator's memory as a line through its converged
// points — the slope is the cost of one more watched object (issue 26's target: ≤ 10 KB of RSS),
// the intercept the fixed cost (the process, its modules, client-node) reported beside it. The bare
// informer cache of the same lists, measured in the same run, gives the baseline's line.

/** One size's figures, read from the driver's operator.converge and stream lines. */
export interface SizePoint {
  readonly scale: string;
  readonly watchedObjects: number;
  readonly rssMib: number;
  readonly heapUsedMib: number;
  readonly bareObjects: number;
  readonly bareRssMib: number;
  /** Watch event → LDS at the client, p99, in the open-loop stream (null when the stream did not run). */
  readonly streamP99Ms: number | null;
  /** The operator's CPU per change, one at a time and in the stream, and per idle minute (null when not run). */
  readonly cpuMsPerIsolatedChange: number | null;
  readonly cpuMsPerStreamChange: number | null;
  readonly cpuMsPerIdleMinute: number | null;
}

/** Least-squares line through (objects, MiB): KB per additional object and the fixed MiB at zero objects. */
export function line(points: readonly { objects: number; mib: number }[]): { kbPerObject: number; fixedMib: number } {
  const n = points.length;
  if (n < 2) throw new Error("a slope needs at least two sizes");
  const mx = points.reduce((s, p) => s + p.objects, 0) / n;
  const my = points.reduce((s, p) => s + p.mib, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.objects - mx) ** 2, 0);
  if (sxx === 0) throw new Error("the sizes watch the same number of objects");
  const sxy = points.reduce((s, p) => s + (p.objects - mx) * (p.mib - my), 0);
  const mibPerObject = sxy / sxx;
  const r1 = (v: number): number => Math.round(v * 10) / 10;
  return { kbPerObject: r1(mibPerObject * 1024), fixedMib: r1(my - mibPerObject * mx) };
}

/** The point of one driver run from its JSON lines; undefined when it did not converge. */
export function pointOf(scale: string, lines: readonly Record<string, unknown>[]): SizePoint | undefined {
  const converge = lines.find((l) => l["name"] === "operator.converge");
  if (converge?.["converged"] !== true) return undefined;
  const mem = converge["operator_memory_converged"] as { rss_mib: number; heap_used_mib: number };
  const bare = converge["bare_cache"] as { objects: number; memory_held: { rss_mib: number } };
  const stream = lines.find((l) => l["name"] === "operator.change_to_push.stream");
  const lds = stream?.["event_to_lds_at_client_ms"] as { p99: number } | undefined;
  const isolated = lines.find((l) => l["name"] === "operator.change_to_push.isolated");
  const idle = lines.find((l) => l["name"] === "operator.after_resync");
  const num = (line: Record<string, unknown> | undefined, key: string): number | null =>
    typeof line?.[key] === "number" ? line[key] : null;
  return {
    scale,
    watchedObjects: converge["watched_objects"] as number,
    rssMib: mem.rss_mib,
    heapUsedMib: mem.heap_used_mib,
    bareObjects: bare.objects,
    bareRssMib: bare.memory_held.rss_mib,
    streamP99Ms: lds?.p99 ?? null,
    cpuMsPerIsolatedChange: num(isolated, "operator_cpu_ms_per_change"),
    cpuMsPerStreamChange: num(stream, "operator_cpu_ms_per_change"),
    cpuMsPerIdleMinute: num(idle, "operator_cpu_ms_per_idle_minute"),
  };
}

function ratio(points: readonly SizePoint[], of: (p: SizePoint) => number | null): number | null {
  const ordered = [...points].sort((a, b) => a.watchedObjects - b.watchedObjects);
  const small = ordered[0] === undefined ? null : of(ordered[0]);
  const large = ordered.at(-1) === undefined ? null : of(ordered.at(-1) as SizePoint);
  return small === null || large === null || small === 0 ? null : Math.round((large / small) * 100) / 100;
}

/** The operator.sizes line: each size, the operator's line and the bare cache's. */
export function sizesReport(points: readonly SizePoint[]): Record<string, unknown> {
  return {
    name: "operator.sizes",
    sizes: points,
    operator_rss: line(points.map((p) => ({ objects: p.watchedObjects, mib: p.rssMib }))),
    operator_heap_used: line(points.map((p) => ({ objects: p.watchedObjects, mib: p.heapUsedMib }))),
    bare_cache_rss: line(points.map((p) => ({ objects: p.bareObjects, mib: p.bareRssMib }))),
    // The largest size's CPU over the smallest's (issue 30 target 4: ≤ 1.5 when the work is
    // proportional to what changed, not to how much is watched).
    cpu_ratio_largest_to_smallest: {
      per_isolated_change: ratio(points, (p) => p.cpuMsPerIsolatedChange),
      per_stream_change: ratio(points, (p) => p.cpuMsPerStreamChange),
      per_idle_minute: ratio(points, (p) => p.cpuMsPerIdleMinute),
    },
    target:
      "operator_rss.kbPerObject ≤ 10 (issue 26); event → LDS p99 ≤ 150 ms at 10 changes/s; CPU ratios ≤ 1.5 (issue 30)",
  };
}
