// The whole fleet's xDS nodes, as every replica sees them: this replica's own nodes live from its
// xDS server, the others' from their report ConfigMaps. Each replica writes its own report only
// when it changed and at most once per `minIntervalMs`; its liveness is a heartbeat Lease of its
// own, renewed like a kubelet's node Lease, so an idle fleet writes nothing but Leases. A report
// whose heartbeat has not moved for `expiryMs` (as this replica's clock sees it, never comparing
// clocks across machines — the leader election's rule) no longer counts: a killed replica's nodes
// fall back to not-acked. Why ConfigMaps: docs/reference.md#replica-reports.
import { microTime, type Clock, type TimerHandle } from "../../util/clock.js";
import { Reflector } from "../../watchers/kube/reflector.js";
import { project } from "../../watchers/kube/projections.js";
import type { WatchedResource } from "../../watchers/kube/resources.js";
import { statusCode, type KubeObject, type KubeRest } from "../../kube/rest.js";
import type { XdsStatusView } from "../../xds/client-status.js";
import { canonicalJson } from "../desired/objects.js";
import {
  buildReport,
  parseReport,
  REPORT_LABEL,
  reportConfigMap,
  reportName,
  type NodeReport,
  type ReplicaReport,
} from "./report.js";

/** Timing of the reports. */
export interface FleetTiming {
  /** Heartbeat Lease renewal period (default 2 s). */
  readonly heartbeatMs: number;
  /** A report expires when its heartbeat has not moved this long (default 15 s). */
  readonly expiryMs: number;
  /** At most one report write per this period (default 1 s). */
  readonly minIntervalMs: number;
}

export const DEFAULT_FLEET_TIMING: FleetTiming = { heartbeatMs: 2_000, expiryMs: 15_000, minIntervalMs: 1_000 };

/** Options of FleetReports. */
export interface FleetReportsOptions {
  readonly rest: KubeRest;
  /** Where reports and heartbeats live (the operator's namespace). */
  readonly namespace: string;
  readonly replica: string;
  /** This replica's xDS server. */
  readonly status: XdsStatusView;
  readonly clock: Clock;
  readonly fieldManager: string;
  readonly timing?: FleetTiming;
  readonly watchTimeoutSeconds?: number;
  readonly logger?: { warn(obj: object, msg: string): void };
  /**
   * Told about a failed request; true when it was the API server being unreachable and is reported
   * there (src/operator/process/api-outage.ts), so this one logs nothing of it.
   */
  readonly unreachable?: (what: string, e: unknown) => boolean;
}

/** Status events that may change this replica's report (a push: the version sent, now awaiting its answer). */
const REPORTED_EVENTS = ["push", "ack", "nack", "stream-open", "stream-close"] as const;

/** A replica as this one sees it. */
export interface ReplicaView {
  readonly replica: string;
  /** Its heartbeat moved within the expiry period (always true for this replica). */
  readonly live: boolean;
  readonly nodes: number;
}

const resource = (plural: string, kind: string, group: string, namespace: string): WatchedResource<string> => ({
  name: plural,
  group,
  version: "v1",
  plural,
  kind,
  namespaced: true,
  optional: false,
  labelSelector: `${REPORT_LABEL}=true`,
  namespace,
  project: project.whole,
});

