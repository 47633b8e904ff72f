// The fleet's xDS nodes (every replica's, through their reports) seen as the operator's
// DataPlaneView: a node group is synced when every connected node ACKed every type of the group's
// current snapshot and none rejected it; it is serving while every node runs the current or the
// last fully acknowledged configuration and none rejected it — so readiness does not drop between
// a publish and its ACK. Its words for a group's clients are the health view's (src/xds/health.ts),
// computed here, against this replica's cache, from the facts each replica reports.
import { groupBy } from "../../util/group.js";
import type { SnapshotCache } from "../../xds/cache/index.js";
import { PROBE_USER_AGENT, type XdsStatusView } from "../../xds/client-status.js";
import { cacheVersions, clientTypesHealth, healthText } from "../../xds/health.js";
import type { DataPlaneView } from "./dataplane.js";
import { buildReport, reportedFacts, type NodeReport } from "./report.js";

/** Where the nodes come from: FleetReports, or one replica's own report. */
export interface NodeSource {
  nodes(): readonly NodeReport[];
  subscribe(listener: () => void): () => void;
}

/** One xDS server's own nodes, as a NodeSource (a single replica, benchmarks). */
export function localNodes(status: XdsStatusView, replica = "local"): NodeSource {
  return {
    nodes: () => buildReport(replica, status.nodes()).nodes,
    subscribe: (listener) => {
      const events = ["push", "ack", "nack", "stream-open", "stream-close"] as const;
      for (const e of events) status.on(e, listener);
      return () => {
        for (const e of events) status.off(e, listener);
      };
    },
  };
}

type LastSynced = Map<string, { version: string; types: ReadonlyMap<string, string> }>;
/**
 * Per group, the stamp handed out and what its answers were computed from: the snapshot and the
 * nodes' reports, the latest list of them found equal (so the next pass compares by identity).
 */
type Stamps = Map<string, { readonly stamp: object; readonly snap: unknown; nodes: readonly NodeReport[] }>;

export class XdsDataPlane implements DataPlaneView {
  readonly #source: NodeSource;
  readonly #cache: SnapshotCache;
  /** Per group, the snapshot version and per-type versions it was last seen synced at. */
  readonly #lastSynced: LastSynced;
  /** Shared by every moment, so a later one hands out the same stamp while nothing moved. */
  readonly #stamps: Stamps;
  /** A moment's nodes by group (see moment()); undefined: read the source on every question. */
  readonly #byGroup: ReadonlyMap<string, readonly NodeReport[]> | undefined;
  /** A moment's answers per group, each good while the group's snapshot is the same object. */
  readonly #answers: Map<string, { snap: unknown; values: Map<string, unknown> }> | undefined;

  constructor(
    source: NodeSource,
    cache: SnapshotCache,
    moment?: { lastSynced: LastSynced; stamps: Stamps; nodes: readonly NodeReport[] },
  ) {
    this.#source = source;
    this.#cache = cache;
    this.#lastSynced = moment?.lastSynced ?? (new Map() as LastSynced);
    this.#stamps = moment?.stamps ?? (new Map() as Stamps);
    this.#byGroup = moment === undefined ? undefined : groupBy(moment.nodes, (n) => n.group);
    this.#answers = moment === undefined ? undefined : new Map();
  }

