// One grouping helper: lists grow in place, so grouping n items costs O(n) (copying a list per
// item made indexes quadratic).

/** Items by key, each list in input order. */
export function groupBy<T, K = string>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list === undefined) out.set(k, [item]);
    else list.push(item);
  }
  return out;
}
