// A map of at most `max` entries, each forgotten `ttlMs` after it was set: for answers worth
// reusing briefly (access reviews) whose keys a client chooses freely, so a flood of new keys
// evicts the least recently used instead of growing the map.

/** A bounded least-recently-used map whose entries expire. */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: V; expires: number }>();

  constructor(
    readonly max: number,
    readonly ttlMs: number,
    readonly now: () => number,
  ) {}

  /** The value set less than ttlMs ago, now the most recently used; undefined otherwise. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expires <= this.now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Sets `key`, forgetting the least recently used entry past `max`. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.now() + this.ttlMs });
    if (this.#entries.size <= this.max) return;
    const oldest = this.#entries.keys().next();
    if (oldest.done !== true) this.#entries.delete(oldest.value);
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
