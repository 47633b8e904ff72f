// What was observed → PASS/FAIL/SKIP for one check, with the Troubleshooting row of a failure.
// Pure: the probes hand over what they saw, and each judge compares it with the model.
import { explainConnection, endpointsOf, inlineAssignments } from "../envoy/explain-route.js";
import type { TypeStateMessage, NodeMessage } from "../xds/introspect/debug-client.js";
import { typeLabel } from "../xds/introspect/state.js";
import type { DnsAnswer } from "./probe-dns.js";
import type { FetchedSnapshot } from "./fetch-snapshot.js";
import type { DnsCheck, ReservationCheck, RouteCheck } from "./plan.js";
import { TROUBLESHOOTING, type FailureKind } from "./troubleshooting.js";

export type Verdict = "PASS" | "FAIL" | "SKIP";

export interface CheckResult {
  /** What was checked, e.g. "dns vlan api.alpha.example.com". */
  readonly check: string;
  /** The object it is about ("clusters/tenant-vlan", "clusters/alpha-workers-0"). */
  readonly object: string;
  readonly verdict: Verdict;
  /** What was found (and, on failure, what the model expected). */
  readonly detail: string;
  readonly failure?: FailureKind;
  readonly cause?: string;
  readonly fix?: string;
}

export function pass(check: string, object: string, detail: string): CheckResult {
  return { check, object, verdict: "PASS", detail };
}

export function skip(check: string, object: string, detail: string): CheckResult {
  return { check, object, verdict: "SKIP", detail };
}

export function fail(check: string, object: string, detail: string, failure: FailureKind): CheckResult {
  return { check, object, verdict: "FAIL", detail, failure, ...TROUBLESHOOTING[failure] };
}

const NOERROR = 0;
const NXDOMAIN = 3;

export function dnsCheckName(c: DnsCheck): string {
  return `dns ${c.view} ${c.name} (from ${c.source})`;
}

/** A DNS answer against the model's: the records it holds, or forwarded when it holds none. */
export function judgeDns(c: DnsCheck, answer: DnsAnswer | Error): CheckResult {
  const name = dnsCheckName(c);
  if (answer instanceof Error) return fail(name, c.infra, answer.message, "dns-unreachable");
  const got = answer.addresses.length > 0 ? answer.addresses.join(", ") : rcodeText(answer.rcode);
  if (c.expected !== "forwarded") {
    const want = c.expected.join(", ");
    if (answer.authoritative && answer.rcode === NOERROR && got === want) return pass(name, c.infra, want);
    return fail(name, c.infra, `answered ${got}, the model says ${want}`, "dns-wrong-answer");
  }
  if (answer.authoritative) {
    return fail(
      name,
      c.infra,
      `answered ${got} from a zone; the ${c.view} view publishes nothing for it`,
      c.view === "default" ? "dns-leak" : "dns-not-forwarded",
    );
  }
  if (answer.rcode === NOERROR || answer.rcode === NXDOMAIN) return pass(name, c.infra, `forwarded: ${got}`);
  return fail(name, c.infra, `forwarded, upstream answered ${rcodeText(answer.rcode)}`, "dns-forward-failed");
}

function rcodeText(rcode: number): string {
  return (
    ["NOERROR (no address)", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"][rcode] ?? `rcode ${String(rcode)}`
  );
}

export function routeCheckName(c: RouteCheck): string {
  return `route ${c.serverName ?? "(no SNI)"}:${String(c.port)} (from ${c.sourceIp})`;
}

/** The served snapshot's choice for the connection against the model's backend. */
export function judgeRoute(c: RouteCheck, snapshot: FetchedSnapshot | Error): CheckResult {
  const name = routeCheckName(c);
  if (snapshot instanceof Error) return fail(name, c.attachment, snapshot.message, "xds-unreachable");
  const assignments = [...snapshot.endpoints, ...inlineAssignments(snapshot.clusters)];
  const found = explainConnection(snapshot.listeners, assignments, {
    destinationPort: c.port,
    destinationIp: c.destinationIp,
    sourceIp: c.sourceIp,
    transportProtocol: "tls",
    ...(c.serverName === undefined ? {} : { serverName: c.serverName }),
  });
  if (!found.ok && found.reason === "no-listener")
    return fail(name, c.attachment, `no listener on port ${String(c.port)}`, "route-no-listener");
  if (!found.ok) {
    const near =
      found.nearest === undefined ? "" : `; nearest miss ${found.nearest.chain}: ${found.nearest.misses.join("; ")}`;
    return fail(name, c.attachment, `no chain of ${found.listener} matches${near}`, "route-no-chain");
  }
  if (found.cluster !== c.upstream)
    return fail(
      name,
      c.attachment,
      `chain ${found.chain} forwards to ${found.cluster ?? "(no cluster)"}, the model says ${c.upstream}`,
      "route-wrong-cluster",
    );
  const served = endpointsOf(assignments, c.upstream);
  const sameEndpoints = served.join(",") === c.endpoints.join(",");
  if (!sameEndpoints)
    return fail(
      name,
      c.attachment,
      `${c.upstream} → ${served.join(", ") || "(none)"}, the model says ${c.endpoints.join(", ") || "(none)"}`,
      "route-wrong-endpoints",
    );
  return pass(name, c.attachment, `${found.chain} → ${c.upstream} → ${served.join(", ")}`);
}

/** One connected node's sync state: every type ACKed at the current snapshot's version. */
export function judgeNode(node: NodeMessage, groups: ReadonlyMap<string, ReadonlyMap<string, string>>): CheckResult[] {
  const name = `ack ${node.id}`;
  const versions = groups.get(node.cluster);
  if (versions === undefined) {
    const known = [...groups.keys()].sort().join(", ") || "(none)";
    return [
      fail(
        name,
        node.cluster,
        `node.cluster ${node.cluster} is not a node group; known: ${known}`,
        "node-unknown-group",
      ),
    ];
  }
  return node.types.map((t) =>
    judgeType(`${name} ${typeLabel(t.type_url)}`, node.cluster, t, versions.get(t.type_url)),
  );
}

function judgeType(name: string, group: string, t: TypeStateMessage, current: string | undefined): CheckResult {
  if (t.status === "SYNC_STATUS_ERROR")
    return fail(
      name,
      group,
      `NACKed ${t.last_nack?.version ?? t.sent_version}: ${t.last_nack?.message ?? ""}`,
      "node-nack",
    );
  if (t.status === "SYNC_STATUS_STALE") return fail(name, group, `sent ${t.sent_version}, not ACKed yet`, "node-stale");
  if (t.status === "SYNC_STATUS_NOT_SENT") return skip(name, group, "subscribed, nothing to send");
  if (current !== undefined && t.acked_version !== current)
    return fail(name, group, `ACKed ${t.acked_version}, the current snapshot is ${current}`, "node-behind");
  return pass(name, group, `ACKed ${t.acked_version}`);
}

/** A VMI's reservation against the address it reports. */
export function judgeReservation(c: ReservationCheck): CheckResult {
  const name = `dhcp ${c.mac}`;
  if (c.reported === undefined) return skip(name, c.vmi, `reserved ${c.reserved}; the VMI reports no address yet`);
  if (c.reported === c.reserved) return pass(name, c.vmi, `reserved and reported ${c.reserved}`);
  return fail(name, c.vmi, `reports ${c.reported}, reserved ${c.reserved}`, "reservation-mismatch");
}
