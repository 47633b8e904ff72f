// What an Envoy resource depends on, for make-before-break ordering: a listener needs its
// clusters (TCP proxy, inline routes) and route configurations (RDS), a route configuration its
// clusters, an EDS cluster its ClusterLoadAssignment. Reads proto3 JSON; never throws.
import { asArray, asString, compareText, get } from "./json.js";
import { changedBetween, patchSortedList } from "../../util/merge-sorted.js";
import {
  CLUSTER_TYPE_URL,
  HTTP_CONNECTION_MANAGER_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_TYPE_URL,
  TCP_PROXY_TYPE_URL,
} from "./type-urls.js";

/** Names of other resources one resource needs before a client can use it. */
export interface References {
  /** CDS cluster names. */
  readonly clusters: readonly string[];
  /** RDS route configuration names. */
  readonly routes: readonly string[];
  /** EDS ClusterLoadAssignment name (an EDS cluster's service name); undefined for other clusters. */
  readonly endpoints: string | undefined;
}

/** A resource that references nothing. */
export const NO_REFERENCES: References = { clusters: [], routes: [], endpoints: undefined };

/**
 * References of a resource of type `typeUrl` given as proto3 JSON. `previous`: the references of
 * the version before (the same name), which a large listener's continue from.
 */
export function referencesOf(typeUrl: string, resource: object, previous?: References): References {
  if (typeUrl === LISTENER_TYPE_URL) return listenerRefs(resource, previous);
  if (typeUrl === ROUTE_TYPE_URL) return freeze(routeClusters(resource), [], undefined);
  if (typeUrl === CLUSTER_TYPE_URL) {
    if (get(resource, "type") !== "EDS") return NO_REFERENCES;
    const name = asString(get(resource, "eds_cluster_config", "service_name")) ?? asString(get(resource, "name"));
    return freeze([], [], name);
  }
  return NO_REFERENCES;
}

function freeze(clusters: Iterable<string>, routes: Iterable<string>, endpoints: string | undefined): References {
  return { clusters: [...new Set(clusters)].sort(), routes: [...new Set(routes)].sort(), endpoints };
}

/** A listener of this many chains keeps the counts behind its references, to continue from them. */
const COUNTED_CHAINS = 256;

/** How many chains reference each name: what a large listener's next version continues from. */
interface ChainCounts {
  readonly chains: readonly unknown[];
  readonly clusters: Map<string, number>;
  readonly routes: Map<string, number>;
}

/** Per References object of a large listener, its counts; taken over by the version that continues. */
const countsOf = new WeakMap<References, ChainCounts>();

/**
 * A listener's references. A listener of many chains keeps how many chains name each cluster and
 * route configuration, and its next version patches those counts and its sorted lists at the
 * chains that differ (changedBetween), instead of reading 35,000 chains and sorting 20,000 names
 * again.
 */
function listenerRefs(listener: object, previous: References | undefined): References {
  const chains = asArray(get(listener, "filter_chains"));
  const other = [get(listener, "default_filter_chain"), get(listener, "api_listener", "api_listener")];
  if (other.some((x) => x !== undefined)) return wholeListenerRefs(chains, other);
  const was = previous === undefined ? undefined : countsOf.get(previous);
  if (previous === undefined || was === undefined) {
    if (chains.length < COUNTED_CHAINS) return wholeListenerRefs(chains, []);
    const counts: ChainCounts = { chains, clusters: new Map(), routes: new Map() };
    for (const chain of chains) count(counts, chainRefs(chain), 1, undefined);
    const refs: References = {
      clusters: [...counts.clusters.keys()].sort(),
      routes: [...counts.routes.keys()].sort(),
      endpoints: undefined,
    };
    countsOf.set(refs, counts);
    return refs;
  }
  countsOf.delete(previous);
  const counts: ChainCounts = { chains, clusters: was.clusters, routes: was.routes };
  const moved: Moved = { clusters: { gone: new Set(), came: new Set() }, routes: { gone: new Set(), came: new Set() } };
  const { removed, added } = changedBetween(was.chains, chains, (x, y) => compareText(chainName(x), chainName(y)));
  for (const chain of removed) count(counts, chainRefs(chain), -1, moved);
  for (const chain of added) count(counts, chainRefs(chain), 1, moved);
  const refs: References = {
    clusters: patched(previous.clusters, moved.clusters),
    routes: patched(previous.routes, moved.routes),
    endpoints: undefined,
  };
  countsOf.set(refs, counts);
  return refs;
}

