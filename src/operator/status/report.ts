// One replica's report of its xDS nodes: its connected nodes → a ReplicaReport (per type the
// version last ACKed, the NACK still in effect with its text, and the facts the health view reads:
// the version last sent and how it was answered) → a ConfigMap body, and back. The leader reads
// the health of every node from these against its own cache's current versions (xds-dataplane.ts).
// Replicas share ACK state only through these objects (as Istio's distribution reporting does), so
// no replica needs to reach another. Pure; a node's report is made once per NodeStatus object
// (XdsStatus keeps a node's view while it does not change), so an unchanged node keeps its report.
import type { NodeStatus, TypeStatus } from "../../xds/client-status.js";
import { typeFacts, type TypeFacts } from "../../xds/health.js";
import type { KubeObject } from "../../kube/rest.js";
import { canonicalJson } from "../desired/objects.js";

/** Label marking a replica's report ConfigMap and its heartbeat Lease. */
export const REPORT_LABEL = "hostedcluster.densityops.com/replica-report";
/** The ConfigMap key holding the report's JSON. */
export const REPORT_KEY = "report.json";

/** One type as a node holds it. */
export interface TypeReport {
  readonly typeUrl: string;
  /** Version last ACKed; undefined before any ACK. */
  readonly acked?: string;
  /** The NACK newer than the last ACK of this type (the node runs the older version meanwhile). */
  readonly nack?: { readonly version: string; readonly message: string };
  /** Version of the latest response sent; absent before any (and in reports of replicas before it was reported). */
  readonly sent?: string;
  /** How the latest response was answered; absent while it awaits its answer. */
  readonly answer?: "ack" | "nack";
}

/** One connected node (Envoy `node.id`) and the replica its stream is on. */
export interface NodeReport {
  readonly id: string;
  /** `node.cluster`: the node group. */
  readonly group: string;
  readonly replica: string;
  readonly userAgent: string;
  /** Sorted by typeUrl. */
  readonly types: readonly TypeReport[];
}

/** What one replica knows of its own streams. */
export interface ReplicaReport {
  readonly replica: string;
  /** Sorted by id. */
  readonly nodes: readonly NodeReport[];
}

/** A NACK newer than the last ACK of that type: the node still runs an older version. */
export function nackInEffect(t: TypeStatus): boolean {
  return t.lastNack !== undefined && (t.lastAcked === undefined || t.lastNack.at >= t.lastAcked.at);
}

/**
 * The health view's facts of a reported type. A report without `sent` (written by a replica of an
 * earlier version, during a rollout) is read as its last answer: a NACK in effect, else its ACK.
 */
export function reportedFacts(t: TypeReport): TypeFacts {
  if (t.sent === undefined) {
    const sent = t.nack?.version ?? t.acked;
    const answer = t.nack !== undefined ? "nack" : t.acked !== undefined ? "ack" : undefined;
    return { typeUrl: t.typeUrl, sent, acked: t.acked, answer, nack: t.nack?.message };
  }
  const answer = t.answer === "ack" || t.answer === "nack" ? t.answer : undefined;
  const nack = answer === "nack" ? (t.nack?.message ?? "") : undefined;
  return { typeUrl: t.typeUrl, sent: t.sent, acked: t.acked, answer, nack };
}

/** The report of `replica` from its xDS server's nodes: connected ones only. */
export function buildReport(replica: string, nodes: readonly NodeStatus[]): ReplicaReport {
  const out: NodeReport[] = [];
  for (const n of nodes) if (n.connectedStreams > 0) out.push(nodeReport(replica, n));
  out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { replica, nodes: out };
}

/** The last report made of each node view: views are immutable, so it stays right while its replica is the same. */
const reported = new WeakMap<NodeStatus, NodeReport>();

function nodeReport(replica: string, n: NodeStatus): NodeReport {
  const known = reported.get(n);
  if (known?.replica === replica) return known;
  const types = [...n.types]
    .sort((a, b) => (a.typeUrl < b.typeUrl ? -1 : a.typeUrl > b.typeUrl ? 1 : 0))
    .map((t): TypeReport => {
      const nack = nackInEffect(t) ? t.lastNack : undefined;
      const facts = typeFacts(t);
      return {
        typeUrl: t.typeUrl,
        ...(t.lastAcked === undefined ? {} : { acked: t.lastAcked.version }),
        ...(nack === undefined ? {} : { nack: { version: nack.version, message: nack.message } }),
        ...(facts.sent === undefined ? {} : { sent: facts.sent }),
        ...(facts.answer === undefined ? {} : { answer: facts.answer }),
      };
    });
  const report: NodeReport = { id: n.node.id, group: n.node.cluster, replica, userAgent: n.node.userAgent, types };
  reported.set(n, report);
  return report;
}

/** Name of a replica's report ConfigMap (and heartbeat Lease): DNS-1123, at most 63 characters. */
export function reportName(replica: string): string {
  const safe = replica
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `oooi-report-${safe}`.slice(0, 63).replace(/-+$/, "");
}

/** The report's ConfigMap, for server-side apply. */
export function reportConfigMap(namespace: string, report: ReplicaReport): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: reportName(report.replica),
      namespace,
      // Not the managed-by label: reports stay out of the cluster watch that feeds rendering.
      labels: { [REPORT_LABEL]: "true" },
    },
    data: { [REPORT_KEY]: canonicalJson(report) },
  };
}

/** The report a ConfigMap carries; undefined when it is not a readable report. */
export function parseReport(cm: KubeObject): ReplicaReport | undefined {
  const text = ((cm["data"] ?? {}) as Record<string, unknown>)[REPORT_KEY];
  if (typeof text !== "string") return undefined;
  try {
    const v = JSON.parse(text) as Partial<ReplicaReport>;
    if (typeof v.replica !== "string" || !Array.isArray(v.nodes)) return undefined;
    const nodes = (v.nodes as unknown[]).filter(isNodeReport);
    return { replica: v.replica, nodes: nodes.map((n) => ({ ...n, replica: v.replica ?? "" })) };
  } catch {
    return undefined;
  }
}

function isNodeReport(n: unknown): n is NodeReport {
  if (typeof n !== "object" || n === null) return false;
  const r = n as Partial<Record<keyof NodeReport, unknown>>;
  return (
    typeof r.id === "string" &&
    typeof r.group === "string" &&
    Array.isArray(r.types) &&
    (r.types as unknown[]).every(
      (t) => typeof t === "object" && t !== null && typeof (t as Partial<TypeReport>).typeUrl === "string",
    )
  );
}
