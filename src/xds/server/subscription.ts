// What one stream subscribes to for one type URL: the wildcard and the explicit names, kept apart
// (docs/xds-protocol.md#rule-9, #rule-19; go-control-plane's subscription.go). Immutable: a request
// yields the next Subscription and what changed, so the rules are table-tested without a stream.
// https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#how-the-client-specifies-what-resources-to-return
//
// Interned: the Envoys of one node group ask for the same names (every EDS cluster of the group),
// so streams with equal subscriptions share one object — one Set and one copy of each name —
// instead of a Set and a decoded copy of every name per stream, a large part of an idle stream's
// heap. An entry lives as long as some stream holds it.
//
// A request costs what it changes (a Delta stream may add one name per request): the
// content is found by an order-independent hash kept up to date name by name, never by sorting and
// serialising the whole set, and a subscription no other stream shares is changed in place: its
// Set passes to the next Subscription, and the replaced one may not be read again.

import { randomBytes } from "node:crypto";

/** The explicit wildcard name; an empty first request may mean the same (legacy wildcard). */
export const WILDCARD = "*";

/** A request's effect on a subscription. */
export interface SubscriptionChange {
  readonly subscription: Subscription;
  /** Something was added (the wildcard or a name): the answer is due to the subscription. */
  readonly added: boolean;
  /** Something was dropped (the wildcard or a name): SotW may answer with the same content. */
  readonly narrowed: boolean;
  /** Delta: the names the request added (not the wildcard), so a plan can look at those alone. */
  readonly addedNames?: ReadonlySet<string>;
}

/** Per-process random seeds: a client cannot make its names' hashes collide with another stream's on purpose. */
const SEEDS = [randomBytes(4).readUInt32LE(0), randomBytes(4).readUInt32LE(0)] as const;

/** FNV-1a of `name` from `seed`. */
function fnv(seed: number, name: string): number {
  let h = seed;
  for (let i = 0; i < name.length; i += 1) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The hash of a set of names: sums of per-name hashes, so a name is added or taken out alone. */
interface SetHash {
  readonly a: number;
  readonly b: number;
}

const EMPTY_HASH: SetHash = { a: 0, b: 0 };

function withName(h: SetHash, name: string, sign: 1 | -1): SetHash {
  return { a: (h.a + sign * fnv(SEEDS[0], name)) >>> 0, b: (h.b + sign * fnv(SEEDS[1], name)) >>> 0 };
}

function keyOf(wildcard: boolean, legacy: boolean, h: SetHash): string {
  return `${wildcard ? "w" : "-"}${legacy ? "l" : "-"}${String(h.a)}:${String(h.b)}`;
}

/** Subscriptions by content key (see the file comment); weak, so an unused one is collected. */
const interned = new Map<string, WeakRef<Subscription>[]>();
const forget = new FinalizationRegistry<string>((key) => {
  prune(key);
});

function prune(key: string): void {
  const bucket = interned.get(key)?.filter((r) => r.deref() !== undefined);
  if (bucket === undefined || bucket.length === 0) interned.delete(key);
  else interned.set(key, bucket);
}

/** How many contents the intern table holds: a test sees that an unused Subscription is forgotten. */
export function internedContents(): number {
  return interned.size;
}

function sameNames(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const n of a) if (!b.has(n)) return false;
  return true;
}

/** The names of `base` with `added` and without `removed` (a change not applied yet). */
interface Pending {
  readonly base: ReadonlySet<string>;
  readonly added: ReadonlySet<string>;
  readonly removed: ReadonlySet<string>;
  readonly size: number;
}

function holdsExactly(candidate: ReadonlySet<string>, p: Pending): boolean {
  if (candidate.size !== p.size) return false;
  for (const n of candidate) if (!p.added.has(n) && (!p.base.has(n) || p.removed.has(n))) return false;
  return true;
}

let none: Subscription | undefined;

export class Subscription {
  /** Before the type's first request: nothing. */
  static get NONE(): Subscription {
    // Made on first use: a static field may not call into the class as the build compiles it.
    return (none ??= new Subscription(false, false, new Set(), EMPTY_HASH, true));
  }

  #names: Set<string> | undefined;
  /** Another stream found this one (or it is NONE): it never changes in place. */
  #shared: boolean;
  readonly #key: string;

  private constructor(
    /** Everything of the type (legacy empty first request, or "*"). */
    readonly wildcard: boolean,
    /** SotW: the first request was empty, so later empty requests stay wildcard. */
    readonly legacy: boolean,
    names: Set<string>,
    readonly hash: SetHash,
    shared: boolean,
  ) {
    this.#names = names;
    this.#shared = shared;
    this.#key = keyOf(wildcard, legacy, hash);
  }

