// What a stream sends next for one type, and the make-before-break rules that hold it back or
// keep stale resources around. Pure functions over a stream's per-type state (see Session).
import type { CachedResource, TypeSnapshot } from "../cache/snapshot.js";
import { setVersion } from "../cache/snapshot.js";
import { CLUSTER_TYPE_URL, ENDPOINT_TYPE_URL, LISTENER_TYPE_URL, ROUTE_TYPE_URL } from "../resource/type-urls.js";
import type { PushRecord } from "../client-status.js";
import { HeldMap } from "./held-map.js";
import type { Held } from "./memory.js";
import type { Subscription } from "./subscription.js";

/** Delta: the client was told this name does not exist. */
export const ABSENT: Held = { version: "", res: undefined };
/** Holds nothing. */
export const NO_HELD: ReadonlyMap<string, Held> = new Map();
/** No resources. */
export const NOTHING: ReadonlyMap<string, CachedResource> = new Map();

/**
 * What a client holds of a cached resource: one object per CachedResource, shared by every
 * stream that holds it, instead of a {version, res} per stream and resource.
 */
const heldByResource = new WeakMap<CachedResource, Held>();

/** The shared Held of a cached resource. */
export function heldOf(r: CachedResource): Held {
  let h = heldByResource.get(r);
  if (h === undefined) {
    h = { version: r.version, res: r };
    heldByResource.set(r, h);
  }
  return h;
}

/**
 * Every resource of a type snapshot as held state, one map per snapshot shared by the streams
 * that hold all of it (the usual idle SotW stream: wildcard LDS/CDS, EDS/RDS of every name).
 */
const heldBySnapshot = new WeakMap<TypeSnapshot, ReadonlyMap<string, Held>>();

function heldAll(typeSnap: TypeSnapshot): ReadonlyMap<string, Held> {
  let m = heldBySnapshot.get(typeSnap);
  if (m === undefined) {
    m = new Map([...typeSnap.resources].map(([n, r]) => [n, heldOf(r)]));
    heldBySnapshot.set(typeSnap, m);
  }
  return m;
}

/**
 * The client was last sent exactly this type snapshot (every resource, as its shared held map) at
 * its version, and nothing in its subscription is outside it: planSotw and planDelta would find
 * nothing to send. Checked first so that the pumps a change and its ACKs cause on every stream
 * do not walk the types that did not change (thousands of clusters and endpoints per stream).
 */
function holdsExactly(ts: TypeState, typeSnap: TypeSnapshot | undefined): typeSnap is TypeSnapshot {
  if (typeSnap === undefined || ts.firstPending || !holdsAllOf(ts, typeSnap)) return false;
  return namesWithin(ts.subscription, typeSnap);
}

/** The stream holds every resource of the type snapshot, as its shared held map. */
export function holdsAllOf(ts: TypeState, typeSnap: TypeSnapshot | undefined): boolean {
  return typeSnap !== undefined && ts.held === heldBySnapshot.get(typeSnap);
}

/** Whether every name a subscription names is in the snapshot: per (interned) subscription and snapshot. */
const within = new WeakMap<TypeSnapshot, WeakMap<Subscription, boolean>>();

function namesWithin(sub: Subscription, typeSnap: TypeSnapshot): boolean {
  let bySub = within.get(typeSnap);
  if (bySub === undefined) within.set(typeSnap, (bySub = new WeakMap()));
  let answer = bySub.get(sub);
  if (answer === undefined) {
    answer = [...sub.names].every((n) => typeSnap.resources.has(n));
    bySub.set(sub, answer);
  }
  return answer;
}

/**
 * Whether a plan would find nothing to send because none of its inputs moved since the last one
 * that found nothing (or since the last response): the same type snapshot, held map and
 * subscription objects (all immutable), no first request or narrowing pending. The streams that do
 * not hold a snapshot's shared map (a Delta EDS stream subscribed to names beside the snapshot's)
 * are then not walked again on every pump of a change and of its ACKs.
 */
export function isQuiet(ts: TypeState, typeSnap: TypeSnapshot | undefined): boolean {
  return (
    typeSnap !== undefined &&
    ts.quietSnap === typeSnap &&
    ts.quietHeld === ts.held &&
    ts.quietSub === ts.subscription &&
    !ts.firstPending &&
    !ts.narrowed
  );
}

