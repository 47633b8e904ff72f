// The operator's metrics: a fixed catalogue and a narrow recording interface, so the composition
// root can back it with prom-client (register one metric per catalogue entry and forward calls)
// while tests and a bare install use the small text implementation below.

/** Label values of one sample. */
export type Labels = Readonly<Record<string, string>>;

/** One metric of the catalogue. */
export interface MetricDefinition {
  readonly type: "counter" | "gauge" | "histogram";
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Histogram bucket upper bounds (seconds). */
  readonly buckets?: readonly number[];
}

/** Every metric the operator records. */
export const OPERATOR_METRICS = {
  oooi_kube_requests_total: {
    type: "counter",
    help: "Kubernetes API requests by method and HTTP status (0 = transport failure).",
    labelNames: ["method", "code"],
  },
  oooi_watch_restarts_total: {
    type: "counter",
    help: "Watch restarts by resource and reason (expired, watchdog, error).",
    labelNames: ["resource", "reason"],
  },
  oooi_informers_synced: { type: "gauge", help: "1 once every watched resource has been listed.", labelNames: [] },
  oooi_cluster_snapshots_total: {
    type: "counter",
    help: "Cluster snapshots rendered (after coalescing).",
    labelNames: [],
  },
  oooi_reconcile_total: {
    type: "counter",
    help: "Reconcile runs by result (ok, error, skipped).",
    labelNames: ["result"],
  },
  oooi_reconcile_scope_total: {
    type: "counter",
    help: "Reconcile passes by what they looked at: every object (full) or what changed since the pass before (changed).",
    labelNames: ["scope"],
  },
  oooi_reconcile_duration_seconds: {
    type: "histogram",
    help: "Duration of reconcile runs.",
    labelNames: [],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
  },
  oooi_writes_total: {
    type: "counter",
    help: "Writes by operation (apply, delete, status, finalizer) and kind.",
    labelNames: ["op", "kind"],
  },
  oooi_write_errors_total: {
    type: "counter",
    help: "Failed writes by operation and kind.",
    labelNames: ["op", "kind"],
  },
  oooi_object_ready: {
    type: "gauge",
    help: "1 while the object's Ready condition is True, 0 otherwise (Infras, attachments and child CRs).",
    labelNames: ["kind", "namespace", "name"],
  },
  oooi_dhcp_pool_addresses: {
    type: "gauge",
    help: "Addresses the Infra's DHCP pool can give: its host addresses not excluded (gateway, components, MetalLB ranges).",
    labelNames: ["namespace", "infra"],
  },
  oooi_dhcp_pool_allocated: {
    type: "gauge",
    help: "Pool addresses allocated to a MAC (a live VMI's, or one within its lease time after the VMI went).",
    labelNames: ["namespace", "infra"],
  },
  oooi_leader: { type: "gauge", help: "1 while this replica holds the leader Lease.", labelNames: [] },
  oooi_leader_transitions_total: {
    type: "counter",
    help: "Times this replica became or stopped being leader.",
    labelNames: ["to"],
  },
} as const satisfies Record<string, MetricDefinition>;

/** Name of a catalogued metric. */
export type MetricName = keyof typeof OPERATOR_METRICS;

/** Where the operator records metrics. */
export interface OperatorMetrics {
  /** Adds `value` (default 1) to a counter. */
  inc(name: MetricName, labels?: Labels, value?: number): void;
  /** Sets a gauge. */
  set(name: MetricName, value: number, labels?: Labels): void;
  /** Drops one labelled series of a gauge (its object is gone). */
  remove(name: MetricName, labels: Labels): void;
  /** Records one histogram observation. */
  observe(name: MetricName, value: number, labels?: Labels): void;
  /** Prometheus text exposition of everything recorded. */
  render(): string | Promise<string>;
  /** Content type of render()'s output. */
  readonly contentType: string;
}