  /** The fleet's nodes read once and indexed by group; what is learnt about last-synced versions is shared with this view. */
  moment(): XdsDataPlane {
    return new XdsDataPlane(this.#source, this.#cache, {
      lastSynced: this.#lastSynced,
      stamps: this.#stamps,
      nodes: this.#source.nodes(),
    });
  }

  /**
   * The group's snapshot and its nodes' reports: every answer is computed from those (and from
   * `#lastSynced`, which moves only when they do — it records a sync found in them). An unchanged
   * node keeps its report object (report.ts, fleet.ts), so a pass compares only what changed.
   */
  stamp(nodeGroup: string): unknown {
    const snap = this.#cache.getSnapshot(nodeGroup);
    const nodes = this.#connected(nodeGroup);
    const known = this.#stamps.get(nodeGroup);
    if (known !== undefined && known.snap === snap && sameReports(known.nodes, nodes)) {
      known.nodes = nodes;
      return known.stamp;
    }
    const stamp = {};
    this.#stamps.set(nodeGroup, { stamp, snap, nodes });
    return stamp;
  }

  synced(nodeGroup: string, version?: string): boolean {
    return version === undefined
      ? this.#once(nodeGroup, "synced", () => this.#synced(nodeGroup))
      : this.#synced(nodeGroup, version);
  }

  #synced(nodeGroup: string, version?: string): boolean {
    const snap = this.#cache.getSnapshot(nodeGroup);
    if (snap === undefined || (version !== undefined && version !== snap.version)) return false;
    const current = this.#currentTypes(nodeGroup);
    const nodes = this.#connected(nodeGroup);
    if (current === undefined || nodes.length === 0) return false;
    const ok = nodes.every((n) => [...current].every(([typeUrl, v]) => holds(n, typeUrl, [v])));
    if (ok) this.#lastSynced.set(nodeGroup, { version: snap.version, types: current });
    return ok;
  }

  serving(nodeGroup: string): boolean {
    return this.#once(nodeGroup, "serving", () => this.#serving(nodeGroup));
  }

  #serving(nodeGroup: string): boolean {
    if (this.synced(nodeGroup)) return true;
    const previous = this.#lastSynced.get(nodeGroup);
    const current = this.#currentTypes(nodeGroup);
    const nodes = this.#connected(nodeGroup);
    if (previous === undefined || current === undefined || nodes.length === 0) return false;
    return nodes.every((n) =>
      [...current].every(([typeUrl, v]) => holds(n, typeUrl, [v, previous.types.get(typeUrl) ?? v])),
    );
  }

  lastNack(nodeGroup: string): string | undefined {
    return this.#once(nodeGroup, "lastNack", () => this.#lastNack(nodeGroup));
  }

  #lastNack(nodeGroup: string): string | undefined {
    for (const n of this.#connected(nodeGroup)) {
      for (const t of n.types) if (t.nack !== undefined) return `${n.id}: ${t.nack.message}`;
    }
    return undefined;
  }

  health(nodeGroup: string): string | undefined {
    return this.#once(nodeGroup, "health", () => this.#health(nodeGroup));
  }

  #health(nodeGroup: string): string | undefined {
    const versions = cacheVersions(this.#cache)(nodeGroup);
    const texts = this.#connected(nodeGroup)
      .filter((n) => n.userAgent !== PROBE_USER_AGENT)
      .map((n) => healthText(n.id, clientTypesHealth(n.types.map(reportedFacts), versions)))
      .filter((t) => t !== undefined);
    return texts.length === 0 ? undefined : texts.join("; ");
  }

  ackedVersion(nodeGroup: string): string | undefined {
    this.synced(nodeGroup);
    return this.#lastSynced.get(nodeGroup)?.version;
  }

  subscribe(listener: () => void): () => void {
    const unsubscribeSource = this.#source.subscribe(listener);
    const unsubscribeCache = this.#cache.subscribe(listener);
    return () => {
      unsubscribeSource();
      unsubscribeCache();
    };
  }

  /**
   * In a moment, each question about a group is answered once per snapshot of it: a reconcile pass
   * asks about every group from the Infra's and from the child's status, and each answer walks the
   * group's nodes. Outside a moment every question reads the source again.
   */
  #once<T>(group: string, question: string, answer: () => T): T {
    if (this.#answers === undefined) return answer();
    const snap = this.#cache.getSnapshot(group);
    let known = this.#answers.get(group);
    if (known === undefined || known.snap !== snap) {
      known = { snap, values: new Map() };
      this.#answers.set(group, known);
    }
    if (known.values.has(question)) return known.values.get(question) as T;
    const value = answer();
    known.values.set(question, value);
    return value;
  }

  /** Version per type of the group's snapshot; types with no resources are never subscribed by name (EDS/RDS/KeaConfig), so only those that hold something count. */
  #currentTypes(group: string): Map<string, string> | undefined {
    const snap = this.#cache.getSnapshot(group);
    if (snap === undefined) return undefined;
    return new Map([...snap.types.values()].filter((t) => t.resources.size > 0).map((t) => [t.typeUrl, t.version]));
  }

  #connected(group: string): readonly NodeReport[] {
    if (this.#byGroup !== undefined) return this.#byGroup.get(group) ?? [];
    return this.#source.nodes().filter((n) => n.group === group);
  }
}

/** The same reports in the same order: the same objects, or (a node's view moved, its report did not) the same JSON. */
function sameReports(was: readonly NodeReport[], now: readonly NodeReport[]): boolean {
  return was.length === now.length && was.every((r, i) => r === now[i] || JSON.stringify(r) === JSON.stringify(now[i]));
}

/** The node ACKed one of `versions` of the type and rejects nothing of it. */
function holds(n: NodeReport, typeUrl: string, versions: readonly string[]): boolean {
  const t = n.types.find((x) => x.typeUrl === typeUrl);
  return t?.acked !== undefined && versions.includes(t.acked) && t.nack === undefined;
}
