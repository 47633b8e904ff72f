// oooi's Prometheus metrics on a registry of their own (never prom-client's global one, so tests
// and several servers in one process do not collide): the xDS metrics, plus factories and a
// catalogue recorder other parts (the operator's reconcile loop) register theirs through.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from "prom-client";

/** Label values of one sample. */
export type Labels = Readonly<Record<string, string>>;

/** Seconds buckets for push latencies: 1 ms to 30 s. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** One entry of a metric catalogue (same shape as the operator's OPERATOR_METRICS entries). */
export interface CatalogueEntry {
  readonly type: "counter" | "gauge" | "histogram";
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Histogram bucket upper bounds. */
  readonly buckets?: readonly number[];
}

/** Records into a catalogue's metrics by name (the operator's OperatorMetrics shape). */
export interface CatalogueRecorder<Name extends string> {
  /** Adds `value` (default 1) to a counter. */
  inc(name: Name, labels?: Labels, value?: number): void;
  /** Sets a gauge. */
  set(name: Name, value: number, labels?: Labels): void;
  /** Drops one labelled series of a gauge (its object is gone). */
  remove(name: Name, labels: Labels): void;
  /** Records one histogram observation. */
  observe(name: Name, value: number, labels?: Labels): void;
  /** Prometheus text of the whole registry (these metrics and every other). */
  render(): Promise<string>;
  /** Content type of render()'s output. */
  readonly contentType: string;
}

/** Options of Metrics. */
export interface MetricsOptions {
  /** Also export Node.js process metrics (CPU, memory, event loop lag, ...). Default false. */
  readonly processMetrics?: boolean;
  /** Prefix of the process metrics (default "oooi_"). */
  readonly processPrefix?: string;
}

/** The metrics of one oooi process. */
export class Metrics {
  /** The registry everything is registered on; serve it with metricsHandler(). */
  readonly registry = new Registry();
  /** xDS responses sent, by resource type and cause (change or subscription). */
  readonly xdsPushes: Counter<"type" | "cause">;
  /** Change → response written, seconds, by type and cause. */
  readonly xdsPushSentSeconds: Histogram<"type" | "cause">;
  /** Change → ACK received, seconds, by type and cause. */
  readonly xdsPushAckSeconds: Histogram<"type" | "cause">;
  /** NACKs received, by type; `repeat` is "true" for a client repeating its previous NACK. */
  readonly xdsNacks: Counter<"type" | "repeat">;
  /** Open xDS streams, by protocol (sotw, delta). */
  readonly xdsStreams: Gauge<"protocol">;
  /** Bytes of xDS responses sent, by type. */
  readonly xdsPushedBytes: Counter<"type">;

  constructor(options: MetricsOptions = {}) {
    this.xdsPushes = this.counter(
      "oooi_xds_pushes_total",
      "xDS responses sent to clients, by resource type and cause.",
      ["type", "cause"],
    );
    this.xdsPushSentSeconds = this.histogram(
      "oooi_xds_push_sent_seconds",
      "Latency from a configuration change (or new subscription) to the xDS response being written.",
      ["type", "cause"],
      LATENCY_BUCKETS,
    );
    this.xdsPushAckSeconds = this.histogram(
      "oooi_xds_push_ack_seconds",
      "Latency from a configuration change (or new subscription) to the client's ACK.",
      ["type", "cause"],
      LATENCY_BUCKETS,
    );
    this.xdsNacks = this.counter(
      "oooi_xds_nacks_total",
      "xDS responses rejected by clients (NACK), by resource type.",
      ["type", "repeat"],
    );
    this.xdsStreams = this.gauge("oooi_xds_streams", "Open xDS streams, by protocol.", ["protocol"]);
    this.xdsPushedBytes = this.counter(
      "oooi_xds_pushed_bytes_total",
      "Bytes of xDS responses sent, by resource type.",
      ["type"],
    );
    if (options.processMetrics === true)
      collectDefaultMetrics({ register: this.registry, prefix: options.processPrefix ?? "oooi_" });
  }

  /** A counter on this registry; returns the existing one when `name` is already a counter. */
  counter<L extends string = string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.#reuse(name, Counter) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge on this registry; `collect` runs at each scrape to set its value. */
  gauge<L extends string = string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    collect?: (gauge: Gauge<L>) => void | Promise<void>,
  ): Gauge<L> {
    const existing = this.#reuse<Gauge<L>>(name, Gauge);
    if (existing) return existing;
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect
        ? {
            collect(this: Gauge<L>) {
              return collect(this);
            },
          }
        : {}),
    });
  }

  /** A histogram on this registry (buckets in the metric's unit, seconds by convention). */
  histogram<L extends string = string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    buckets: readonly number[] = LATENCY_BUCKETS,
  ): Histogram<L> {
    return (
      this.#reuse(name, Histogram) ??
      new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] })
    );
  }

  /** Registers every metric of `catalogue` and returns a recorder addressing them by name. */
  recorder<C extends Readonly<Record<string, CatalogueEntry>>>(
    catalogue: C,
  ): CatalogueRecorder<Extract<keyof C, string>> {
    const metrics = new Map<string, Counter | Gauge | Histogram>();
    for (const [name, def] of Object.entries(catalogue)) {
      const m =
        def.type === "counter"
          ? this.counter(name, def.help, def.labelNames)
          : def.type === "gauge"
            ? this.gauge(name, def.help, def.labelNames)
            : this.histogram(name, def.help, def.labelNames, def.buckets ?? LATENCY_BUCKETS);
      metrics.set(name, m);
    }
    const get = <T>(name: string, kind: new (...args: never[]) => T): T => {
      const m = metrics.get(name);
      if (!(m instanceof kind)) throw new Error(`${name} is not a ${kind.name.toLowerCase()} of the catalogue`);
      return m;
    };
    return {
      inc: (name, labels = {}, value = 1) => {
        get(name, Counter).inc(labels, value);
      },
      set: (name, value, labels = {}) => {
        get(name, Gauge).set(labels, value);
      },
      remove: (name, labels) => {
        get(name, Gauge).remove(labels);
      },
      observe: (name, value, labels = {}) => {
        get(name, Histogram).observe(labels, value);
      },
      render: () => this.render(),
      contentType: this.contentType,
    };
  }

  /** Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Content type of render()'s output. */
  get contentType(): string {
    return this.registry.contentType;
  }

  #reuse<T>(name: string, kind: abstract new (...args: never[]) => T): T | undefined {
    const existing: Metric | undefined = this.registry.getSingleMetric(name);
    if (existing === undefined) return undefined;
    if (existing instanceof kind) return existing;
    throw new Error(`metric ${name} is already registered with another type`);
  }
}
