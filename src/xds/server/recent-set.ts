// A set of at most `max` strings that forgets the oldest first. For what clients choose freely
// (node ids, node groups): remembering every value ever seen would grow with a flood of them.

/** A bounded set; adding past `max` forgets the least recently added value. */
export class RecentSet {
  readonly #values = new Set<string>();

  constructor(readonly max: number) {}

  has(value: string): boolean {
    return this.#values.has(value);
  }

  add(value: string): void {
    this.#values.delete(value);
    this.#values.add(value);
    if (this.#values.size <= this.max) return;
    const oldest = this.#values.values().next();
    if (oldest.done !== true) this.#values.delete(oldest.value);
  }

  get size(): number {
    return this.#values.size;
  }
}
