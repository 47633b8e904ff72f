// Small statistics and output helpers shared by the xDS scenarios.

/** The p-th percentile (nearest rank) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

/** Nearest-rank p50/p99 and the maximum of `values`, rounded to 0.01. */
export function summary(values: readonly number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

/** Median of `values`. */
export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Rounds to two decimals. */
export function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Prints one result object as a JSON line. */
export function emit(o: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(o)}\n`);
}

/** A deterministic pseudo-random sequence (LCG), so every run changes the same Machines. */
export function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

/** Progress to stderr, so stdout stays one JSON object per scenario. */
export function progress(msg: string): void {
  process.stderr.write(`[bench:xds] ${msg}\n`);
}
