// A Prometheus text exposition (what a /metrics scrape returns) read as the monitoring tests need
// it: the metric names it declares and the samples of one metric. Format:
// prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
/** Metric names the exposition declares (`# TYPE`), histograms with their series. */
export function servedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (name === undefined) continue;
    names.add(name);
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
  }
  return names;
}

export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of metric `name`, each with its labels. */
export function samples(exposition: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of exposition.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (m?.[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      if (key !== undefined) labels[key] = (value ?? "").replace(/\\(.)/g, (_e, c: string) => (c === "n" ? "\n" : c));
    }
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of `name`'s samples grouped by the values of `by` (joined with "/"), as PromQL's `sum by`. */
export function sumBy(exposition: string, name: string, by: readonly string[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const s of samples(exposition, name)) {
    const key = by.map((l) => s.labels[l] ?? "").join("/");
    sums.set(key, (sums.get(key) ?? 0) + s.value);
  }
  return sums;
}
