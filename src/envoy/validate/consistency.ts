// Cross-resource checks on a rendered snapshot: what Envoy would reject (duplicate names,
// overlapping filter chains, partial wildcards, the value rules of required-fields.ts) or silently
// break on (a reference to a cluster, route table or endpoint set that is not there). Pure;
// returns findings (a message and the resources it names), never throws.
import { chainOverlaps } from "./chain-overlap.js";
import { matcherChainNames, readChains } from "../render/chain-match.js";
import type { ResourceAt } from "../render/fields.js";
import type { EnvoyResources, Finding } from "../resources.js";
import { asArray, asString, get } from "../../xds/resource/json.js";
import { checkRequiredFields } from "./required-fields.js";
import { continuedClean } from "./continued.js";
import {
  checkChainRefs,
  checkLogicalDns,
  checkRouteConfig,
  listenerBind,
  serverNameFindings,
  type NameSets,
} from "./resource-rules.js";

/** Results by resource set: the renderer and the cache both check, the work is done once. */
const checked = new WeakMap<EnvoyResources, readonly Finding[]>();

/**
 * What makes the resource set unfit to push; [] when Envoy would accept it as a whole.
 * Resource sets are immutable once rendered, so the result is remembered per set. `previous`: the
 * set this one follows (the same proxy's last rendering); when that one was clean, only what
 * differs is checked (continued.ts), and the whole check runs only if that cannot prove it clean.
 */
export function consistencyFindings(res: EnvoyResources, previous?: EnvoyResources): readonly Finding[] {
  const memo = checked.get(res);
  if (memo !== undefined) return memo;
  const findings =
    previous !== undefined &&
    checked.get(previous)?.length === 0 &&
    sizeOf(res) >= CONTINUED_FROM &&
    continuedClean(previous, res)
      ? []
      : computeConsistency(res);
  checked.set(res, findings);
  return findings;
}

/**
 * Sets of fewer resources and chains are checked whole: that costs less than the names and counts
 * a continuation keeps for them (at 1,000 small Infras, ~16 KiB each).
 */
const CONTINUED_FROM = 512;

function sizeOf(res: EnvoyResources): number {
  let size = res.clusters.length + res.endpoints.length + res.routes.length;
  for (const listener of res.listeners) size += 1 + asArray(get(listener, "filter_chains")).length;
  return size;
}

/** The messages of consistencyFindings (the cache refuses a snapshot by them). */
export function checkConsistency(res: EnvoyResources): string[] {
  return consistencyFindings(res).map((f) => f.message);
}

function computeConsistency(res: EnvoyResources): Finding[] {
  const errors: Finding[] = checkRequiredFields(res);
  const clusters = names(res.clusters, "name", "cluster name", (cluster) => ({ cluster }), errors);
  const assignments = names(
    res.endpoints,
    "cluster_name",
    "ClusterLoadAssignment for cluster",
    (cluster) => ({ cluster }),
    errors,
  );
  const routeConfigs = names(
    res.routes,
    "name",
    "route configuration name",
    (routeConfig) => ({ routeConfig }),
    errors,
  );
  names(res.listeners, "name", "listener name", (listener) => ({ listener }), errors);
  const sets = nameSets(clusters, routeConfigs);

  const binds = new Map<string, string>();
  for (const listener of res.listeners) {
    const name = asString(get(listener, "name")) ?? "";
    const bind = listenerBind(listener);
    if (bind !== undefined) {
      const other = binds.get(bind);
      if (other !== undefined)
        errors.push({ at: { listener: name }, message: `listeners "${other}" and "${name}" both bind ${bind}` });
      else binds.set(bind, name);
    }
    errors.push(...checkListener(name, listener, sets));
  }

  for (const rc of res.routes) {
    errors.push(...checkRouteConfig(rc, clusters));
  }

  for (const cluster of res.clusters) {
    const name = asString(get(cluster, "name")) ?? "";
    const type = get(cluster, "type");
    if (type === "LOGICAL_DNS") errors.push(...checkLogicalDns(name, cluster));
    if (type !== "EDS") continue;
    const serviceName = asString(get(cluster, "eds_cluster_config", "service_name")) ?? name;
    if (!assignments.has(serviceName))
      errors.push({ at: { cluster: name }, message: `cluster "${name}" has no ClusterLoadAssignment` });
  }
  return errors;
}

