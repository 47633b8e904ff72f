// Filter-chain overlap of one listener, found through an index instead of by expanding every
// combination of criteria: chains (ChainView, listener order) → the findings Envoy's filter-chain
// manager would reject the listener for, in the order a combination-by-combination walk meets them.
// Pure; never throws.
//
// Envoy indexes each chain under every combination of its list criteria (destination prefix ×
// server name × ALPN × direct source prefix × source prefix × source port, an empty list counting
// as one "any" entry) and refuses a combination already taken. Two chains therefore collide
// exactly when their scalar criteria are equal and every list criterion shares a value; a chain
// collides with itself when a list repeats a value. So each chain is compared only with the
// chains that share a value of its most selective criterion (found in the index), and the first
// colliding combination is computed per criterion, without enumerating the product. The index
// outlives the check: the next version of the listener (its unchanged chains are the same
// objects) continues from it, adding and removing only the chains that differ; it keeps the
// colliding pairs, found when a chain is added, so a check walks pairs, not values.
import { describeCombo, type ChainMatch, type ChainView, type MatchCombo } from "../render/chain-match.js";
import type { ResourceAt } from "../render/fields.js";

/** One overlap finding: the later chain of the pair is the one it is about. */
export interface OverlapFinding {
  readonly message: string;
  readonly at: ResourceAt;
}

type Value = string | number;

/**
 * A criterion a chain leaves out matches any value: one shared, immutable list and Set per kind of
 * value — most of a chain's six criteria are unset, and a copy per chain adds up over thousands of chains.
 */
const ANY_TEXT: readonly Value[] = Object.freeze([""]);
const ANY_PORT: readonly Value[] = Object.freeze([0]);
const ANY_SETS = new Map<readonly Value[], ReadonlySet<Value>>([
  [ANY_TEXT, new Set(ANY_TEXT)],
  [ANY_PORT, new Set(ANY_PORT)],
]);

function orAny(list: readonly Value[], any: readonly Value[]): readonly Value[] {
  return list.length > 0 ? list : any;
}

/** The list criteria in the order Envoy's combinations nest them (outermost first). */
const LISTS = [
  (m: ChainMatch): readonly Value[] => orAny(m.prefixRanges, ANY_TEXT),
  (m: ChainMatch): readonly Value[] => orAny(m.serverNames, ANY_TEXT),
  (m: ChainMatch): readonly Value[] => orAny(m.applicationProtocols, ANY_TEXT),
  (m: ChainMatch): readonly Value[] => orAny(m.directSourcePrefixRanges, ANY_TEXT),
  (m: ChainMatch): readonly Value[] => orAny(m.sourcePrefixRanges, ANY_TEXT),
  (m: ChainMatch): readonly Value[] => orAny(m.sourcePorts, ANY_PORT),
] as const;

/** A chain prepared for comparison: its lists (with "any"), a set per list, its scalar key. */
interface Prepared {
  readonly name: string;
  readonly scalars: string;
  readonly lists: readonly (readonly Value[])[];
  readonly sets: readonly ReadonlySet<Value>[];
}

function prepare(chain: ChainView): Prepared {
  const m = chain.match;
  const lists = LISTS.map((list) => list(m));
  return {
    name: chain.name,
    scalars: `${String(m.destinationPort)}\0${m.transportProtocol}\0${m.sourceType}`,
    lists,
    sets: lists.map((l) => ANY_SETS.get(l) ?? new Set(l)),
  };
}

/** Prepared forms of chain views seen before (views are kept per immutable chain object). */
const preparedViews = new WeakMap<ChainView, Prepared>();

/**
 * The listener's chains prepared, one distinct object per position: a view listed twice gets a
 * fresh copy the second time, so the index can tell the positions apart by identity.
 */
function prepareAll(chains: readonly ChainView[]): Prepared[] {
  const used = new Set<Prepared>();
  return chains.map((view) => {
    let p = preparedOf(view);
    if (used.has(p)) p = prepare(view);
    used.add(p);
    return p;
  });
}

/**
 * Index of a set of prepared chains: scalar key → per list criterion, value → the chains holding
 * it. It is kept between checks and updated by the difference: the next version of a listener
 * of 3,500 chains and 50,000 source ranges differs in a chain or two.
 */
class ChainIndex {
  readonly #byScalars = new Map<string, Map<Value, Set<Prepared>>[]>();
  readonly #members = new Set<Prepared>();
  /** The chains each member collides with (the relation is symmetric); most have none. */
  readonly #partners = new Map<Prepared, Set<Prepared>>();
  #version = 0;

  /** Counts changes: who holds the index can tell whether another check moved it since. */
  get version(): number {
    return this.#version;
  }

