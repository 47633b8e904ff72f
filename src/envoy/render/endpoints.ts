// EDS: one ClusterLoadAssignment per address Upstream with its resolved IP:port endpoints (possibly
// none, in which case Envoy refuses the connection rather than guessing). A DNS upstream's single
// endpoint travels inside its cluster (clusters.ts), not over EDS.
import type { ClusterLoadAssignment } from "./envoy-types.js";
import type { ObjectProblems } from "../../model/problems.js";
import { parseIPv4 } from "../../model/ipv4.js";
import type { AddressUpstream, Endpoint, Upstream } from "../../model/types.js";
import type { ProxyFields } from "./fields.js";
import { sortByKey } from "../../xds/resource/json.js";

/** ClusterLoadAssignment JSON for every address upstream, sorted by cluster_name; bad addresses go to `problems`. */
export function renderEndpoints(
  upstreams: readonly Upstream[],
  problems: ObjectProblems,
  fields: ProxyFields,
): ClusterLoadAssignment[] {
  const addressed = upstreams.filter((u): u is AddressUpstream => u.kind === "address");
  return sortByKey(addressed, (u) => u.name).map((u) => rendered.get(u) ?? renderAssignment(u, problems, fields));
}

/** Assignments rendered without a problem, by upstream (kept by the model while unchanged). */
const rendered = new WeakMap<AddressUpstream, ClusterLoadAssignment>();

function renderAssignment(u: AddressUpstream, problems: ObjectProblems, fields: ProxyFields): ClusterLoadAssignment {
  const { endpoints, clean } = uniqueEndpoints(u, problems, fields);
  const assignment: ClusterLoadAssignment =
    endpoints.length === 0
      ? { cluster_name: u.name }
      : {
          cluster_name: u.name,
          endpoints: [
            {
              lb_endpoints: endpoints.map((e) => ({
                endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
              })),
            },
          ],
        };
  if (clean) rendered.set(u, assignment);
  return assignment;
}

/** Valid endpoints, deduplicated and sorted numerically by address then port; `clean` when none was refused. */
function uniqueEndpoints(
  u: AddressUpstream,
  problems: ObjectProblems,
  fields: ProxyFields,
): { endpoints: Endpoint[]; clean: boolean } {
  let clean = true;
  const byKey = new Map<string, { ip: number; endpoint: Endpoint }>();
  for (const e of u.endpoints) {
    const ip = parseIPv4(e.address);
    if (ip === undefined) {
      clean = false;
      // Endpoints are what the target resolves to: the backend names it by targetService.
      problems.error(
        fields.upstream(u, "targetService"),
        "InconsistentConfig",
        `upstream "${u.name}": endpoint address "${e.address}" is not an IPv4 address`,
      );
      continue;
    }
    if (!Number.isInteger(e.port) || e.port < 1 || e.port > 65535) {
      clean = false;
      problems.error(
        fields.upstream(u, "targetPort"),
        "InconsistentConfig",
        `upstream "${u.name}": endpoint port ${e.port} is out of range`,
      );
      continue;
    }
    byKey.set(`${e.address}:${e.port}`, { ip, endpoint: e });
  }
  const endpoints = [...byKey.values()]
    .sort((a, b) => a.ip - b.ip || a.endpoint.port - b.endpoint.port)
    .map((x) => x.endpoint);
  return { endpoints, clean };
}
