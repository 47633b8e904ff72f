// A reflector's live Map at one moment, frozen without copying it whole: the previous snapshot's
// base is shared and the keys changed since sit in a small delta. A Machine's watch event then
// costs its key (and, every ~√n events, one copy of the list), not a copy of 25,000 entries.
// Immutable once built, as Observed.raw must be (the reconcile pass reads an older one while the
// reflector moves on).
import type { Layered } from "../../util/overlay-map.js";

/** A frozen view: `base` (owned, never mutated) overridden by `delta` (undefined = deleted). */
export class SnapshotMap<V> implements ReadonlyMap<string, V>, Layered<string> {
  readonly #base: ReadonlyMap<string, V>;
  readonly #delta: ReadonlyMap<string, V | undefined>;
  #flatCache: { readonly keys: readonly string[]; readonly values: readonly V[] } | undefined;
  readonly size: number;

  private constructor(base: ReadonlyMap<string, V>, delta: ReadonlyMap<string, V | undefined>) {
    this.#base = base;
    this.#delta = delta;
    let size = base.size;
    for (const [k, v] of delta) {
      const inBase = base.has(k);
      if (v === undefined && inBase) size--;
      else if (v !== undefined && !inBase) size++;
    }
    this.size = size;
  }

  /** A copy of `live` as it is now. */
  static copy<V>(live: ReadonlyMap<string, V>): SnapshotMap<V> {
    return new SnapshotMap<V>(new Map(live), new Map());
  }

  /**
   * `live` as it is now, given that only `keys` changed since this view was taken (undefined: any
   * key may have). The delta is kept under ~√n entries, so a view costs O(√n) amortized.
   */
  next(live: ReadonlyMap<string, V>, keys: Iterable<string> | undefined): SnapshotMap<V> {
    if (keys === undefined) return SnapshotMap.copy(live);
    const delta = new Map(this.#delta);
    for (const k of keys) delta.set(k, live.get(k));
    if (delta.size > maxDelta(this.#base.size)) return SnapshotMap.copy(live);
    return new SnapshotMap(this.#base, delta);
  }

  /** Views taken after one copy share its base: `changedKeys` between them compares their deltas alone. */
  layers(): readonly [ReadonlyMap<string, V>, Iterable<string>] {
    return [this.#base, this.#delta.keys()];
  }

  get(key: string): V | undefined {
    return this.#delta.has(key) ? this.#delta.get(key) : this.#base.get(key);
  }

  has(key: string): boolean {
    return this.#delta.has(key) ? this.#delta.get(key) !== undefined : this.#base.has(key);
  }

  /** The base's order (changed values in place, deleted ones skipped), then the keys added since. */
  entries(): MapIterator<[string, V]> {
    return this.#delta.size === 0 ? this.#base.entries() : this.#merged();
  }

  keys(): MapIterator<string> {
    return this.#delta.size === 0 ? this.#base.keys() : this.#flat().keys.values();
  }

  values(): MapIterator<V> {
    return this.#delta.size === 0 ? this.#base.values() : this.#flat().values.values();
  }

  /**
   * The merged keys and values, made once per view on its first walk: the reconcile pass, the apps
   * ingress controller and the DNS file reader each walk the same views, and a [key, value] pair
   * per entry per walk was most of what they allocated.
   */
  #flat(): { readonly keys: readonly string[]; readonly values: readonly V[] } {
    if (this.#flatCache !== undefined) return this.#flatCache;
    const keys: string[] = [];
    const values: V[] = [];
    const delta = this.#delta;
    this.#base.forEach((v, k) => {
      if (!delta.has(k)) {
        keys.push(k);
        values.push(v);
        return;
      }
      const now = delta.get(k);
      if (now === undefined) return;
      keys.push(k);
      values.push(now);
    });
    const base = this.#base;
    delta.forEach((v, k) => {
      if (v === undefined || base.has(k)) return;
      keys.push(k);
      values.push(v);
    });
    this.#flatCache = { keys, values };
    return this.#flatCache;
  }

  *#merged(): MapIterator<[string, V]> {
    const { keys, values } = this.#flat();
    for (let i = 0; i < keys.length; i += 1) yield [keys[i] as string, values[i] as V];
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) callback.call(thisArg, v, k, this);
  }
}

/** Changed keys kept before the view is copied whole again. */
function maxDelta(n: number): number {
  return Math.max(32, Math.ceil(Math.sqrt(n)));
}
