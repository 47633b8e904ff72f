// `oooi verify` against a running serve (or operator): the model from the manifests → the planned
// checks → each probed (DNS from two sources, the node group's snapshot over ADS, the connected
// nodes over oooi.debug.v1) and judged. I/O is injected so tests can break each probe on purpose.
// One cause is said once: a server that does not answer is asked once (one FAIL for all the checks
// it would fail), and when every answer differs from the model the summary names the likely reason.
import type { ClusterState, Topology } from "../model/types.js";
import { XdsUnreachableError, type NodeMessage } from "../xds/introspect/debug-client.js";
import type { FetchedSnapshot } from "./fetch-snapshot.js";
import {
  dnsCheckName,
  fail,
  judgeDns,
  judgeNode,
  judgeReservation,
  judgeRoute,
  routeCheckName,
  skip,
  type CheckResult,
} from "./judge.js";
import { planChecks, type PlanOptions, type PlannedCheck, type RouteCheck } from "./plan.js";
import type { DnsAnswer } from "./probe-dns.js";
import { TROUBLESHOOTING } from "./troubleshooting.js";

/** How the checks reach the running system. */
export interface VerifyProbes {
  /** Asks the DNS responder for `name` from `source`; undefined = no DNS to check. */
  readonly dns?: (source: string, name: string) => Promise<DnsAnswer>;
  /** The DNS responder's address, for messages. */
  readonly dnsAddress?: string;
  /** The snapshot a node group is served; undefined = no xDS to check. */
  readonly snapshot?: (group: string) => Promise<FetchedSnapshot>;
  /** Connected nodes; undefined = no xDS to check. */
  readonly nodes?: () => Promise<NodeMessage[]>;
  /** The xDS server's address, for messages. */
  readonly xdsAddress?: string;
}

/** Rows as they are judged, so a person sees each check when it ran. */
export interface VerifyProgress {
  /** Every check about to run ("check", "object"), before the first is judged. */
  readonly onPlan?: (rows: readonly { readonly check: string; readonly object: string }[]) => void;
  readonly onResult?: (result: CheckResult) => void;
}

/** The serve-mode fix of a server that does not answer (the Troubleshooting row's is the cluster's). */
const SERVE_FIX = {
  dns: "start `oooi serve` (its DNS listens at --dns-listen, 127.0.0.1:5353 by default), or point verify at it with --dns HOST:PORT; --no-dns skips these checks",
  xds: "start `oooi serve` (its xDS listens at --xds-listen, 127.0.0.1:18000 by default), or point verify at it with --xds HOST:PORT; --no-xds skips these checks",
} as const;

/** Runs every check for the model's topologies; never throws on a failed probe (it is a FAIL). */
export async function runVerify(
  state: ClusterState,
  topologies: readonly Topology[],
  probes: VerifyProbes,
  options: PlanOptions,
  progress: VerifyProgress = {},
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const report = (r: CheckResult): void => {
    results.push(r);
    progress.onResult?.(r);
  };
  let checks = planChecks(topologies, state.vmis, options).filter(
    (c) => (c.kind !== "dns" || probes.dns !== undefined) && (c.kind !== "route" || probes.snapshot !== undefined),
  );

  // Each server asked once before its checks: nothing listening is one failure, not one per check.
  const dnsDown = await dnsUnreachable(checks, probes);
  const xdsDown = probes.nodes === undefined ? undefined : await xdsUnreachable(probes.nodes, probes.xdsAddress);
  if (dnsDown !== undefined) checks = checks.filter((c) => c.kind !== "dns");
  if (xdsDown !== undefined) checks = checks.filter((c) => c.kind !== "route");
  progress.onPlan?.([
    ...(dnsDown === undefined ? [] : [dnsDown]),
    ...(xdsDown === undefined ? [] : [xdsDown]),
    ...checks.map((c) => ({ check: checkName(c), object: checkObject(c) })),
  ]);
  if (dnsDown !== undefined) report(dnsDown);
  if (xdsDown !== undefined) report(xdsDown);

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
    if (c.kind === "dns" && probes.dns !== undefined) {
      report(judgeDns(c, await probes.dns(c.source, c.name).catch((e: unknown) => asError(e))));
    } else if (c.kind === "route") {
      report(judgeRoute(c, await snapshotOf(c.group)));
    } else if (c.kind === "reservation") {
      report(judgeReservation(c));
    }
  }
  if (probes.nodes !== undefined && xdsDown === undefined)
    for (const r of await judgeNodes(topologies, checks, probes.nodes, snapshotOf)) report(r);
  return results;
}

