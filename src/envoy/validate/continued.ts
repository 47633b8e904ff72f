// The consistency check continued from the set before: a resource set that follows one found
// clean, differing from it in a few resources (one attachment's chains among 35,000), is proved
// clean by checking only the resources that differ, against names and reference counts kept from
// the check before. It answers only "clean"; anything it cannot prove sends the caller to the whole
// check (consistency.ts), which also says what is wrong and in which order.
//
// Both sets' lists are sorted by name (the renderer's contract, EnvoyResources): a walk of the two
// lists side by side finds the resources that went and came by identity (rendered resources are
// immutable, and an unchanged one is the same object), reading names only where they differ. A
// list whose names do not strictly increase ends the continuation: duplicate names are then
// possible, and only the whole check names them.
import { chainView, readChains } from "../render/chain-match.js";
import type { EnvoyResources } from "../resources.js";
import { asArray, asString, compareText, get } from "../../xds/resource/json.js";
import { chainRefs, referencesOf } from "../../xds/resource/references.js";
import { CLUSTER_TYPE_URL, ROUTE_TYPE_URL } from "../../xds/resource/type-urls.js";
import { ListenerOverlaps } from "./chain-overlap.js";
import { changedBetween, type Changed } from "../../util/merge-sorted.js";
import { assignmentFieldFindings, chainFieldFindings, clusterFieldFindings } from "./required-fields.js";
import {
  checkChainRefs,
  checkLogicalDns,
  checkRouteConfig,
  listenerBind,
  serverNameFindings,
  type NameSets,
} from "./resource-rules.js";

/** Names counted: how many resources reference each. */
class Counts {
  readonly #counts = new Map<string, number>();