/** Writes this replica's report and heartbeat; reads everyone's. */
export class FleetReports {
  readonly #o: FleetReportsOptions;
  readonly #t: FleetTiming;
  readonly #reports: Reflector;
  readonly #leases: Reflector;
  readonly #listeners = new Set<() => void>();
  /** Heartbeat record last seen per Lease name, and when this replica first saw it. */
  readonly #seen = new Map<string, { record: string; at: number }>();
  /**
   * The report parsed from each ConfigMap object the reflector holds (null: not a readable report): a
   * watch event replaces the object, so an unchanged report keeps its node objects across passes.
   */
  readonly #parsed = new WeakMap<KubeObject, ReplicaReport | null>();
  #written: string | undefined;
  #lastWriteAt = Number.NEGATIVE_INFINITY;
  #writeTimer: TimerHandle | undefined;
  #writing: Promise<void> | undefined;
  #heartbeat: TimerHandle | undefined;
  #beating = false;
  #liveKey = "";
  #stopped = false;
  readonly #onLocal = (): void => {
    this.#scheduleWrite();
    this.#notify();
  };

  constructor(o: FleetReportsOptions) {
    this.#o = o;
    this.#t = o.timing ?? DEFAULT_FLEET_TIMING;
    const opts = {
      clock: o.clock,
      watchTimeoutSeconds: o.watchTimeoutSeconds ?? 300,
      onChange: () => {
        this.#notify();
      },
    };
    this.#reports = new Reflector(o.rest, resource("configmaps", "ConfigMap", "", o.namespace), opts);
    this.#leases = new Reflector(o.rest, resource("leases", "Lease", "coordination.k8s.io", o.namespace), opts);
  }

  /** This replica's identity. */
  get replica(): string {
    return this.#o.replica;
  }

  start(): void {
    for (const e of REPORTED_EVENTS) this.#o.status.on(e, this.#onLocal);
    this.#reports.start();
    this.#leases.start();
    this.#beat();
    this.#scheduleWrite();
  }

  /** Every connected node of the fleet: this replica's live, then those of live reports (a node on two replicas counts once, here first). */
  nodes(): NodeReport[] {
    const own = buildReport(this.#o.replica, this.#o.status.nodes()).nodes;
    const seen = new Set(own.map((n) => n.id));
    const out = [...own];
    for (const r of this.#liveReports()) {
      for (const n of r.nodes) {
        if (seen.has(n.id)) continue;
        seen.add(n.id);
        out.push(n);
      }
    }
    return out;
  }

  /** Every replica that has a report: this one, then the others by name. */
  replicas(): ReplicaView[] {
    const now = this.#o.clock.now();
    const out: ReplicaView[] = [
      {
        replica: this.#o.replica,
        live: true,
        nodes: buildReport(this.#o.replica, this.#o.status.nodes()).nodes.length,
      },
    ];
    for (const r of this.#allReports())
      out.push({ replica: r.replica, live: this.#isLive(r.replica, now), nodes: r.nodes.length });
    return out;
  }

  /** Calls `listener` when the fleet's answer may have changed (a report, a heartbeat expiring, a local ACK). */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops writing and watching; with `signal` not aborted, deletes this replica's report and heartbeat (best effort). */
  async stop(signal?: AbortSignal): Promise<void> {
    this.#stopped = true;
    for (const e of REPORTED_EVENTS) this.#o.status.off(e, this.#onLocal);
    if (this.#writeTimer !== undefined) this.#o.clock.clearTimeout(this.#writeTimer);
    if (this.#heartbeat !== undefined) this.#o.clock.clearTimeout(this.#heartbeat);
    await Promise.all([this.#reports.stop(), this.#leases.stop()]);
    if (signal === undefined) return;
    // Delete the heartbeat first: without it the report no longer counts anywhere.
    for (const path of [this.#leasePath(), this.#reportPath()]) {
      try {
        await this.#o.rest.request({ method: "DELETE", path, signal });
      } catch (e) {
        if (statusCode(e) !== 404) {
          this.#o.logger?.warn({ err: (e as Error).message }, "could not delete this replica's report; it expires");
          return;
        }
      }
    }
  }

  #others(reflector: Reflector): KubeObject[] {
    const own = reportName(this.#o.replica);
    return [...reflector.items.values()].filter((o) => o.metadata?.name !== own);
  }

  #allReports(): ReplicaReport[] {
    const out: ReplicaReport[] = [];
    for (const cm of this.#others(this.#reports)) {
      let r = this.#parsed.get(cm);
      if (r === undefined) this.#parsed.set(cm, (r = parseReport(cm) ?? null));
      if (r !== null) out.push(r);
    }
    return out.sort((a, b) => (a.replica < b.replica ? -1 : 1));
  }

  #liveReports(): ReplicaReport[] {
    const now = this.#o.clock.now();
    return this.#allReports().filter((r) => this.#isLive(r.replica, now));
  }

  #isLive(replica: string, now: number): boolean {
    const name = reportName(replica);
    const lease = this.#leases.items.get(`${this.#o.namespace}/${name}`);
    if (lease === undefined) return false;
    const spec = (lease["spec"] ?? {}) as { renewTime?: string; holderIdentity?: string };
    if (spec.holderIdentity === "") return false;
    const record = `${spec.renewTime ?? ""}/${lease.metadata?.resourceVersion ?? ""}`;
    const seen = this.#seen.get(name);
    if (seen?.record !== record) this.#seen.set(name, { record, at: now });
    return now < (this.#seen.get(name)?.at ?? now) + this.#t.expiryMs;
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }

  // ------------------------------------------------------------------ writes

  #scheduleWrite(): void {
    if (this.#stopped || this.#writeTimer !== undefined || this.#writing !== undefined) return;
    const wait = Math.max(0, this.#lastWriteAt + this.#t.minIntervalMs - this.#o.clock.now());
    this.#writeTimer = this.#o.clock.setTimeout(() => {
      this.#writeTimer = undefined;
      this.#writing = this.#write().finally(() => {
        this.#writing = undefined;
      });
    }, wait);
  }

  async #write(): Promise<void> {
    const report = buildReport(this.#o.replica, this.#o.status.nodes());
    const text = canonicalJson(report);
    if (text === this.#written || this.#stopped) return;
    this.#lastWriteAt = this.#o.clock.now();
    try {
      await this.#apply(this.#reportPath(), reportConfigMap(this.#o.namespace, report));
      this.#written = text;
    } catch (e) {
      if (this.#o.unreachable?.("replica report", e) !== true)
        this.#o.logger?.warn({ err: (e as Error).message }, "could not write this replica's report; retrying");
    }
    // Changed meanwhile, or failed: the next write waits its turn.
    if (canonicalJson(buildReport(this.#o.replica, this.#o.status.nodes())) !== this.#written) {
      this.#writing = undefined;
      this.#scheduleWrite();
    }
  }

  #beat(): void {
    if (this.#stopped) return;
    const now = this.#o.clock.now();
    const name = reportName(this.#o.replica);
    // One renewal in flight at a time: an API server that hangs does not pile them up.
    if (!this.#beating) {
      this.#beating = true;
      void this.#apply(this.#leasePath(), {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace: this.#o.namespace, labels: { [REPORT_LABEL]: "true" } },
        spec: {
          holderIdentity: this.#o.replica,
          leaseDurationSeconds: Math.max(1, Math.round(this.#t.expiryMs / 1000)),
          renewTime: microTime(now),
        },
      })
        .catch((e: unknown) => {
          if (this.#o.unreachable?.("report heartbeat", e) !== true)
            this.#o.logger?.warn({ err: (e as Error).message }, "could not renew this replica's report heartbeat");
        })
        .finally(() => {
          this.#beating = false;
        });
    }
    // A report expiring changes the answer with no event: look again at every beat.
    const liveKey = this.#liveReports()
      .map((r) => r.replica)
      .join(",");
    if (liveKey !== this.#liveKey) {
      this.#liveKey = liveKey;
      this.#notify();
    }
    this.#heartbeat = this.#o.clock.setTimeout(() => {
      this.#beat();
    }, this.#t.heartbeatMs);
  }

  async #apply(path: string, body: KubeObject): Promise<void> {
    await this.#o.rest.request({
      method: "PATCH",
      path,
      query: { fieldManager: this.#o.fieldManager, force: "true" },
      contentType: "application/apply-patch+yaml",
      body,
    });
  }

  #reportPath(): string {
    return `/api/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/configmaps/${reportName(this.#o.replica)}`;
  }

  #leasePath(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases/${reportName(this.#o.replica)}`;
  }
}
