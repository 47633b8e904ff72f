// Cross-resource checks on a rendered snapshot: what Envoy would reject (duplicate names,
// overlapping filter chains, partial wildcards, the value rules of required-fields.ts) or silently
// break on (a reference to a cluster, route table or endpoint set that is not there). Pure;
// returns findings (a message and the resources it names), never throws.
import { chainOverlaps } from "./chain-overlap.js";
import { matcherChainNames, readChains } from "../render/chain-match.js";
import type { ResourceAt } from "../render/fields.js";
import type { EnvoyResources, Finding } from "../resources.js";
import { asArray, asNumber, asString, get } from "../../xds/resource/json.js";
import { HTTP_CONNECTION_MANAGER_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../xds/resource/type-urls.js";
import { checkRequiredFields } from "./required-fields.js";

/** Results by resource set: the renderer and the cache both check, the work is done once. */
const checked = new WeakMap<EnvoyResources, readonly Finding[]>();

/**
 * What makes the resource set unfit to push; [] when Envoy would accept it as a whole.
 * Resource sets are immutable once rendered, so the result is remembered per set.
 */
export function consistencyFindings(res: EnvoyResources): readonly Finding[] {
  const memo = checked.get(res);
  if (memo !== undefined) return memo;
  const findings = computeConsistency(res);
  checked.set(res, findings);
  return findings;
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
    const address = asString(get(listener, "address", "socket_address", "address"));
    const port = asNumber(get(listener, "address", "socket_address", "port_value"));
    if (address !== undefined && port !== undefined) {
      const bind = `${address}:${port}`;
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

/**
 * Envoy refuses a LOGICAL_DNS cluster unless its load_assignment holds exactly one locality with
 * exactly one endpoint, a hostname and port
 * (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/service_discovery#logical-dns).
 */
function checkLogicalDns(name: string, cluster: object): Finding[] {
  const at = { cluster: name };
  const localities = asArray(get(cluster, "load_assignment", "endpoints"));
  const endpoints = localities.flatMap((l) => asArray(get(l, "lb_endpoints")));
  if (localities.length !== 1 || endpoints.length !== 1)
    return [
      { at, message: `LOGICAL_DNS cluster "${name}" must have a single locality_lb_endpoint and a single lb_endpoint` },
    ];
  const socket = get(endpoints[0], "endpoint", "address", "socket_address");
  if ((asString(get(socket, "address")) ?? "") === "" || (asNumber(get(socket, "port_value")) ?? 0) === 0)
    return [{ at, message: `LOGICAL_DNS cluster "${name}": its endpoint needs a hostname and a port` }];
  return [];
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
    for (const sn of chain.match.serverNames) {
      if (sn.includes("*") && !(sn.startsWith("*.") && !sn.slice(1).includes("*"))) {
        errors.push({
          at: { listener: name, chain: chain.name, serverName: sn },
          message: `listener "${name}" filter chain "${chain.name}": server name "${sn}" is a partial wildcard (only a leading "*." is allowed)`,
        });
      }
    }
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

/** The cluster and route configuration names of one check; the same objects while their names are the same. */
interface NameSets {
  readonly clusters: ReadonlySet<string>;
  readonly routeConfigs: ReadonlySet<string>;
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

/** What a filter chain names that is not there: tcp_proxy clusters, RDS and inline route configurations. */
function checkChainRefs(
  name: string,
  chainName: string,
  chain: unknown,
  { clusters, routeConfigs }: NameSets,
): Finding[] {
  const errors: Finding[] = [];
  {
    const where = `listener "${name}" filter chain "${chainName}"`;
    const chainAt: ResourceAt = { listener: name, chain: chainName };
    for (const filter of asArray(get(chain, "filters"))) {
      const config = get(filter, "typed_config");
      const type = get(config, "@type");
      if (type === TCP_PROXY_TYPE_URL) {
        for (const c of tcpProxyClusters(config)) {
          if (!clusters.has(c))
            errors.push({
              at: { ...chainAt, cluster: c },
              message: `${where}: tcp_proxy cluster "${c}" does not exist`,
            });
        }
      } else if (type === HTTP_CONNECTION_MANAGER_TYPE_URL) {
        const rds = asString(get(config, "rds", "route_config_name"));
        if (rds !== undefined && !routeConfigs.has(rds)) {
          errors.push({
            at: { ...chainAt, routeConfig: rds },
            message: `${where}: RDS route configuration "${rds}" does not exist`,
          });
        }
        const inline = get(config, "route_config");
        if (inline !== undefined) {
          errors.push(...checkRouteConfig(inline, clusters).map((f) => ({ ...f, at: { ...chainAt, ...f.at } })));
        }
      }
    }
  }
  return errors;
}

function tcpProxyClusters(config: unknown): string[] {
  const single = asString(get(config, "cluster"));
  if (single !== undefined) return [single];
  return asArray(get(config, "weighted_clusters", "clusters")).map((c) => asString(get(c, "name")) ?? "");
}

function checkRouteConfig(rc: unknown, clusters: ReadonlySet<string>): Finding[] {
  const errors: Finding[] = [];
  const rcName = asString(get(rc, "name")) ?? "";
  const vhostNames = new Set<string>();
  const domainOwner = new Map<string, string>();
  for (const vh of asArray(get(rc, "virtual_hosts"))) {
    const vhName = asString(get(vh, "name")) ?? "";
    const vhAt: ResourceAt = { routeConfig: rcName, virtualHost: vhName };
    if (vhostNames.has(vhName)) {
      errors.push({ at: vhAt, message: `route configuration "${rcName}": duplicate virtual host name "${vhName}"` });
    }
    vhostNames.add(vhName);
    for (const d of asArray(get(vh, "domains"))) {
      const domain = (asString(d) ?? "").toLowerCase();
      const other = domainOwner.get(domain);
      if (other !== undefined) {
        errors.push({
          at: { ...vhAt, serverName: domain },
          message: `route configuration "${rcName}": domain "${domain}" is in virtual hosts "${other}" and "${vhName}"`,
        });
      } else {
        domainOwner.set(domain, vhName);
      }
    }
    for (const route of asArray(get(vh, "routes"))) {
      const single = asString(get(route, "route", "cluster"));
      const weighted = asArray(get(route, "route", "weighted_clusters", "clusters")).map(
        (c) => asString(get(c, "name")) ?? "",
      );
      for (const c of single !== undefined ? [single] : weighted) {
        if (!clusters.has(c)) {
          errors.push({
            at: { ...vhAt, cluster: c },
            message: `route configuration "${rcName}" virtual host "${vhName}": cluster "${c}" does not exist`,
          });
        }
      }
    }
  }
  return errors;
}