  add(names: readonly string[], by: number): void {
    for (const n of names) {
      const c = (this.#counts.get(n) ?? 0) + by;
      if (c === 0) this.#counts.delete(n);
      else this.#counts.set(n, c);
    }
  }

  has(name: string): boolean {
    return this.#counts.has(name);
  }
}

/** One listener of a clean set: its chains (sorted, names unique) and their overlap index. */
interface ListenerState {
  readonly chains: readonly unknown[];
  readonly overlaps: ListenerOverlaps;
}

/** What the continuation keeps of a clean set; it moves to the next set when that one is proved clean. */
interface CleanState {
  readonly names: { readonly clusters: Set<string>; readonly routeConfigs: Set<string> };
  readonly assignments: Set<string>;
  /** Cluster names referenced by tcp_proxy filters and routes (RDS and inline route configurations). */
  readonly clusterRefs: Counts;
  /** Route configuration names referenced through RDS. */
  readonly routeConfigRefs: Counts;
  /** ClusterLoadAssignment names the EDS clusters ask for. */
  readonly edsRefs: Counts;
  readonly listeners: Map<string, ListenerState>;
}

/** A listener the set before did not have: no chains, and an index of its own. */
const NEW_LISTENER = (): ListenerState => ({ chains: [], overlaps: ListenerOverlaps.of([]) });

/** Kept per clean set, until a continuation takes it over. */
const states = new WeakMap<EnvoyResources, CleanState>();

/**
 * True when `next` is proved clean (the whole check would find nothing) from `previous`, which
 * the whole check found clean; false when it cannot tell. A set is continued from once: its state
 * moves to `next` (a second continuation from `previous` starts over from `previous` itself).
 */
export function continuedClean(previous: EnvoyResources, next: EnvoyResources): boolean {
  const state = states.get(previous) ?? initialState(previous);
  states.delete(previous);
  if (state === undefined || !advance(state, previous, next)) return false;
  states.set(next, state);
  return true;
}

const nameOf = (o: unknown): string => asString(get(o, "name")) ?? "";
const clusterNameOf = (o: unknown): string => asString(get(o, "cluster_name")) ?? "";

/** EDS: the assignment name a cluster asks for; undefined for other cluster types. */
function edsName(cluster: object): string | undefined {
  return referencesOf(CLUSTER_TYPE_URL, cluster).endpoints;
}

/** A listener the continuation does not follow: its chains are picked by a matcher, or it has chains of other kinds. */
function unfollowed(listener: unknown): boolean {
  return (
    get(listener, "filter_chain_matcher") !== undefined ||
    get(listener, "default_filter_chain") !== undefined ||
    get(listener, "api_listener") !== undefined ||
    asArray(get(listener, "filter_chains")).length === 0
  );
}

function strictlySorted(items: readonly unknown[], key: (o: unknown) => string): boolean {
  for (let i = 1; i < items.length; i++) if (compareText(key(items[i - 1]), key(items[i])) >= 0) return false;
  return true;
}

/** The state of a set the whole check found clean; undefined when it is not one the continuation follows. */
function initialState(res: EnvoyResources): CleanState | undefined {
  if (
    !strictlySorted(res.listeners, nameOf) ||
    !strictlySorted(res.clusters, nameOf) ||
    !strictlySorted(res.endpoints, clusterNameOf) ||
    !strictlySorted(res.routes, nameOf) ||
    res.listeners.some(unfollowed)
  )
    return undefined;
  const state: CleanState = {
    names: { clusters: new Set(res.clusters.map(nameOf)), routeConfigs: new Set(res.routes.map(nameOf)) },
    assignments: new Set(res.endpoints.map(clusterNameOf)),
    clusterRefs: new Counts(),
    routeConfigRefs: new Counts(),
    edsRefs: new Counts(),
    listeners: new Map(),
  };
  for (const listener of res.listeners) {
    const chains = asArray(get(listener, "filter_chains"));
    if (!strictlySorted(chains, nameOf)) return undefined;
    for (const chain of chains) countChain(state, chain, 1);
    state.listeners.set(nameOf(listener), { chains, overlaps: ListenerOverlaps.of(readChains(listener)) });
  }
  for (const rc of res.routes) state.clusterRefs.add(routeClusters(rc), 1);
  for (const cluster of res.clusters) {
    const eds = edsName(cluster);
    if (eds !== undefined) state.edsRefs.add([eds], 1);
  }
  return state;
}

/**
 * The resources that went and came between two lists sorted by `key` (changedBetween); undefined
 * when `after`'s names do not strictly increase. Only the neighbours of what came need a look: every
 * other pair of neighbours was a pair in `before`, whose names did.
 */
function difference<T>(before: readonly T[], after: readonly T[], key: (o: T) => string): Changed<T> | undefined {
  const changed = changedBetween(before, after, (x, y) => compareText(key(x), key(y)));
  for (const j of changed.addedAt) {
    const name = key(after[j] as T);
    if (j > 0 && compareText(key(after[j - 1] as T), name) >= 0) return undefined;
    if (j + 1 < after.length && compareText(name, key(after[j + 1] as T)) >= 0) return undefined;
  }
  return changed;
}

function countChain(state: CleanState, chain: unknown, by: 1 | -1): void {
  const refs = chainRefs(chain);
  state.clusterRefs.add(refs.clusters, by);
  state.routeConfigRefs.add(refs.routes, by);
}

/** The clusters a route configuration's routes name. */
function routeClusters(rc: object): readonly string[] {
  return referencesOf(ROUTE_TYPE_URL, rc).clusters;
}

/**
 * Moves `state` from `before` to `after`: every resource that went is taken out of the names and
 * counts, every one that came put in, then what came is checked against the names and what went
 * against the counts. False (and `state` spent) at the first thing it cannot prove clean.
 */
function advance(state: CleanState, before: EnvoyResources, after: EnvoyResources): boolean {
  const listeners = difference(before.listeners, after.listeners, nameOf);
  const clusters = difference(before.clusters, after.clusters, nameOf);
  const endpoints = difference(before.endpoints, after.endpoints, clusterNameOf);
  const routes = difference(before.routes, after.routes, nameOf);
  if (listeners === undefined || clusters === undefined || endpoints === undefined || routes === undefined)
    return false;

  // Taken out first, so a name that goes and comes in one step ends counted once.
  const addedChains: { listener: string; chain: unknown }[] = [];
  const wentListeners = new Set(listeners.removed.map(nameOf));
  for (const listener of listeners.added) {
    const name = nameOf(listener);
    // A listener of a kind not followed: the whole check reads it. A new one came from no chains.
    if (unfollowed(listener)) return false;
    const was = wentListeners.delete(name) ? state.listeners.get(name) : NEW_LISTENER();
    if (was === undefined) return false;
    const chains = asArray(get(listener, "filter_chains"));
    const diff = difference(was.chains, chains, nameOf);
    if (diff === undefined) return false;
    for (const chain of diff.removed) countChain(state, chain, -1);
    for (const chain of diff.added) {
      countChain(state, chain, 1);
      addedChains.push({ listener: name, chain });
    }
    const came = diff.added.map(chainView);
    if (came.some((view) => serverNameFindings(name, view).length > 0)) return false;
    if (!was.overlaps.replace(diff.removed.map(chainView), came)) return false;
    state.listeners.set(name, { chains, overlaps: was.overlaps });
  }
  for (const name of wentListeners) {
    for (const chain of state.listeners.get(name)?.chains ?? []) countChain(state, chain, -1);
    state.listeners.delete(name);
  }
  for (const rc of routes.removed) {
    state.names.routeConfigs.delete(nameOf(rc));
    state.clusterRefs.add(routeClusters(rc), -1);
  }
  for (const rc of routes.added) {
    state.names.routeConfigs.add(nameOf(rc));
    state.clusterRefs.add(routeClusters(rc), 1);
  }
  for (const cluster of clusters.removed) {
    state.names.clusters.delete(nameOf(cluster));
    const eds = edsName(cluster);
    if (eds !== undefined) state.edsRefs.add([eds], -1);
  }
  for (const cluster of clusters.added) {
    state.names.clusters.add(nameOf(cluster));
    const eds = edsName(cluster);
    if (eds !== undefined) state.edsRefs.add([eds], 1);
  }
  for (const a of endpoints.removed) state.assignments.delete(clusterNameOf(a));
  for (const a of endpoints.added) state.assignments.add(clusterNameOf(a));

  // Listeners are few: two binding one address are looked for among all of them.
  const binds = new Set<string>();
  for (const listener of after.listeners) {
    const bind = listenerBind(listener);
    if (bind === undefined) continue;
    if (binds.has(bind)) return false;
    binds.add(bind);
  }
  const names: NameSets = state.names;
  for (const { listener, chain } of addedChains) {
    if (chainFieldFindings(listener, chain).length > 0) return false;
    if (checkChainRefs(listener, nameOf(chain), chain, names).length > 0) return false;
  }
  for (const rc of routes.added) if (checkRouteConfig(rc, names.clusters).length > 0) return false;
  for (const cluster of clusters.added) {
    if (clusterFieldFindings(cluster).length > 0) return false;
    if (get(cluster, "type") === "LOGICAL_DNS" && checkLogicalDns(nameOf(cluster), cluster).length > 0) return false;
    const eds = edsName(cluster);
    if (eds !== undefined && !state.assignments.has(eds)) return false;
  }
  for (const a of endpoints.added) if (assignmentFieldFindings(a).length > 0) return false;
  // What went must not be referenced any more.
  for (const cluster of clusters.removed) {
    const name = nameOf(cluster);
    if (!state.names.clusters.has(name) && state.clusterRefs.has(name)) return false;
  }
  for (const rc of routes.removed) {
    const name = nameOf(rc);
    if (!state.names.routeConfigs.has(name) && state.routeConfigRefs.has(name)) return false;
  }
  for (const a of endpoints.removed) {
    const name = clusterNameOf(a);
    if (!state.assignments.has(name) && state.edsRefs.has(name)) return false;
  }
  return true;
}
