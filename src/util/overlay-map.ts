// A persistent map for state kept from one change to the next: the next version shares the
// previous one and holds only what changed, so a change to one of 3,000 entries copies a few
// entries, not 3,000. Flattened into a plain Map once its own entries grow past a sixteenth of
// what it shares, which keeps a read to two lookups and the memory to what a copy would take.

/** In `patchMap`'s changes and an overlay's own entries: the key is removed. */
export const REMOVED: unique symbol = Symbol("removed");
export type Removed = typeof REMOVED;

/** `base` read through `own` (entries over it, REMOVED hiding one of its keys). Values are never undefined. */
export class OverlayMap<K, V> implements ReadonlyMap<K, V>, Layered<K> {
  constructor(
    readonly base: ReadonlyMap<K, V>,
    readonly own: ReadonlyMap<K, V | Removed>,
    readonly size: number,
  ) {}

  get(key: K): V | undefined {
    const v = this.own.get(key);
    return v === REMOVED ? undefined : (v ?? this.base.get(key));
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  *entries(): MapIterator<[K, V]> {
    for (const [k, v] of this.base) if (!this.own.has(k)) yield [k, v];
    for (const [k, v] of this.own) if (v !== REMOVED) yield [k, v];
  }

  *keys(): MapIterator<K> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): MapIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  layers(): readonly [ReadonlyMap<K, V>, Iterable<K>] {
    return [this.base, this.own.keys()];
  }
}

/**
 * `base` with `changes` applied (a value sets its key, REMOVED deletes it), as a new map; `base`
 * is left as it was. No change: `base` itself. Costs the changes plus the overlay's own entries
 * (at most 16 + a sixteenth of the shared map), or one copy when it flattens.
 */
export function patchMap<K, V>(base: ReadonlyMap<K, V>, changes: ReadonlyMap<K, V | Removed>): ReadonlyMap<K, V> {
  if (changes.size === 0) return base;
  const under = base instanceof OverlayMap ? (base.base as ReadonlyMap<K, V>) : base;
  const own = new Map<K, V | Removed>(base instanceof OverlayMap ? (base.own as ReadonlyMap<K, V | Removed>) : []);
  let size = base.size;
  for (const [k, v] of changes) {
    size += (v === REMOVED ? 0 : 1) - (base.has(k) ? 1 : 0);
    if (v !== REMOVED) own.set(k, v);
    else if (under.has(k)) own.set(k, REMOVED);
    else own.delete(k);
  }
  const next = new OverlayMap(under, own, size);
  return own.size <= 16 + under.size / 16 ? next : new Map(next);
}

/**
 * The keys whose values differ between two maps (by identity). Two versions of one overlay (or an
 * overlay and the map it shares) differ only where their own entries are: those alone are compared
 * (any two Layered maps over the same shared map likewise).
 */
export function changedKeys<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): Set<K> {
  const out = new Set<K>();
  if (a === b) return out;
  const [aUnder, aOwn] = parts(a);
  const [bUnder, bOwn] = parts(b);
  if (aUnder === bUnder) {
    for (const k of [...aOwn, ...bOwn]) if (a.get(k) !== b.get(k)) out.add(k);
    return out;
  }
  for (const [k, v] of a) if (b.get(k) !== v) out.add(k);
  for (const [k, v] of b) if (a.get(k) !== v) out.add(k);
  return out;
}

/**
 * A map built over another that it shares, holding a few entries of its own (an OverlayMap, the
 * watch's SnapshotMap): `changedKeys` compares two of them that share the same map by those alone.
 */
export interface Layered<K> {
  layers(): readonly [shared: ReadonlyMap<K, unknown>, own: Iterable<K>];
}

/** The map `m` shares and the keys of its own entries (a plain map: itself, none). */
function parts<K, V>(m: ReadonlyMap<K, V>): readonly [ReadonlyMap<K, unknown>, Iterable<K>] {
  return "layers" in m && typeof m.layers === "function" ? (m as unknown as Layered<K>).layers() : [m, []];
}
