// The status page's data: the latest model (Infras, attachments, workers, problems) and the xDS
// status record (clients, ACK/NACK, pushes) → one JSON view the page draws. Pure and sorted, so two
// equal states give byte-equal views and the event stream can skip a change that shows nothing new.
import type { BuildResult, ObjectRef, Problem, Topology } from "../model/types.js";
import { typeLabel } from "../xds/introspect/state.js";
import type { NodeStatus, PushRecord } from "../xds/client-status.js";
import {
  computeHealth,
  type BehindReason,
  type ClientHealth,
  type CurrentVersions,
  type HealthState,
} from "../xds/health.js";

/** What the view is built from; `model` is undefined until the manifests (or the cluster) rendered. */
export interface StatusInput {
  readonly model: Pick<BuildResult, "topologies" | "problems"> | undefined;
  /** Known xDS clients (XdsStatusView.nodes()); empty without an xDS server. */
  readonly nodes: readonly NodeStatus[];
  /** Recent pushes, oldest first (XdsStatusView.history()). */
  readonly pushes: readonly PushRecord[];
  /** Each group's current versions (from the snapshot cache); absent: every group reads as having none. */
  readonly current?: CurrentVersions;
}

export interface StatusView {
  /** What is wrong with the data plane, one line ("" when nothing is): the page's headline. */
  readonly headline: string;
  readonly health: {
    readonly behind: number;
    readonly error: number;
    readonly unknownGroups: readonly UnknownGroupView[];
  };
  readonly rendered: boolean;
  readonly infras: readonly InfraView[];
  readonly nodeGroups: readonly NodeGroupView[];
  /** Newest first, at most PUSHES_SHOWN. */
  readonly pushes: readonly PushView[];
  readonly problems: readonly ProblemView[];
}

export interface InfraView {
  /** "<namespace>/<name>". */
  readonly name: string;
  /** Node groups of its proxy (Envoy) and DHCP server (dhcp-agent); undefined when not served. */
  readonly proxyGroup: string | undefined;
  readonly dhcpGroup: string | undefined;
  readonly dnsServer: string | undefined;
  readonly proxyIP: string | undefined;
  readonly attachments: readonly AttachmentView[];
}

export interface AttachmentView {
  readonly name: string;
  readonly domain: string;
  readonly hostedCluster: string;
  readonly controlPlaneNamespace: string;
  readonly served: boolean;
  readonly workers: readonly string[];
  /** Backends that match on the workers' source addresses, with the prefixes they match. */
  readonly sourceRoutes: readonly {
    readonly backend: string;
    readonly port: number;
    readonly prefixes: readonly string[];
  }[];
}

export interface UnknownGroupView {
  readonly group: string;
  /** The served group whose name is closest (a typo in the bootstrap), if any is close. */
  readonly nearest: string | undefined;
}

export interface NodeGroupView {
  readonly group: string;
  /** "envoy", "dhcp", or "unknown" for a node.cluster no Infra serves (a typo in the bootstrap). */
  readonly kind: "envoy" | "dhcp" | "unknown";
  /** The group's current version per type label ("cds" → version). */
  readonly versions: Readonly<Record<string, string>>;
  readonly clients: readonly ClientView[];
}

export interface ClientView {
  readonly id: string;
  readonly userAgent: string;
  readonly connected: boolean;
  /** GONE since this clock time (ms): its last stream closed then. Undefined while connected. */
  readonly goneSince: number | undefined;
  /** `oooi verify`'s fetch, not a data plane: never in the headline, forgotten once it closes. */
  readonly probe: boolean;
  readonly types: readonly ClientTypeView[];
}

export interface ClientTypeView {
  readonly type: string;
  /** SYNCED only when the client ACKed its group's current version (xds/health.ts). */
  readonly state: HealthState;
  /** Why BEHIND. */
  readonly reason: BehindReason | undefined;
  readonly currentVersion: string | undefined;
  readonly sentVersion: string | undefined;
  readonly ackedVersion: string | undefined;
  /** Envoy's error text of the NACK of the latest response, when it was NACKed. */
  readonly nack: string | undefined;
}

export interface PushView {
  readonly at: number;
  readonly group: string;
  readonly node: string;
  readonly type: string;
  readonly version: string;
  readonly cause: PushRecord["cause"];
  readonly resources: number;
  /** change → sent, and change → ACK (or NACK) in milliseconds; undefined while unanswered. */
  readonly sentMs: number;
  readonly answeredMs: number | undefined;
  readonly result: "acked" | "nacked" | "pending";
}

export interface ProblemView {
  /** "Kind namespace/name". */
  readonly object: string;
  readonly field: string;
  readonly reason: string;
  readonly severity: Problem["severity"];
  readonly message: string;
}

/** Pushes the page lists; the status record keeps more (for metrics), the page shows the recent ones. */
export const PUSHES_SHOWN = 25;