  /** Explicitly subscribed names ("*" excluded). */
  get names(): ReadonlySet<string> {
    if (this.#names === undefined) throw new Error("a Subscription replaced by its stream's next request was read");
    return this.#names;
  }

  static #register(
    wildcard: boolean,
    legacy: boolean,
    names: Set<string>,
    hash: SetHash,
    shared: boolean,
  ): Subscription {
    const next = new Subscription(wildcard, legacy, names, hash, shared);
    const bucket = interned.get(next.#key);
    if (bucket === undefined) interned.set(next.#key, [new WeakRef(next)]);
    else bucket.push(new WeakRef(next));
    forget.register(next, next.#key);
    return next;
  }

  /** The registered Subscription of this content, if some stream holds one; it is shared from now on. */
  static #find(wildcard: boolean, legacy: boolean, hash: SetHash, p: Pending): Subscription | undefined {
    for (const ref of interned.get(keyOf(wildcard, legacy, hash)) ?? []) {
      const known = ref.deref();
      if (known !== undefined && known.#names !== undefined && holdsExactly(known.#names, p)) {
        known.#shared = true;
        return known;
      }
    }
    return undefined;
  }

  /**
   * The Subscription of this one's names changed by `p`: one a stream holds already, else this
   * one's Set changed in place when no other stream shares it, else a copy.
   */
  #next(wildcard: boolean, legacy: boolean, p: Pending): Subscription {
    let hash = this.hash;
    for (const n of p.added) hash = withName(hash, n, 1);
    for (const n of p.removed) hash = withName(hash, n, -1);
    const found = Subscription.#find(wildcard, legacy, hash, p);
    if (found !== undefined) return found;
    const mine = this.#names;
    if (!this.#shared && mine !== undefined) {
      this.#names = undefined;
      prune(this.#key);
      for (const n of p.removed) mine.delete(n);
      for (const n of p.added) mine.add(n);
      return Subscription.#register(wildcard, legacy, mine, hash, false);
    }
    const names = new Set<string>();
    for (const n of p.base) if (!p.removed.has(n)) names.add(n);
    for (const n of p.added) names.add(n);
    return Subscription.#register(wildcard, legacy, names, hash, false);
  }

  /** Whether a resource of this name is subscribed (by the wildcard or by name). */
  has(name: string): boolean {
    return this.wildcard || this.names.has(name);
  }

  /**
   * SotW: every request carries the whole subscription (resource_names replaces the last one).
   * An empty first request is the legacy wildcard where the type allows it (LDS, CDS); an empty
   * later request stays wildcard only after such a start.
   */
  sotw(requested: readonly string[], first: boolean, legacyAllowed: boolean): SubscriptionChange {
    const legacy = first ? requested.length === 0 && legacyAllowed : requested.length === 0 && this.legacy;
    // A legacy request is an empty one (both cases above).
    const wildcard = legacy || requested.includes(WILDCARD);
    const names = new Set(requested.filter((n) => n !== WILDCARD));
    const current = this.names;
    // The usual request (an ACK) repeats the subscription: keep it.
    if (wildcard === this.wildcard && legacy === this.legacy && sameNames(names, current)) {
      return { subscription: this, added: false, narrowed: false };
    }
    const added = new Set<string>();
    for (const n of names) if (!current.has(n)) added.add(n);
    const removed = new Set<string>();
    for (const n of current) if (!names.has(n)) removed.add(n);
    const narrowed = (this.wildcard && !wildcard) || removed.size > 0;
    const next = this.#next(wildcard, legacy, { base: current, added, removed, size: names.size });
    return { subscription: next, added: (wildcard && !this.wildcard) || added.size > 0, narrowed };
  }

  /**
   * Delta: resource_names_subscribe adds, resource_names_unsubscribe removes; "*" in either adds or
   * removes the wildcard alone. An empty first subscribe is the legacy wildcard where allowed.
   */
  delta(
    subscribe: readonly string[],
    unsubscribe: readonly string[],
    first: boolean,
    legacyAllowed: boolean,
  ): SubscriptionChange {
    const current = this.names;
    const asksWildcard = subscribe.includes(WILDCARD) || (first && subscribe.length === 0 && legacyAllowed);
    let wildcard = this.wildcard || asksWildcard;
    const added = new Set<string>();
    for (const n of subscribe) if (n !== WILDCARD && !current.has(n)) added.add(n);
    // Added is judged before unsubscribing: a name both subscribed and unsubscribed was asked for.
    const addedAny = (!this.wildcard && asksWildcard) || added.size > 0;
    const removed = new Set<string>();
    for (const n of unsubscribe) {
      if (n === WILDCARD) wildcard = false;
      else if (added.has(n)) added.delete(n);
      else if (current.has(n)) removed.add(n);
    }
    const narrowed = (this.wildcard && !wildcard) || removed.size > 0;
    // A Delta subscription is never legacy (#next below, NONE): only SotW remembers an empty start.
    if (wildcard === this.wildcard && added.size === 0 && removed.size === 0)
      return { subscription: this, added: addedAny, narrowed, addedNames: added };
    const size = current.size + added.size - removed.size;
    const next = this.#next(wildcard, false, { base: current, added, removed, size });
    return { subscription: next, added: addedAny, narrowed, addedNames: added };
  }
}
