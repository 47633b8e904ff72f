// Percentiles, JSON-line output and progress for the operator benchmark.

/** Nearest-rank p-th percentile of `values` (NaN when empty). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

/** p50, p99 and max of `values`, rounded to 0.1 (ms figures). */
export function summary(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  return {
    n: values.length,
    p50: round(percentile(values, 50)),
    p99: round(percentile(values, 99)),
    max: round(percentile(values, 100)),
  };
}

/** Rounds to one decimal. */
export function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** Bytes → MiB, one decimal. */
export function mib(bytes: number): number {
  return round(bytes / 1024 / 1024);
}

/** Milliseconds on the monotonic clock shared by every process of the host (CLOCK_MONOTONIC). */
export function monoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Prints one result as a JSON line on stdout. */
export function emit(o: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(o)}\n`);
}

/** Progress on stderr, so stdout stays JSON lines. */
export function progress(msg: string): void {
  process.stderr.write(`[bench:operator] ${msg}\n`);
}

/** A deterministic pseudo-random sequence (LCG): every run changes the same Machines. */
export function seeded(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}
