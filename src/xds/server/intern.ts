// One copy of the strings every stream repeats (type URLs, node groups, user agents): a decoded
// request carries fresh copies, and an idle stream would keep them for its lifetime. Bounded, because the strings come from clients: past
// `max` distinct values a string is returned as it is, which costs memory, never correctness.

/** A bounded string interner. */
export class Interner {
  readonly #strings = new Map<string, string>();

  constructor(private readonly max = 1024) {}

  /** The first copy seen of `s` (while there is room), else `s`. */
  intern(s: string): string {
    const known = this.#strings.get(s);
    if (known !== undefined) return known;
    if (this.#strings.size < this.max) this.#strings.set(s, s);
    return s;
  }

  /** Distinct strings held. */
  get size(): number {
    return this.#strings.size;
  }
}
