// What a Delta stream holds of one type, as a map that a request adding a few names extends
// without copying the rest (issue 25, row 9: "subscription updates cost what they change"). Held
// maps are immutable — the map a response leads to becomes the ACKed one and is remembered across
// reconnects (memory.ts) — so a plain Map would be copied whole per request, which is most of the
// cost of one more name on a stream of 10,000.
//
// A two-level trie of 64 × 64 buckets by a seeded hash of the name, each bucket a short array:
// `with` copies the root, one inner array and one bucket per changed name. The seed is random per
// process, so a client cannot choose names that fall into one bucket and make every copy long.
import { randomBytes } from "node:crypto";
import type { Held } from "./memory.js";

const BITS = 6;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;
const SEED = randomBytes(4).readUInt32LE(0);

type Entry = readonly [string, Held];
type Bucket = readonly Entry[];
type Inner = readonly (Bucket | undefined)[];
type Root = readonly (Inner | undefined)[];

/** FNV-1a of `name` from the process's seed. */
function hash(name: string): number {
  let h = SEED;
  for (let i = 0; i < name.length; i += 1) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const EMPTY_ROOT: Root = new Array<Inner | undefined>(WIDTH).fill(undefined);

export class HeldMap implements ReadonlyMap<string, Held> {
  readonly #root: Root;
  readonly size: number;

  private constructor(root: Root, size: number) {
    this.#root = root;
    this.size = size;
  }

  /** `held` as a HeldMap: itself when it is one, else a copy (the one walk of the whole map). */
  static of(held: ReadonlyMap<string, Held>): HeldMap {
    return held instanceof HeldMap ? held : new HeldMap(EMPTY_ROOT, 0).with(held);
  }

  /** This map with `entries` set (added or replaced); this one is unchanged. */
  with(entries: Iterable<readonly [string, Held]>): HeldMap {
    const root = [...this.#root];
    const copied = new Set<number>();
    let size = this.size;
    for (const [name, held] of entries) {
      const h = hash(name);
      const i = h & MASK;
      const j = (h >>> BITS) & MASK;
      let inner = root[i] as (Bucket | undefined)[] | undefined;
      if (!copied.has(i)) {
        inner = inner === undefined ? new Array<Bucket | undefined>(WIDTH).fill(undefined) : [...inner];
        root[i] = inner;
        copied.add(i);
      }
      const bucket = inner?.[j] ?? [];
      const at = bucket.findIndex((e) => e[0] === name);
      const next = [...bucket];
      if (at === -1) {
        next.push([name, held]);
        size += 1;
      } else {
        next[at] = [name, held];
      }
      if (inner !== undefined) inner[j] = next;
    }
    return new HeldMap(root, size);
  }

  #entry(name: string): Entry | undefined {
    const h = hash(name);
    return this.#root[h & MASK]?.[(h >>> BITS) & MASK]?.find((e) => e[0] === name);
  }

  get(name: string): Held | undefined {
    return this.#entry(name)?.[1];
  }

  has(name: string): boolean {
    return this.#entry(name) !== undefined;
  }

  *entries(): MapIterator<[string, Held]> {
    for (const inner of this.#root) {
      if (inner === undefined) continue;
      for (const bucket of inner) for (const [name, held] of bucket ?? []) yield [name, held];
    }
  }

  *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): MapIterator<Held> {
    for (const [, held] of this.entries()) yield held;
  }

  [Symbol.iterator](): MapIterator<[string, Held]> {
    return this.entries();
  }

  forEach(callback: (value: Held, key: string, map: ReadonlyMap<string, Held>) => void, thisArg?: unknown): void {
    for (const [name, held] of this.entries()) callback.call(thisArg, held, name, this);
  }

  get [Symbol.toStringTag](): string {
    return "HeldMap";
  }
}
