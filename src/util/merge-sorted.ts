// Two lists already in order as one, without sorting them again. Pure.

/** Two sorted lists as one, `a`'s element first of two that compare equal (as a stable sort of a then b). */
export function mergeSorted<T>(a: readonly T[], b: readonly T[], compare: (x: T, y: T) => number): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as T;
    const y = b[j] as T;
    if (compare(x, y) <= 0) {
      out.push(x);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  while (i < a.length) out.push(a[i++] as T);
  while (j < b.length) out.push(b[j++] as T);
  return out;
}

/**
 * `list` (in order) without the elements of `removed` (by identity) and with `added` (in order) merged
 * in: mergeSorted(list.filter(not removed), added). A few changes to a long list cost their binary
 * searches and a copy, not a comparison per element; none return `list` itself.
 */
export function patchSortedList<T>(
  list: readonly T[],
  removed: ReadonlySet<T>,
  added: readonly T[],
  compare: (x: T, y: T) => number,
): readonly T[] {
  if (removed.size === 0 && added.length === 0) return list;
  if ((removed.size + added.length) * 16 > list.length)
    return mergeSorted(
      list.filter((x) => !removed.has(x)),
      added,
      compare,
    );
  const out = [...list];
  // Each removed element among those equal to it (a miss is skipped, as the filter would).
  const at: number[] = [];
  for (const x of removed) {
    for (let i = bound(out, x, compare, false); i < out.length && compare(out[i] as T, x) === 0; i++)
      if (out[i] === x) {
        at.push(i);
        break;
      }
  }
  at.sort((a, b) => b - a);
  for (const i of at) out.splice(i, 1);
  // After every equal one: the kept first, then the added in their order.
  for (const y of added) out.splice(bound(out, y, compare, true), 0, y);
  return out;
}

/** The first index whose element is ≥ x (`after`: > x). */
function bound<T>(list: readonly T[], x: T, compare: (x: T, y: T) => number, after: boolean): number {
  let [lo, hi] = [0, list.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compare(list[mid] as T, x);
    if (c < 0 || (after && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
