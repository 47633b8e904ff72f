// CDS: one cluster per Upstream. Resolved addresses come over ADS (EDS); a target known only by
// its hostname is resolved by Envoy itself (LOGICAL_DNS), the one place Envoy asks DNS.
import type { Cluster } from "./envoy-types.js";
import type { ObjectProblems } from "../../model/problems.js";
import type { DnsUpstream, Upstream } from "../../model/types.js";
import { adsConfigSource } from "./ads.js";
import { durationFromSeconds } from "../../xds/resource/duration.js";
import type { ProxyFields } from "./fields.js";
import { sortByKey } from "../../xds/resource/json.js";

/** Cluster JSON for every upstream, sorted by name; bad timeouts and ports are reported in `problems`. */
export function renderClusters(
  upstreams: readonly Upstream[],
  problems: ObjectProblems,
  fields: ProxyFields,
): Cluster[] {
  return sortByKey(upstreams, (u) => u.name).map((u) => rendered.get(u) ?? renderCluster(u, problems, fields));
}

/**
 * Clusters rendered without a problem, by upstream: the model keeps an unchanged hosted
 * cluster's Upstream objects, so the cache sees the same cluster objects and encodes nothing again.
 */
const rendered = new WeakMap<Upstream, Cluster>();

function renderCluster(u: Upstream, problems: ObjectProblems, fields: ProxyFields): Cluster {
  const timeout = durationFromSeconds(u.connectTimeoutSeconds);
  if (timeout === undefined) {
    problems.error(
      fields.upstream(u, "timeoutSeconds"),
      "InconsistentConfig",
      `upstream "${u.name}": connect timeout ${u.connectTimeoutSeconds}s is not a positive duration`,
    );
  }
  // Without a usable timeout the render fails above; no placeholder for the checks to trip over twice.
  const connect = timeout === undefined ? {} : { connect_timeout: timeout };
  const cluster: Cluster =
    u.kind === "dns"
      ? { name: u.name, ...logicalDns(u, problems), ...connect }
      : { name: u.name, type: "EDS", eds_cluster_config: { eds_config: adsConfigSource() }, ...connect };
  if (timeout !== undefined && (u.kind !== "dns" || validPort(u.port))) rendered.set(u, cluster);
  return cluster;
}

function validPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

/**
 * The LOGICAL_DNS part: one endpoint, the hostname and port. IPv4 only, as every VLAN address
 * oooi serves (docs/reference.md#apps-ingress); Envoy's default (AUTO) would try AAAA first.
 */
function logicalDns(u: DnsUpstream, problems: ObjectProblems) {
  if (!validPort(u.port))
    problems.error("", "InconsistentConfig", `upstream "${u.name}": port ${u.port} is out of range`);
  return {
    type: "LOGICAL_DNS" as const,
    dns_lookup_family: "V4_ONLY" as const,
    load_assignment: {
      cluster_name: u.name,
      endpoints: [
        { lb_endpoints: [{ endpoint: { address: { socket_address: { address: u.hostname, port_value: u.port } } } }] },
      ],
    },
  };
}
