// CDS: one EDS cluster per Upstream; endpoints always come over ADS, never from DNS.
import type { Cluster } from "./envoy-types.js";
import type { ObjectProblems } from "../../model/problems.js";
import type { Upstream } from "../../model/types.js";
import { adsConfigSource } from "./ads.js";
import { durationFromSeconds } from "./duration.js";
import type { ProxyFields } from "./fields.js";
import { sortByKey } from "./json.js";

/** Cluster JSON for every upstream, sorted by name; bad timeouts are reported in `problems`. */
export function renderClusters(
  upstreams: readonly Upstream[],
  problems: ObjectProblems,
  fields: ProxyFields,
): Cluster[] {
  return sortByKey(upstreams, (u) => u.name).map((u): Cluster => {
    const timeout = durationFromSeconds(u.connectTimeoutSeconds);
    if (timeout === undefined) {
      problems.error(
        fields.upstream(u, "timeoutSeconds"),
        "InconsistentConfig",
        `upstream "${u.name}": connect timeout ${u.connectTimeoutSeconds}s is not a positive duration`,
      );
    }
    return {
      name: u.name,
      type: "EDS",
      eds_cluster_config: { eds_config: adsConfigSource() },
      // Without a usable timeout the render fails above; no placeholder for the checks to trip over twice.
      ...(timeout === undefined ? {} : { connect_timeout: timeout }),
    };
  });
}
