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
