// Checks of one resource against the names of the set it belongs to: what a filter chain or a
// route configuration names that is not there, the shape Envoy demands of a LOGICAL_DNS cluster,
// the address a listener binds. Pure; shared by the whole check (consistency.ts) and its
// continuation (continued.ts).
import type { ChainView } from "../render/chain-match.js";
import type { ResourceAt } from "../render/fields.js";
import type { Finding } from "../resources.js";
import { asArray, asNumber, asString, get } from "../../xds/resource/json.js";
import { sentTo } from "../../xds/resource/references.js";
import { HTTP_CONNECTION_MANAGER_TYPE_URL, TCP_PROXY_TYPE_URL } from "../../xds/resource/type-urls.js";

/** The cluster and route configuration names of one check; the same objects while their names are the same. */
export interface NameSets {
  readonly clusters: ReadonlySet<string>;
  readonly routeConfigs: ReadonlySet<string>;
}

/**
 * Envoy refuses a LOGICAL_DNS cluster unless its load_assignment holds exactly one locality with
 * exactly one endpoint, a hostname and port
 * (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/upstream/service_discovery#logical-dns).
 */
export function checkLogicalDns(name: string, cluster: object): Finding[] {
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

/** What a filter chain names that is not there: tcp_proxy clusters, RDS and inline route configurations. */
export function checkChainRefs(
  name: string,
  chainName: string,
  chain: unknown,
  { clusters, routeConfigs }: NameSets,
): Finding[] {
  const errors: Finding[] = [];
  const where = `listener "${name}" filter chain "${chainName}"`;
  const chainAt: ResourceAt = { listener: name, chain: chainName };
  for (const filter of asArray(get(chain, "filters"))) {
    const config = get(filter, "typed_config");
    const type = get(config, "@type");
    if (type === TCP_PROXY_TYPE_URL) {
      for (const c of sentTo(config)) {
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
  return errors;
}

export function checkRouteConfig(rc: unknown, clusters: ReadonlySet<string>): Finding[] {
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
      for (const c of sentTo(get(route, "route"))) {
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

/** A chain's partial wildcard server names: Envoy takes only a leading "*.". */
export function serverNameFindings(listener: string, chain: ChainView): Finding[] {
  const errors: Finding[] = [];
  for (const sn of chain.match.serverNames) {
    if (sn.includes("*") && !(sn.startsWith("*.") && !sn.slice(1).includes("*"))) {
      errors.push({
        at: { listener, chain: chain.name, serverName: sn },
        message: `listener "${listener}" filter chain "${chain.name}": server name "${sn}" is a partial wildcard (only a leading "*." is allowed)`,
      });
    }
  }
  return errors;
}

/** The "address:port" a listener binds; undefined when it names no socket address. */
export function listenerBind(listener: unknown): string | undefined {
  const address = asString(get(listener, "address", "socket_address", "address"));
  const port = asNumber(get(listener, "address", "socket_address", "port_value"));
  return address === undefined || port === undefined ? undefined : `${address}:${String(port)}`;
}
