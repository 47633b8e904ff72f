// `oooi verify` against a running serve (or operator): the model from the manifests → the planned
// checks → each probed (DNS from two sources, the node group's snapshot over ADS, the connected
// nodes over oooi.debug.v1) and judged. I/O is injected so tests can break each probe on purpose.
import type { ClusterState, Topology } from "../model/types.js";
import type { NodeMessage } from "../xds/introspect/debug-client.js";
import type { FetchedSnapshot } from "./fetch-snapshot.js";
import { judgeDns, judgeNode, judgeReservation, judgeRoute, fail, skip, type CheckResult } from "./judge.js";
import { planChecks, type PlanOptions, type RouteCheck } from "./plan.js";
import type { DnsAnswer } from "./probe-dns.js";

/** How the checks reach the running system. */
export interface VerifyProbes {
  /** Asks the DNS responder for `name` from `source`; undefined = no DNS to check. */
  readonly dns?: (source: string, name: string) => Promise<DnsAnswer>;
  /** The snapshot a node group is served; undefined = no xDS to check. */
  readonly snapshot?: (group: string) => Promise<FetchedSnapshot>;
  /** Connected nodes; undefined = no xDS to check. */
  readonly nodes?: () => Promise<NodeMessage[]>;
}

/** Runs every check for the model's topologies; never throws on a failed probe (it is a FAIL). */
export async function runVerify(
  state: ClusterState,
  topologies: readonly Topology[],
  probes: VerifyProbes,
  options: PlanOptions,
): Promise<CheckResult[]> {
  const checks = planChecks(topologies, state.vmis, options);
  const results: CheckResult[] = [];
  const snapshots = new Map<string, Promise<FetchedSnapshot | Error>>();
  const snapshotOf = (group: string): Promise<FetchedSnapshot | Error> => {
    let got = snapshots.get(group);
    if (got === undefined && probes.snapshot !== undefined) {
      got = probes.snapshot(group).catch((e: unknown) => asError(e));
      snapshots.set(group, got);
    }
    return got ?? Promise.resolve(new Error("no --xds given"));
  };
  for (const c of checks) {
    if (c.kind === "dns") {
      if (probes.dns === undefined) continue;
      results.push(judgeDns(c, await probes.dns(c.source, c.name).catch((e: unknown) => asError(e))));
    } else if (c.kind === "route") {
      if (probes.snapshot === undefined) continue;
      results.push(judgeRoute(c, await snapshotOf(c.group)));
    } else {
      results.push(judgeReservation(c));
    }
  }
  if (probes.nodes !== undefined) results.push(...(await judgeNodes(topologies, checks, probes.nodes, snapshotOf)));
  return results;
}

async function judgeNodes(
  topologies: readonly Topology[],
  checks: readonly { kind: string }[],
  listNodes: () => Promise<NodeMessage[]>,
  snapshotOf: (group: string) => Promise<FetchedSnapshot | Error>,
): Promise<CheckResult[]> {
  let nodes: NodeMessage[];
  try {
    nodes = await listNodes();
  } catch (e) {
    return [fail("ack", "xds", asError(e).message, "xds-unreachable")];
  }
  const groups = new Map<string, ReadonlyMap<string, string>>();
  const proxyGroups = new Set(checks.filter((c): c is RouteCheck => c.kind === "route").map((c) => c.group));
  for (const t of topologies) {
    if (t.proxy !== undefined) {
      const snapshot = proxyGroups.has(t.proxy.node) ? await snapshotOf(t.proxy.node) : undefined;
      groups.set(t.proxy.node, snapshot === undefined || snapshot instanceof Error ? new Map() : snapshot.versions);
    }
    if (t.dhcp !== undefined) groups.set(t.dhcp.name, new Map());
  }
  // Our own fetch streams show up while they run; they are not data planes.
  const planes = nodes.filter((n) => n.user_agent !== "oooi-verify" && n.streams.length > 0);
  const results = planes.flatMap((n) => judgeNode(n, groups));
  for (const group of [...groups.keys()].sort()) {
    if (!planes.some((n) => n.cluster === group)) results.push(skip("ack", group, "no data plane connected"));
  }
  return results;
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