  get members(): ReadonlySet<Prepared> {
    return this.#members;
  }

  /** The members that collide with `chain` (every list criterion shares a value, scalars equal). */
  partners(chain: Prepared): ReadonlySet<Prepared> {
    return this.#partners.get(chain) ?? NONE;
  }

  #link(a: Prepared, b: Prepared): void {
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      const set = this.#partners.get(x);
      if (set === undefined) this.#partners.set(x, new Set([y]));
      else set.add(y);
    }
  }

  add(chain: Prepared): void {
    if (this.#members.has(chain)) return;
    this.#version += 1;
    this.#members.add(chain);
    let buckets = this.#byScalars.get(chain.scalars);
    if (buckets === undefined) {
      buckets = LISTS.map(() => new Map<Value, Set<Prepared>>());
      this.#byScalars.set(chain.scalars, buckets);
    }
    for (const [c, set] of chain.sets.entries()) {
      const byValue = buckets[c];
      if (byValue === undefined) continue;
      for (const v of set) {
        const bucket = byValue.get(v);
        if (bucket === undefined) byValue.set(v, new Set([chain]));
        else bucket.add(chain);
      }
    }
    // Only an added chain can make a new pair, so the pairs are found once, when their later member comes.
    for (const other of this.#candidates(chain)) {
      if (other !== chain && other.scalars === chain.scalars && firstShared(other, chain) !== undefined)
        this.#link(chain, other);
    }
  }

  delete(chain: Prepared): void {
    if (!this.#members.delete(chain)) return;
    this.#version += 1;
    for (const other of this.#partners.get(chain) ?? []) this.#partners.get(other)?.delete(chain);
    this.#partners.delete(chain);
    const buckets = this.#byScalars.get(chain.scalars) ?? [];
    for (const [c, set] of chain.sets.entries()) {
      const byValue = buckets[c];
      for (const v of set) {
        const bucket = byValue?.get(v);
        bucket?.delete(chain);
        if (bucket?.size === 0) byValue?.delete(v);
      }
    }
  }

  /**
   * The chains that share a value with `chain` in its most selective criterion (itself
   * included). A criterion whose every value only the chain holds proves it collides with
   * nobody: the usual case, one worker's /32s, costs one lookup per range.
   */
  #candidates(chain: Prepared): Set<Prepared> {
    const buckets = this.#byScalars.get(chain.scalars) ?? [];
    let best: ReadonlySet<Prepared>[] = [];
    let bestCost = Number.POSITIVE_INFINITY;
    for (const [c, set] of chain.sets.entries()) {
      const found: ReadonlySet<Prepared>[] = [];
      let cost = 0;
      for (const v of set) {
        const bucket = buckets[c]?.get(v) ?? NONE;
        found.push(bucket);
        cost += bucket.size;
        if (cost >= bestCost) break;
      }
      if (cost >= bestCost) continue;
      // Every bucket holds the chain itself, so cost = size means it holds nothing else.
      if (cost === set.size) return new Set();
      [best, bestCost] = [found, cost];
    }
    const out = new Set<Prepared>();
    for (const bucket of best) for (const p of bucket) out.add(p);
    return out;
  }
}

const NONE: ReadonlySet<Prepared> = new Set();

/** Which index holds a prepared chain: the one the next version of its listener continues from. */
const indexOf = new WeakMap<Prepared, ChainIndex>();

/**
 * An index of exactly `chains`: the one holding most of them, updated by the difference, or a
 * new one when no index holds at least half of them.
 */
function indexFor(chains: readonly Prepared[]): ChainIndex {
  const wanted = new Set(chains);
  const found = chains.map((p) => indexOf.get(p)).find((i) => i !== undefined);
  let stale = 0;
  for (const p of found?.members ?? []) if (!wanted.has(p)) stale += 1;
  const index = found !== undefined && 2 * (found.members.size - stale) >= chains.length ? found : new ChainIndex();
  for (const p of [...index.members]) {
    if (wanted.has(p)) continue;
    index.delete(p);
    if (indexOf.get(p) === index) indexOf.delete(p);
  }
  for (const p of chains) {
    index.add(p);
    indexOf.set(p, index);
  }
  return index;
}

/** The prepared form of a chain view, made once per view. */
function preparedOf(view: ChainView): Prepared {
  let p = preparedViews.get(view);
  if (p === undefined) {
    p = prepare(view);
    preparedViews.set(view, p);
  }
  return p;
}

/**
 * The overlap index of one listener's chains, for a check that continues from a version of the
 * listener without overlaps (continued.ts): the next version takes out the chains that went and
 * puts in those that came. It has no overlap exactly when no chain that came collides with
 * another or repeats a combination, since every pair has a member that came.
 */
export class ListenerOverlaps {
  readonly #index: ChainIndex;
  /** The index's version when this listener last left it: any other change makes it unusable here. */
  #version: number;

  private constructor(index: ChainIndex) {
    this.#index = index;
    this.#version = index.version;
  }

  /** The index of exactly these chains (names unique): the one the whole check keeps, brought up to them. */
  static of(chains: readonly ChainView[]): ListenerOverlaps {
    return new ListenerOverlaps(indexFor(prepareAll(chains)));
  }

  /**
   * Takes `removed` out, then puts `added` in; false when an added chain overlaps, or when the
   * index no longer holds this listener's chains (the whole check of another set took it over).
   */
  replace(removed: readonly ChainView[], added: readonly ChainView[]): boolean {
    const index = this.#index;
    if (index.version !== this.#version) return false;
    for (const view of removed) {
      const p = preparedOf(view);
      index.delete(p);
      if (indexOf.get(p) === index) indexOf.delete(p);
    }
    let clean = true;
    for (const view of added) {
      const p = preparedOf(view);
      index.add(p);
      indexOf.set(p, index);
      if (index.partners(p).size > 0 || firstRepeat(p) !== undefined) clean = false;
    }
    this.#version = index.version;
    return clean;
  }
}

/** Per list criterion, the index in `later`'s list of its first value also in `earlier`; undefined if disjoint. */
function firstShared(earlier: Prepared, later: Prepared): number[] | undefined {
  const at: number[] = [];
  for (const [c, list] of later.lists.entries()) {
    const k = list.findIndex((v) => earlier.sets[c]?.has(v) === true);
    if (k < 0) return undefined;
    at.push(k);
  }
  return at;
}

/**
 * The first repeated combination of a chain in Envoy's order: index 0 everywhere but in the
 * innermost criterion that repeats a value, at its first repetition; undefined without repeats.
 */
function firstRepeat(chain: Prepared): number[] | undefined {
  for (let c = chain.lists.length - 1; c >= 0; c -= 1) {
    const list = chain.lists[c] ?? [];
    if ((chain.sets[c]?.size ?? 0) === list.length) continue;
    const k = list.findIndex((v, i) => list.indexOf(v) < i);
    return chain.lists.map((_, d) => (d === c ? k : 0));
  }
  return undefined;
}

function comboAt(chain: ChainView, prepared: Prepared, at: readonly number[]): MatchCombo {
  const value = (c: number): Value => prepared.lists[c]?.[at[c] ?? 0] ?? "";
  return {
    destinationPort: chain.match.destinationPort,
    prefixRange: String(value(0)),
    serverName: String(value(1)),
    transportProtocol: chain.match.transportProtocol,
    applicationProtocol: String(value(2)),
    directSourcePrefixRange: String(value(3)),
    sourceType: chain.match.sourceType,
    sourcePrefixRange: String(value(4)),
    sourcePort: Number(value(5)),
  };
}

function compareAt(a: readonly number[], b: readonly number[]): number {
  for (let c = 0; c < a.length; c += 1) {
    const d = (a[c] ?? 0) - (b[c] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Overlap findings of a listener's chains: each colliding pair once (about the later chain, at
 * the first combination of it the earlier one holds), each chain that repeats a combination once.
 */
export function chainOverlaps(listener: string, chains: readonly ChainView[]): OverlapFinding[] {
  const prepared = prepareAll(chains);
  const index = indexFor(prepared);
  const position = new Map(prepared.map((p, i) => [p, i]));
  const findings: OverlapFinding[] = [];
  prepared.forEach((chain, i) => {
    const view = chains[i];
    if (view === undefined) return;
    const hits: { prev: number; at: number[] }[] = [];
    for (const earlier of index.partners(chain)) {
      const j = position.get(earlier) ?? i;
      if (j >= i) continue;
      const at = firstShared(earlier, chain);
      if (at !== undefined) hits.push({ prev: j, at });
    }
    const repeat = firstRepeat(chain);
    if (repeat !== undefined) hits.push({ prev: i, at: repeat });
    // Envoy's walk meets combinations in order and, for one combination, earlier chains first.
    hits.sort((x, y) => compareAt(x.at, y.at) || x.prev - y.prev);
    for (const { prev, at } of hits) {
      const combo = describeCombo(comboAt(view, chain, at));
      findings.push({
        at: { listener, chain: chain.name },
        message:
          prev === i
            ? `listener "${listener}": filter chain "${chain.name}" lists the same matching rules twice (${combo})`
            : `listener "${listener}": filter chains "${prepared[prev]?.name ?? ""}" and "${chain.name}" have overlapping matching rules (${combo})`,
      });
    }
  });
  return findings;
}