/** Per kind, the names whose count left zero (came) and reached it (gone) in one step. */
interface Moved {
  readonly clusters: { readonly gone: Set<string>; readonly came: Set<string> };
  readonly routes: { readonly gone: Set<string>; readonly came: Set<string> };
}

function count(
  counts: ChainCounts,
  refs: { readonly clusters: readonly string[]; readonly routes: readonly string[] },
  by: 1 | -1,
  moved: Moved | undefined,
): void {
  for (const [names, map, m] of [
    [refs.clusters, counts.clusters, moved?.clusters],
    [refs.routes, counts.routes, moved?.routes],
  ] as const) {
    for (const name of names) {
      const c = (map.get(name) ?? 0) + by;
      if (c === 0) {
        map.delete(name);
        // Every removal comes before every addition: a name that reaches zero did not just come.
        m?.gone.add(name);
      } else {
        map.set(name, c);
        if (m !== undefined && c === 1 && by === 1 && !m.gone.delete(name)) m.came.add(name);
      }
    }
  }
}

function patched(list: readonly string[], { gone, came }: Moved["clusters"]): readonly string[] {
  return gone.size === 0 && came.size === 0 ? list : patchSortedList(list, gone, [...came].sort(), compareText);
}

function chainName(chain: unknown): string {
  return asString(get(chain, "name")) ?? "";
}

function wholeListenerRefs(chains: readonly unknown[], other: readonly unknown[]): References {
  const clusters: string[] = [];
  const routes: string[] = [];
  for (const chain of chains) {
    const refs = chainRefs(chain);
    clusters.push(...refs.clusters);
    routes.push(...refs.routes);
  }
  // A default chain, and the HTTP connection manager a gRPC-style API listener carries directly.
  const [defaultChain, api] = other;
  if (defaultChain !== undefined) {
    const refs = chainRefs(defaultChain);
    clusters.push(...refs.clusters);
    routes.push(...refs.routes);
  }
  const apiRefs = configRefs([api]);
  return freeze([...clusters, ...apiRefs.clusters], [...routes, ...apiRefs.routes], undefined);
}

/**
 * The clusters (TCP proxy, inline route configurations) and RDS route configurations one filter
 * chain names, as many times as it names them. Read again when asked: a continuation asks only
 * for the chains that came or went.
 */
export function chainRefs(chain: unknown): {
  readonly clusters: readonly string[];
  readonly routes: readonly string[];
} {
  return configRefs(asArray(get(chain, "filters")).map((f) => get(f, "typed_config")));
}

/** The clusters and route configurations that filter configurations name. */
function configRefs(configs: readonly unknown[]): { clusters: string[]; routes: string[] } {
  const clusters: string[] = [];
  const routes: string[] = [];
  for (const config of configs) {
    const type = get(config, "@type");
    if (type === TCP_PROXY_TYPE_URL) {
      for (const c of sentTo(config)) if (c !== "") clusters.push(c);
    } else if (type === HTTP_CONNECTION_MANAGER_TYPE_URL) {
      const rds = asString(get(config, "rds", "route_config_name"));
      if (rds !== undefined) routes.push(rds);
      const inline = get(config, "route_config");
      if (inline !== undefined) clusters.push(...routeClusters(inline));
    }
  }
  return { clusters, routes };
}

function routeClusters(routeConfig: unknown): string[] {
  const out: string[] = [];
  for (const vh of asArray(get(routeConfig, "virtual_hosts"))) {
    for (const route of asArray(get(vh, "routes"))) {
      for (const c of sentTo(get(route, "route"))) if (c !== "") out.push(c);
    }
  }
  return out;
}

/**
 * The clusters a tcp_proxy filter's config or a route's action sends to. `cluster` and
 * `weighted_clusters` are one oneof (cluster_specifier), so `cluster` when set, else each weighted
 * cluster's name: "" for one without, a name no set holds. The one reading of both the references
 * above and the consistency check (src/envoy/validate/resource-rules.ts).
 */
export function sentTo(action: unknown): string[] {
  const single = asString(get(action, "cluster"));
  if (single !== undefined) return [single];
  return asArray(get(action, "weighted_clusters", "clusters")).map((c) => asString(get(c, "name")) ?? "");
}