/** Collects a string key of every resource, reporting each repeated value once. */
function names(
  items: readonly object[],
  key: string,
  what: string,
  at: (name: string) => ResourceAt,
  errors: Finding[],
): Set<string> {
  const seen = new Set<string>();
  const reported = new Set<string>();
  for (const item of items) {
    const name = asString(get(item, key)) ?? "";
    if (seen.has(name) && !reported.has(name)) {
      errors.push({ at: at(name), message: `duplicate ${what} "${name}"` });
      reported.add(name);
    }
    seen.add(name);
  }
  return seen;
}

function checkListener(name: string, listener: object, names: NameSets): Finding[] {
  const errors: Finding[] = [];
  const chains = readChains(listener);
  const defaultChain = get(listener, "default_filter_chain");
  // An API listener (gRPC xDS clients) carries its HTTP connection manager instead of chains.
  const apiListener = get(listener, "api_listener", "api_listener");
  if (chains.length === 0 && defaultChain === undefined && apiListener === undefined)
    errors.push({ at: { listener: name }, message: `listener "${name}" has no filter chains` });

  const chainNames = new Set<string>();
  for (const chain of chains) {
    if (chainNames.has(chain.name)) {
      errors.push({
        at: { listener: name, chain: chain.name },
        message: `listener "${name}": duplicate filter chain name "${chain.name}"`,
      });
    }
    chainNames.add(chain.name);
    errors.push(...serverNameFindings(name, chain));
  }
  const matcher = get(listener, "filter_chain_matcher");
  if (matcher === undefined) errors.push(...chainOverlaps(name, chains));
  else errors.push(...matcherRefs(name, matcher, chainNames));

  for (const c of chains) errors.push(...keptChainRefs(name, c.name, c.chain, names));
  if (defaultChain !== undefined) {
    const chainName = asString(get(defaultChain, "name")) ?? "default_filter_chain";
    errors.push(...checkChainRefs(name, chainName, defaultChain, names));
  }
  if (apiListener !== undefined)
    errors.push(...checkChainRefs(name, "api_listener", { filters: [{ typed_config: apiListener }] }, names));
  return errors;
}

/**
 * A filter_chain_matcher picks chains by name: each name it gives must be a chain's (else the
 * connection gets the default chain or is closed), and a chain it never names is never used
 * (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener).
 */
function matcherRefs(name: string, matcher: unknown, chains: ReadonlySet<string>): Finding[] {
  const errors: Finding[] = [];
  const named = new Set(matcherChainNames(matcher));
  for (const chain of named) {
    if (!chains.has(chain))
      errors.push({
        at: { listener: name },
        message: `listener "${name}": filter_chain_matcher names filter chain "${chain}", which does not exist`,
      });
  }
  for (const chain of chains) {
    if (!named.has(chain))
      errors.push({
        at: { listener: name, chain },
        message: `listener "${name}": filter chain "${chain}" is never named by filter_chain_matcher`,
      });
  }
  return errors;
}

/** The name sets of the last checks: a check whose sets hold the same names takes their object. */
const recentSets: NameSets[] = [];
const RECENT_SETS = 8;

function nameSets(clusters: ReadonlySet<string>, routeConfigs: ReadonlySet<string>): NameSets {
  const found = recentSets.find((r) => sameNames(r.clusters, clusters) && sameNames(r.routeConfigs, routeConfigs));
  if (found !== undefined) return found;
  const sets = { clusters, routeConfigs };
  recentSets.unshift(sets);
  recentSets.length = Math.min(recentSets.length, RECENT_SETS);
  return sets;
}

function sameNames(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const n of a) if (!b.has(n)) return false;
  return true;
}

/** A chain's reference findings, per chain object, with what they were checked against. */
const chainRefs = new WeakMap<object, { listener: string; chainName: string; names: NameSets; findings: Finding[] }>();

/**
 * checkChainRefs of a filter chain, kept per chain object (rendered chains are immutable) while
 * its listener's name and the name sets are the same: on a big VLAN only changed chains, or
 * every chain after a cluster set changed, are walked again.
 */
function keptChainRefs(listener: string, chainName: string, chain: object, names: NameSets): Finding[] {
  const kept = chainRefs.get(chain);
  if (kept !== undefined && kept.listener === listener && kept.chainName === chainName && kept.names === names)
    return kept.findings;
  const findings = checkChainRefs(listener, chainName, chain, names);
  chainRefs.set(chain, { listener, chainName, names, findings });
  return findings;
}