/**
 * The one reason behind the failures when it looks like one: most DNS answers or most routes differing
 * from the model means the server was given other manifests than verify.
 */
export function rootCause(results: readonly CheckResult[]): string | undefined {
  // Most of a kind wrong (not all: a name both configurations forward still passes).
  const mostlyWrong = (prefix: string, kinds: readonly string[]): boolean => {
    const of = results.filter((r) => r.check.startsWith(prefix) && r.verdict !== "SKIP");
    const wrong = of.filter((r) => r.verdict === "FAIL" && kinds.includes(r.failure ?? ""));
    return wrong.length >= 2 && wrong.length >= 0.75 * of.length;
  };
  // Per view: the pod-network view's answers (ClusterIPs) can stay right when the VLAN's are wrong.
  const dns = ["dns vlan ", "dns default "].some((view) => mostlyWrong(view, ["dns-wrong-answer", "dns-leak"]));
  const routes = mostlyWrong("route ", [
    "route-no-listener",
    "route-no-chain",
    "route-wrong-cluster",
    "route-wrong-endpoints",
  ]);
  if (dns && routes)
    return "the DNS answers and the routes differ from the model: is serve reading this --manifests folder? verify compares the server with the manifests it is given";
  if (dns)
    return "the DNS answers differ from the model: is the DNS server at --dns the one serving this --manifests folder?";
  if (routes) return "the routes differ from the model: is the xDS server at --xds serving this --manifests folder?";
  return undefined;
}

async function dnsUnreachable(checks: readonly PlannedCheck[], probes: VerifyProbes): Promise<CheckResult | undefined> {
  const first = checks.find((c) => c.kind === "dns");
  if (first === undefined || probes.dns === undefined) return undefined;
  const count = checks.filter((c) => c.kind === "dns").length;
  try {
    await probes.dns(first.source, first.name);
    return undefined;
  } catch (e) {
    const at = probes.dnsAddress ?? "--dns";
    return {
      ...fail("dns", at, `${asError(e).message}; ${String(count)} DNS check(s) not run`, "dns-unreachable"),
      cause: `no DNS server answers at ${at}`,
      fix: SERVE_FIX.dns,
    };
  }
}

async function xdsUnreachable(
  nodes: () => Promise<NodeMessage[]>,
  address = "--xds",
): Promise<CheckResult | undefined> {
  try {
    await nodes();
    return undefined;
  } catch (e) {
    // A refusal (mTLS identity, an older server) is the ack check's to report, with its reason.
    if (!(e instanceof XdsUnreachableError)) return undefined;
    return {
      ...fail("xds", address, `${asError(e).message}; the route and ack checks not run`, "xds-unreachable"),
      cause: TROUBLESHOOTING["xds-unreachable"].cause,
      fix: SERVE_FIX.xds,
    };
  }
}

function checkName(c: PlannedCheck): string {
  if (c.kind === "dns") return dnsCheckName(c);
  if (c.kind === "route") return routeCheckName(c);
  return `dhcp ${c.mac}`;
}

function checkObject(c: PlannedCheck): string {
  if (c.kind === "dns") return c.infra;
  if (c.kind === "route") return c.attachment;
  return c.vmi;
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
    return [{ ...fail("ack", "xds", asError(e).message, "xds-unreachable"), fix: SERVE_FIX.xds }];
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