/**
 * Delta: the names subscribed since the stream was quiet, when nothing else moved — the same type
 * snapshot and held map, so nothing held is gone and nothing is retained — else undefined. A plan
 * then looks at these names alone (planDelta), and a request costs what it adds.
 */
export function onlyAdded(ts: TypeState, typeSnap: TypeSnapshot | undefined): ReadonlySet<string> | undefined {
  const still = typeSnap !== undefined && ts.quietSnap === typeSnap && ts.quietHeld === ts.held;
  return still && !ts.firstPending && !ts.narrowed ? ts.addedSinceQuiet : undefined;
}

/**
 * Records the inputs a plan found nothing to send for (after a response: its resulting state),
 * unless something is retained or something held is gone — those answers depend on other types.
 * `incremental`: the plan looked at onlyAdded's names alone, so nothing held can be gone (what it
 * added is the snapshot's or absent) and the held map is not walked again.
 */
export function markQuiet(
  ts: TypeState,
  typeSnap: TypeSnapshot | undefined,
  retained: ReadonlyMap<string, CachedResource>,
  incremental = false,
): void {
  const quiet =
    typeSnap !== undefined && retained.size === 0 && (incremental || allGone(ts, typeSnap.resources) === NOTHING);
  ts.quietSnap = quiet ? typeSnap : undefined;
  ts.quietHeld = quiet ? ts.held : undefined;
  ts.quietSub = quiet ? ts.subscription : undefined;
  ts.addedSinceQuiet = undefined;
}

/** The one response of a type awaiting its ACK or NACK. */
export interface Inflight {
  readonly nonce: string;
  readonly version: string;
  readonly next: ReadonlyMap<string, Held>;
  readonly push: PushRecord | undefined;
}

/** A stream's subscription and client-state knowledge for one type URL. */
export interface TypeState {
  readonly typeUrl: string;
  /** What the client asked for (wildcard and names); replaced by each request. */
  subscription: Subscription;
  held: ReadonlyMap<string, Held>;
  acked: ReadonlyMap<string, Held>;
  /**
   * SotW EDS/RDS: everything sent and still subscribed. Absence from a response does not delete
   * these for the client, so it may still hold (and use) what the latest response left out.
   */
  kept: ReadonlyMap<string, Held>;
  inflight: Inflight | undefined;
  /** Latest nonce sent for this type on this stream ("" before the first response). */
  lastNonce: string;
  /** Version of the latest response sent. */
  lastVersion: string;
  /** The type's first request still awaits its first response. */
  firstPending: boolean;
  /** Delta: the first request claimed versions, so only differences are sent. */
  resyncOnly: boolean;
  /** Subscription changed since the last response (cause "subscription"), and when. */
  subscriptionChanged: boolean;
  /** SotW: names were dropped; the next answer may carry the current version for the same content. */
  narrowed: boolean;
  subscribedAt: number;
  /**
   * The inputs of the last plan that found nothing to send, or of the last response (see
   * isQuiet): the type snapshot, the held map and the subscription, while nothing held was gone.
   */
  quietSnap: TypeSnapshot | undefined;
  quietHeld: ReadonlyMap<string, Held> | undefined;
  quietSub: Subscription | undefined;
  /**
   * Delta: the names requests added since quietSub was recorded, while they only added names
   * (the subscription is quietSub's names and these); undefined otherwise. See onlyAdded.
   */
  addedSinceQuiet: Set<string> | undefined;
}

/**
 * A stream's TypeStates in push order. An array, not a Map: a stream has a handful of types, and
 * the Map's table is a measurable part of an idle stream's heap.
 */
export type StreamTypes = readonly TypeState[];

/** The state of `typeUrl` on a stream, if the stream subscribed it. */
export function stateOf(types: StreamTypes, typeUrl: string): TypeState | undefined {
  return types.find((t) => t.typeUrl === typeUrl);
}

/** A response about to be sent and the client state it leads to. */
export interface Plan {
  readonly version: string;
  readonly changed: readonly CachedResource[];
  readonly entries: readonly Uint8Array[];
  readonly removed: readonly string[];
  readonly next: ReadonlyMap<string, Held>;
  /** Resources in the response (SotW: all; Delta: changed). */
  readonly count: number;
}

