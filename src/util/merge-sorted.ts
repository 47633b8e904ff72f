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
 * searches and a copy, not a comparison per element: an edit (a removed element and an added one
 * that alone compare equal to it) takes the old one's place, the rest are spliced. None return
 * `list` itself.
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
  const out = list.slice();
  const gone = new Set(removed);
  const pending: T[] = [];
  for (const [j, y] of added.entries()) {
    const i = bound(out, y, compare, false);
    const x = out[i];
    // Exact only when nothing else compares equal: the next element, and the added beside y.
    const alone =
      x !== undefined &&
      gone.has(x) &&
      compare(x, y) === 0 &&
      (i + 1 >= out.length || compare(out[i + 1] as T, y) !== 0) &&
      (j === 0 || compare(added[j - 1] as T, y) !== 0) &&
      (j + 1 >= added.length || compare(added[j + 1] as T, y) !== 0);
    if (alone) {
      out[i] = y;
    } else pending.push(y);
  }
  // Each removed element among those equal to it (a miss is skipped, as the filter would).
  const at: number[] = [];
  for (const x of gone) {
    for (let i = bound(out, x, compare, false); i < out.length && compare(out[i] as T, x) === 0; i++)
      if (out[i] === x) {
        at.push(i);
        break;
      }
  }
  at.sort((a, b) => b - a);
  for (const i of at) out.splice(i, 1);
  // After every equal one: the kept first, then the added in their order.
  for (const y of pending) out.splice(bound(out, y, compare, true), 0, y);
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

/** What changedBetween finds: the elements of the old list and of the new one that the other does not hold. */
export interface Changed<T> {
  readonly removed: readonly T[];
  readonly added: readonly T[];
}

/**
 * The elements of `a` not in `b` and those of `b` not in `a`, by identity, for two lists in the
 * order of `compare` that mostly share their elements (one patched from the other): a walk of both
 * that compares only where they differ. Exact for lists in order without two equal elements;
 * otherwise it reports more, never less: an element the walk does not pair with itself in the
 * other list is reported (in both, so counts kept of what the lists hold stay right).
 * `addedAt`: where each added element is in `b`.
 */
export function changedBetween<T>(
  a: readonly T[],
  b: readonly T[],
  compare: (x: T, y: T) => number,
): Changed<T> & { readonly addedAt: readonly number[] } {
  const removed: T[] = [];
  const added: T[] = [];
  const addedAt: number[] = [];
  let [i, j] = [0, 0];
  while (i < a.length && j < b.length) {
    const [x, y] = [a[i] as T, b[j] as T];
    if (x === y) {
      i++;
      j++;
      continue;
    }
    const c = compare(x, y);
    if (c <= 0) {
      removed.push(x);
      i++;
    }
    if (c >= 0) {
      added.push(y);
      addedAt.push(j);
      j++;
    }
  }
  for (; i < a.length; i++) removed.push(a[i] as T);
  for (; j < b.length; j++) {
    added.push(b[j] as T);
    addedAt.push(j);
  }
  return { removed, added, addedAt };
}

/** A list in order made of several lists, and the lists it was made of (sortedFromLists). */
export interface SortedFromLists<T> {
  readonly lists: readonly (readonly T[])[];
  readonly items: readonly T[];
}

/**
 * The elements of `lists` in the order of `compare`. After `last`, the elements of the lists that
 * went (compared by identity) are taken out and those of the lists that came are merged in
 * (patchSortedList): one changed list among thousands costs that list and binary searches, not a
 * sort of every element. Elements that compare equal may come in another order than a sort of
 * them all would give: use a compare under which equal elements are interchangeable.
 */
export function sortedFromLists<T>(
  last: SortedFromLists<T> | undefined,
  lists: readonly (readonly T[])[],
  compare: (x: T, y: T) => number,
): SortedFromLists<T> {
  if (last === undefined) return { lists, items: lists.flat().sort(compare) };
  const before = new Set(last.lists);
  const now = new Set(lists);
  const removed = new Set<T>();
  for (const l of last.lists) if (!now.has(l)) for (const x of l) removed.add(x);
  const added: T[] = [];
  for (const l of lists) if (!before.has(l)) for (const x of l) added.push(x);
  return { lists, items: patchSortedList(last.items, removed, added.sort(compare), compare) };
}
