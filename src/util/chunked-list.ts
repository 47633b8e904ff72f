// A long sorted list that is patched, not copied: its elements live in chunks of a few hundred, and
// a patch copies only the chunks it touches and the spine of chunk pointers. serve's state holds
// 300,000 Machines in one list at 3,000 Infras; copying all of them per change cost more than the
// rest of a change. Pure.

/** A list read in order: an array, or a ChunkedList. */
export interface ListView<T> extends Iterable<T> {
  readonly length: number;
  at(index: number): T | undefined;
}

/** One key's new element in a patch, or undefined to remove it. */
export type KeyedChange<T> = readonly [key: string, value: T | undefined];

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * An immutable list sorted by a string key, no key twice. A patch shares every chunk it does not
 * touch with the list it came from, so two lists patched one from the other differ only in the
 * chunks that are not the same object (unsharedElements).
 */
export class ChunkedList<T> implements ListView<T> {
  readonly length: number;
  /** Index of each chunk's first element; one more entry, the length. */
  readonly #starts: readonly number[];

  private constructor(
    /** The chunks, in order, none empty. */
    readonly chunks: readonly (readonly T[])[],
    readonly key: (element: T) => string,
    readonly chunkSize: number,
  ) {
    const starts: number[] = [];
    let n = 0;
    for (const c of chunks) {
      starts.push(n);
      n += c.length;
    }
    starts.push(n);
    this.#starts = starts;
    this.length = n;
  }

  /** `sorted` (in key order, no key twice) as chunks of `chunkSize`. */
  static of<T>(sorted: readonly T[], key: (element: T) => string, chunkSize = 512): ChunkedList<T> {
    if (!(chunkSize >= 1)) throw new RangeError(`chunk size ${String(chunkSize)} is not positive`);
    return new ChunkedList(split(sorted, chunkSize), key, chunkSize);
  }

  at(index: number): T | undefined {
    const i = index < 0 ? index + this.length : index;
    if (!Number.isInteger(i) || i < 0 || i >= this.length) return undefined;
    let [lo, hi] = [0, this.chunks.length - 1];
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.#starts[mid] as number) <= i) lo = mid;
      else hi = mid - 1;
    }
    return this.chunks[lo]?.[i - (this.#starts[lo] as number)];
  }

  [Symbol.iterator](): Iterator<T> {
    const chunks = this.chunks;
    let [c, i] = [0, 0];
    return {
      next(): IteratorResult<T> {
        for (;;) {
          const chunk = chunks[c];
          if (chunk === undefined) return { done: true, value: undefined };
          if (i < chunk.length) return { done: false, value: chunk[i++] as T };
          c++;
          i = 0;
        }
      },
    };
  }

  /**
   * This list with `changes` applied (later ones of a key win): each touched chunk copied once and
   * merged with its changes, split when it grew past twice the chunk size, joined to its neighbour
   * when it shrank below a quarter; every other chunk shared. Returns this list when nothing moved.
   */
  patch(changes: Iterable<KeyedChange<T>>): ChunkedList<T> {
    const byChunk = new Map<number, Map<string, T | undefined>>();
    for (const [key, value] of changes) {
      const c = this.#chunkOf(key);
      let m = byChunk.get(c);
      if (m === undefined) byChunk.set(c, (m = new Map<string, T | undefined>()));
      m.set(key, value);
    }
    if (byChunk.size === 0) return this;
    const out: (readonly T[])[] = [];
    let moved = false;
    for (let c = 0; c < Math.max(this.chunks.length, 1); c++) {
      const chunk = this.chunks[c] ?? [];
      const mine = byChunk.get(c);
      if (mine === undefined) {
        out.push(chunk);
        continue;
      }
      const merged = mergeChunk(chunk, mine, this.key);
      if (merged === chunk) {
        if (chunk.length > 0) out.push(chunk);
        continue;
      }
      moved = true;
      // A chunk that shrank joins the one before it (or the next, for the first).
      const small = merged.length < this.chunkSize / 4;
      const prev = out.length > 0 ? out[out.length - 1] : undefined;
      if (small && prev !== undefined) {
        out.pop();
        out.push(...split([...prev, ...merged], this.chunkSize, 2));
      } else if (small && c + 1 < this.chunks.length && !byChunk.has(c + 1)) {
        out.push(...split([...merged, ...(this.chunks[c + 1] as readonly T[])], this.chunkSize, 2));
        c++;
      } else out.push(...split(merged, this.chunkSize, 2));
    }
    return moved ? new ChunkedList(out, this.key, this.chunkSize) : this;
  }

  /** The chunk that holds `key` or would: the first whose last key is not less, else the last. */
  #chunkOf(key: string): number {
    let [lo, hi] = [0, this.chunks.length - 1];
    if (hi < 0) return 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid] as readonly T[];
      if (cmp(this.key(chunk[chunk.length - 1] as T), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * The elements of `a` and of `b` outside the chunks they share (by identity): for two lists patched
 * one from the other, every element that can differ between them, and no more than the chunks a
 * patch touched. Lists that are not chunked are walked whole.
 */
export function unsharedElements<T>(
  a: ListView<T>,
  b: ListView<T>,
): { readonly a: Iterable<T>; readonly b: Iterable<T> } {
  if (!(a instanceof ChunkedList) || !(b instanceof ChunkedList)) return { a, b };
  const inA = new Set<readonly T[]>(a.chunks as readonly (readonly T[])[]);
  const inB = new Set<readonly T[]>(b.chunks as readonly (readonly T[])[]);
  const only = (list: ChunkedList<T>, other: ReadonlySet<readonly T[]>): T[] => {
    const out: T[] = [];
    for (const chunk of list.chunks) if (!other.has(chunk)) for (const x of chunk) out.push(x);
    return out;
  };
  return { a: only(a as ChunkedList<T>, inB), b: only(b as ChunkedList<T>, inA) };
}

/** `chunk` with its keys' changes merged in; `chunk` itself when none changes it. */
function mergeChunk<T>(
  chunk: readonly T[],
  changes: ReadonlyMap<string, T | undefined>,
  key: (x: T) => string,
): readonly T[] {
  const kept: [string, T][] = [];
  const found = new Set<string>();
  let moved = false;
  for (const x of chunk) {
    const k = key(x);
    if (!changes.has(k)) kept.push([k, x]);
    else {
      found.add(k);
      const v = changes.get(k);
      if (v !== x) moved = true;
      if (v !== undefined) kept.push([k, v]);
    }
  }
  const added: [string, T][] = [];
  for (const [k, v] of changes) if (v !== undefined && !found.has(k)) added.push([k, v]);
  if (added.length === 0) return moved ? kept.map(([, x]) => x) : chunk;
  added.sort(([x], [y]) => cmp(x, y));
  const out: T[] = [];
  let j = 0;
  for (const [k, x] of kept) {
    while (j < added.length && (added[j] as [string, T])[0] < k) out.push((added[j++] as [string, T])[1]);
    out.push(x);
  }
  while (j < added.length) out.push((added[j++] as [string, T])[1]);
  return out;
}

/** `list` in pieces of `size`; when `slack` is given, a list up to slack × size stays whole. */
function split<T>(list: readonly T[], size: number, slack = 1): (readonly T[])[] {
  if (list.length === 0) return [];
  if (list.length <= size * slack) return [list.slice()];
  const pieces = Math.ceil(list.length / size);
  const out: T[][] = [];
  for (let p = 0; p < pieces; p++)
    out.push(list.slice(Math.floor((p * list.length) / pieces), Math.floor(((p + 1) * list.length) / pieces)));
  return out;
}