/** Rules 7, 10, 11, 12, 13: the full subscribed set, sent only when it differs from what was sent. */
export function planSotw(
  ts: TypeState,
  typeSnap: TypeSnapshot | undefined,
  retained: ReadonlyMap<string, CachedResource>,
): Plan | undefined {
  const sub = ts.subscription;
  // Holding the snapshot's shared map, the client holds nothing gone from it: nothing is retained.
  if (
    !ts.narrowed &&
    holdsExactly(ts, typeSnap) &&
    ts.lastVersion === typeSnap.version &&
    (sub.wildcard || sub.names.size === typeSnap.resources.size)
  )
    return undefined;
  const resources = typeSnap?.resources ?? NOTHING;
  const view = new Map<string, CachedResource>();
  if (sub.wildcard) {
    for (const [n, r] of resources) view.set(n, r);
  } else {
    for (const n of sub.names) {
      const r = resources.get(n);
      if (r) view.set(n, r);
    }
  }
  for (const [n, r] of retained) view.set(n, r);
  const changed: CachedResource[] = [];
  for (const [n, r] of view) if (ts.held.get(n)?.version !== r.version) changed.push(r);
  const same = changed.length === 0 && view.size === ts.held.size;
  const version =
    retained.size > 0
      ? `${typeSnap?.version ?? ""}+${setVersion(retained.values())}`
      : (typeSnap?.version ?? setVersion([]));
  // Same content, but the client is behind the current version: once nothing is retained any
  // more, or when it just narrowed its subscription (a request we answer), tell it.
  const behind = version !== ts.lastVersion && (ts.lastVersion.includes("+") || ts.narrowed);
  ts.narrowed = false;
  if (same && !ts.firstPending && !behind) return undefined;
  const entries: Uint8Array[] = [];
  for (const r of view.values()) entries.push(...r.sotwEntry);
  const whole = typeSnap !== undefined && retained.size === 0 && view.size === resources.size;
  const next = whole ? heldAll(typeSnap) : new Map([...view].map(([n, r]) => [n, heldOf(r)]));
  return { version, changed, entries, removed: [], next, count: view.size };
}

/** Rules 17, 18, 19, 20: only what differs from what the client holds; gone names in removed_resources. */
export function planDelta(
  ts: TypeState,
  typeSnap: TypeSnapshot | undefined,
  retained: ReadonlyMap<string, CachedResource>,
): Plan | undefined {
  if (retained.size === 0 && holdsExactly(ts, typeSnap)) return undefined;
  // Holding the held map of a quiet plan on the same snapshot, the client holds nothing gone from
  // it (markQuiet): nothing is retained.
  const added = onlyAdded(ts, typeSnap);
  if (added !== undefined && typeSnap !== undefined) return planAdded(ts, typeSnap, added);
  const resources = typeSnap?.resources ?? NOTHING;
  const next = new Map(ts.held);
  const changed: CachedResource[] = [];
  const removed: string[] = [];
  const consider = (name: string, explicit: boolean): void => {
    const r = resources.get(name) ?? retained.get(name);
    const h = ts.held.get(name);
    if (r) {
      if (h?.version !== r.version) {
        changed.push(r);
        next.set(name, heldOf(r));
      }
    } else if (explicit && h?.version !== "") {
      removed.push(name);
      next.set(name, ABSENT);
    }
  };
  const { wildcard, names } = ts.subscription;
  if (wildcard) for (const name of resources.keys()) consider(name, names.has(name));
  for (const name of names) if (!(wildcard && resources.has(name))) consider(name, true);
  for (const [name, h] of ts.held) {
    if (names.has(name) || resources.has(name) || retained.has(name)) continue;
    next.delete(name);
    if (wildcard && h.version !== "") removed.push(name);
  }
  if (changed.length === 0 && removed.length === 0 && !(ts.firstPending && !ts.resyncOnly)) {
    if (next.size !== ts.held.size) ts.held = next;
    ts.firstPending = false;
    return undefined;
  }
  changed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  removed.sort();
  return {
    version: typeSnap?.version ?? setVersion([]),
    changed,
    entries: changed.flatMap((r) => r.deltaEntry),
    removed,
    next: typeSnap !== undefined && holdsAll(next, typeSnap) ? heldAll(typeSnap) : next,
    count: changed.length,
  };
}