/** Gone clients the page lists, the most recently gone; the status record remembers more (`debug nodes --all`). */
export const GONE_SHOWN = 20;

/** The view of `input`. */
export function buildStatusView(input: StatusInput): StatusView {
  const topologies = input.model?.topologies ?? [];
  const current = input.current ?? (() => undefined);
  const known = topologies.flatMap((t) => [t.proxy?.node, t.dhcp?.name]).filter((g) => g !== undefined);
  const health = computeHealth(input.nodes, current, known);
  return {
    headline: health.headline,
    health: { behind: health.behind, error: health.error, unknownGroups: health.unknownGroups },
    rendered: input.model !== undefined,
    infras: topologies.map(infraView),
    nodeGroups: nodeGroupViews(topologies, input.nodes, health.clients, current),
    pushes: input.pushes.slice(-PUSHES_SHOWN).reverse().map(pushView),
    problems: (input.model?.problems ?? []).map((p) => ({
      object: refText(p.object),
      field: p.field,
      reason: p.reason,
      severity: p.severity,
      message: p.message,
    })),
  };
}

function infraView(t: Topology): InfraView {
  return {
    name: `${t.infra.namespace}/${t.infra.name}`,
    proxyGroup: t.proxy?.node,
    dhcpGroup: t.dhcp?.name,
    dnsServer: t.dns?.name,
    proxyIP: t.proxy?.serverIP,
    attachments: t.attachments.map((a) => {
      const name = `${a.ref.namespace}/${a.ref.name}`;
      return {
        name,
        domain: a.domain,
        hostedCluster: a.hostedCluster,
        controlPlaneNamespace: a.controlPlaneNamespace,
        served: a.served,
        workers: a.workerAddresses,
        sourceRoutes: (t.proxy?.backends ?? [])
          .filter((b) => b.attachment === name && b.sourcePrefixRanges.length > 0)
          .map((b) => ({ backend: b.kind, port: b.port, prefixes: b.sourcePrefixRanges })),
      };
    }),
  };
}

function nodeGroupViews(
  topologies: readonly Topology[],
  nodes: readonly NodeStatus[],
  health: readonly ClientHealth[],
  current: CurrentVersions,
): NodeGroupView[] {
  const kinds = new Map<string, NodeGroupView["kind"]>();
  for (const t of topologies) {
    if (t.proxy !== undefined) kinds.set(t.proxy.node, "envoy");
    if (t.dhcp !== undefined) kinds.set(t.dhcp.name, "dhcp");
  }
  const clients = new Map<string, ClientView[]>();
  const shownGone = new Set(
    health
      .filter((h) => h.goneSince !== undefined)
      .sort((a, b) => (b.goneSince ?? 0) - (a.goneSince ?? 0))
      .slice(0, GONE_SHOWN),
  );
  for (const [i, n] of nodes.entries()) {
    const h = health[i];
    if (h === undefined || (h.goneSince !== undefined && !shownGone.has(h))) continue;
    const list = clients.get(n.node.cluster) ?? [];
    list.push(clientView(n, h));
    clients.set(n.node.cluster, list);
  }
  const groups = [...new Set([...kinds.keys(), ...clients.keys()])].sort();
  return groups.map((group) => ({
    group,
    kind: kinds.get(group) ?? "unknown",
    versions: Object.fromEntries([...(current(group) ?? [])].map(([t, v]) => [typeLabel(t), v])),
    clients: (clients.get(group) ?? []).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  }));
}

function clientView(n: NodeStatus, health: ClientHealth): ClientView {
  return {
    id: n.node.id,
    userAgent: n.node.userAgent,
    connected: n.connectedStreams > 0,
    goneSince: health.goneSince,
    probe: health.probe,
    types: n.types.map((t, i) => {
      const h = health.types[i];
      return {
        type: typeLabel(t.typeUrl),
        state: h?.state ?? "NOT_SENT",
        reason: h?.reason,
        currentVersion: h?.current,
        sentVersion: t.lastSent?.version,
        ackedVersion: t.lastAcked?.version,
        nack: h?.nack,
      };
    }),
  };
}

function pushView(p: PushRecord): PushView {
  const answeredAt = p.ackAt ?? p.nackAt;
  return {
    at: p.sentAt,
    group: p.group,
    node: p.nodeId,
    type: typeLabel(p.typeUrl),
    version: p.version,
    cause: p.cause,
    resources: p.resources,
    sentMs: Math.max(0, p.sentAt - p.changeAt),
    answeredMs: answeredAt === undefined ? undefined : Math.max(0, answeredAt - p.changeAt),
    result: p.nackAt !== undefined ? "nacked" : p.ackAt !== undefined ? "acked" : "pending",
  };
}

function refText(ref: ObjectRef): string {
  return ref.namespace === "" ? `${ref.kind} ${ref.name}` : `${ref.kind} ${ref.namespace}/${ref.name}`;
}