/** Held maps at least this large are extended as a HeldMap rather than copied (a copy is cheaper below). */
const HELD_MAP_MIN = 256;

/**
 * planDelta when only names were added since the stream was quiet (onlyAdded): what it sends for
 * those names is all that can differ, so nothing else is walked and the held map is extended, not
 * copied.
 */
function planAdded(ts: TypeState, typeSnap: TypeSnapshot, added: ReadonlySet<string>): Plan | undefined {
  const changed: CachedResource[] = [];
  const removed: string[] = [];
  const entries: [string, Held][] = [];
  for (const name of added) {
    const r = typeSnap.resources.get(name);
    const h = ts.held.get(name);
    if (r) {
      if (h?.version !== r.version) {
        changed.push(r);
        entries.push([name, heldOf(r)]);
      }
    } else if (h?.version !== "") {
      removed.push(name);
      entries.push([name, ABSENT]);
    }
  }
  if (changed.length === 0 && removed.length === 0) return undefined;
  changed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  removed.sort();
  const next =
    ts.held.size + entries.length >= HELD_MAP_MIN
      ? HeldMap.of(ts.held).with(entries)
      : new Map([...ts.held, ...entries]);
  return {
    version: typeSnap.version,
    changed,
    entries: changed.flatMap((r) => r.deltaEntry),
    removed,
    next: holdsAll(next, typeSnap) ? heldAll(typeSnap) : next,
    count: changed.length,
  };
}

/** Whether `held` is exactly every resource of the snapshot, as held through heldOf. */
function holdsAll(held: ReadonlyMap<string, Held>, typeSnap: TypeSnapshot): boolean {
  if (held.size !== typeSnap.resources.size) return false;
  for (const [n, h] of held) {
    const r = typeSnap.resources.get(n);
    if (r === undefined || h !== heldOf(r)) return false;
  }
  return true;
}

/**
 * Rule 14, "remove stale clusters last": clusters (and their endpoints) gone from the snapshot
 * stay served while the client's listeners or routes, as sent or as acknowledged, still use them.
 */
export function retainedFor(
  ts: TypeState,
  resources: ReadonlyMap<string, CachedResource>,
  types: StreamTypes,
  remembered: (typeUrl: string) => readonly ReadonlyMap<string, Held>[],
): ReadonlyMap<string, CachedResource> {
  // Nothing the client holds is gone from the snapshot (every change but a removal): nothing to
  // keep, without gathering what its listeners use.
  if (allGone(ts, resources) === NOTHING) return NOTHING;
  let needed: Set<string>;
  if (ts.typeUrl === CLUSTER_TYPE_URL) {
    needed = new Set();
    for (const t of [LISTENER_TYPE_URL, ROUTE_TYPE_URL]) {
      const s = stateOf(types, t);
      // Not subscribed (yet) on this stream: a reconnecting client may still hold what an
      // earlier stream gave it, and its listener request may simply not have arrived yet.
      const maps = s ? [s.held, s.acked, s.kept] : remembered(t);
      for (const m of maps) {
        for (const h of m.values()) {
          // A listener known only by version (Delta reconnect) may use any cluster: keep them all.
          if (!h.res && h.version !== "") return allGone(ts, resources);
          for (const c of h.res?.references.clusters ?? []) needed.add(c);
        }
      }
    }
  } else if (ts.typeUrl === ENDPOINT_TYPE_URL) {
    needed = new Set();
    const cds = stateOf(types, CLUSTER_TYPE_URL);
    if (cds) {
      for (const m of [cds.held, cds.acked, cds.kept]) {
        for (const h of m.values()) {
          if (!h.res && h.version !== "") return allGone(ts, resources);
          const e = h.res?.references.endpoints;
          if (e !== undefined) needed.add(e);
        }
      }
    }
  } else {
    return NOTHING;
  }
  let out: Map<string, CachedResource> | undefined;
  for (const [name, h] of ts.held) {
    if (h.res && !resources.has(name) && needed.has(name)) (out ??= new Map()).set(name, h.res);
  }
  return out ?? NOTHING;
}

/**
 * Rule 15 on updates: "Warming of Cluster is completed only when a ClusterLoadAssignment response
 * is supplied by management server ... both during Envoy initialization and when the Cluster is
 * updated" (https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#resource-warming).
 * After updated clusters are sent, their ClusterLoadAssignments count as not held, so the next EDS plan on
 * the stream sends them again even when the endpoints did not change; otherwise the updated cluster
 * stays warming (found by the Envoy stand-in, test/xds/server/warming.test.ts).
 */
export function rewarmEndpoints(clusters: readonly CachedResource[], types: StreamTypes): void {
  const eds = stateOf(types, ENDPOINT_TYPE_URL);
  if (!eds) return;
  let held: Map<string, Held> | undefined;
  for (const c of clusters) {
    const e = c.references.endpoints;
    if (e !== undefined && eds.held.has(e)) (held ??= new Map(eds.held)).delete(e);
  }
  if (held) eds.held = held;
}

/** EDS and RDS: a SotW response leaving a name out does not delete it on the client. */
export function incrementalInSotw(typeUrl: string): boolean {
  return typeUrl === ENDPOINT_TYPE_URL || typeUrl === ROUTE_TYPE_URL;
}

/** Every resource the client holds that the snapshot no longer has. */
function allGone(ts: TypeState, resources: ReadonlyMap<string, CachedResource>): ReadonlyMap<string, CachedResource> {
  let out: Map<string, CachedResource> | undefined;
  for (const [name, h] of ts.held) if (h.res && !resources.has(name)) (out ??= new Map()).set(name, h.res);
  return out ?? NOTHING;
}

/**
 * Rules 15, 16: a listener or route table that uses a cluster the client receives here waits
 * until the client ACKed that cluster and, for an EDS cluster on a stream that subscribes
 * endpoints, its ClusterLoadAssignment. Returns what it waits for.
 */
export function waitingFor(ts: TypeState, changed: readonly CachedResource[], types: StreamTypes): string | undefined {
  if (ts.typeUrl !== LISTENER_TYPE_URL && ts.typeUrl !== ROUTE_TYPE_URL) return undefined;
  const cds = stateOf(types, CLUSTER_TYPE_URL);
  if (!cds) return undefined;
  const eds = stateOf(types, ENDPOINT_TYPE_URL);
  for (const r of changed) {
    const waiting = waitingForOne(r, cds, eds);
    if (waiting !== undefined) return waiting;
  }
  return undefined;
}

/** waitingFor of one resource, and the (immutable) client state it was answered for. */
interface WaitMemo {
  readonly inputs: readonly unknown[];
  readonly answer: string | undefined;
}

/**
 * Per resource, the last answer: the streams one change wakes usually share their CDS and EDS
 * state objects (the snapshots' shared held maps), so a listener using 2,000 clusters is checked
 * once per change rather than once per stream.
 */
const waits = new WeakMap<CachedResource, WaitMemo>();

function waitingForOne(r: CachedResource, cds: TypeState, eds: TypeState | undefined): string | undefined {
  const inputs = [cds.subscription, cds.acked, cds.held, eds?.acked, eds?.held];
  const memo = waits.get(r);
  if (memo !== undefined && memo.inputs.every((x, i) => x === inputs[i])) return memo.answer;
  let answer: string | undefined;
  for (const c of r.references.clusters) {
    if (!cds.subscription.has(c)) continue;
    // ACKed, and not being taken away by a response still in flight (the client applies
    // responses in order, so it will have applied that one first).
    const acked = cds.acked.get(c)?.res;
    if (!acked || !cds.held.get(c)?.res) {
      answer = `cluster "${c}" to be acknowledged`;
      break;
    }
    // ACKed rather than sent: a response can cross an unsubscription, and only the ACK's
    // resource names tell what the client kept.
    const e = acked.references.endpoints;
    if (e !== undefined && eds !== undefined && (!eds.acked.get(e)?.res || !eds.held.get(e)?.res)) {
      answer = `endpoints "${e}" to be acknowledged`;
      break;
    }
  }
  waits.set(r, { inputs, answer });
  return answer;
}
