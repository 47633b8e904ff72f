// What `oooi operator` passes to runOperator, and what it gets back.
import type { AddressInfo } from "node:net";
import type { KubeClientConfig } from "../../kube/kubeconfig.js";
import type { KubeObject } from "../../kube/rest.js";
import type { BackoffOptions } from "../../util/backoff.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { ClusterState } from "../../model/types.js";
import type { FeedBatch } from "../../pipeline/change-feed.js";
import type { Outputs } from "../../pipeline/outputs.js";
import type { EnvoyRenderOptions } from "../../envoy/render/index.js";
import type { OperatorCa } from "../../pki/store.js";
import type { Observed } from "../../watchers/kube/observed.js";
import type { SnapshotCache } from "../../xds/cache/index.js";
import type { XdsStatusView } from "../../xds/client-status.js";
import type { OperatorSettings } from "../desired/settings.js";
import type { DataPlaneView } from "../status/dataplane.js";
import type { DnsTarget } from "../status/dns-serving.js";
import type { FleetReports, FleetTiming } from "../status/fleet.js";
import type { HttpListen, PageRoutes, ProbeServer } from "./http.js";
import type { LeaseTiming } from "./leader.js";
import type { OperatorMetrics } from "./metrics.js";

/** Everything `oooi operator` passes in. */
export interface RunOperatorOptions {
  readonly kubeConfig: KubeClientConfig;
  /** Operator-wide settings; `settings.namespace` is where the Lease lives. */
  readonly settings: OperatorSettings;
  /**
   * This replica's xDS server: its nodes are reported to the other replicas (src/operator/status/fleet.ts)
   * and the whole fleet's reports become the data-plane view status is written from.
   */
  readonly xds?: { readonly status: XdsStatusView; readonly cache: SnapshotCache };
  /** Replica reports' timing (default DEFAULT_FLEET_TIMING). */
  readonly fleetTiming?: FleetTiming;
  /**
   * dnsReady from real DNS queries through each DNSServer's Service (default on, probing every 3 s
   * while not serving); `target` maps a Service to where it answers (tests: a loopback CoreDNS).
   * false: dnsReady once the ConfigMap carries the current content (no CoreDNS to ask).
   */
  readonly dnsProbe?:
    false | { readonly intervalMs?: number; readonly target?: (service: KubeObject) => DnsTarget | undefined };
  /** A data-plane view given directly (tests); ignored when `xds` is given. Default: nothing ever synced. */
  readonly dataPlane?: DataPlaneView;
  /**
   * Called on every replica with each new state, its rendering and the batch it came from (feed the
   * xDS cache and the change feed from it). Never called with a partial state.
   */
  readonly onState?: (state: ClusterState, outputs: Outputs, batch: FeedBatch) => void;
  readonly logger: Logger;
  readonly clock?: Clock;
  /**
   * Probe/metrics listener; undefined = none. A ProbeServer already listening (`oooi operator` opens it
   * before the API server answers) is taken over: it answers from this operator and closes with it.
   */
  readonly httpListen?: HttpListen | ProbeServer;
  /** Served on the probe listener in front of the probes (the live status page). */
  readonly page?: PageRoutes;
  /**
   * "kubernetes": everything on the probe listener but the probes needs a bearer token the API server
   * accepts for a user allowed to get that path (access-review.ts); `oooi operator`'s default.
   * Default here "none": open (tests of other things).
   */
  readonly httpAuth?: "kubernetes" | "none";
  /** Default: the catalogue on a fresh prom-client registry. */
  readonly metrics?: OperatorMetrics;
  /** This replica's identity in the Lease (default: hostname plus a random suffix). */
  readonly identity?: string;
  /** How the Envoy resources are shaped (--filter-chain-matcher); default the filter_chain_match form. */
  readonly envoy?: EnvoyRenderOptions;
  /** false = this replica always writes (single replica, tests). Default true. */
  readonly leaderElection?: boolean;
  readonly leaseName?: string;
  readonly leaseTiming?: LeaseTiming;
  /** While the API server is away: at most one summary line per this period (`--api-retry-max`, default 30 s). */
  readonly apiRetryMaxMs?: number;
  /** Reconcile again this often without a trigger (default 30 s; it writes nothing when converged). */
  readonly resyncMs?: number;
  /**
   * At least this long between the starts of two reconcile passes (default 500 ms). A pass walks every
   * desired and watched object; at 10 watch events a second, one pass per event was half the
   * process's CPU. The xDS push does not wait for a pass (onState runs per snapshot); applies and
   * status writes do, by at most this long.
   */
  readonly reconcileIntervalMs?: number;
  /**
   * Coalescing window of cluster changes (the first change goes out at once). Default 0: none — the
   * changes read in one turn of the event loop make one snapshot (src/watchers/kube/cluster.ts).
   */
  readonly debounceMs?: number;
  readonly watch?: {
    readonly timeoutSeconds?: number;
    readonly watchdogMs?: number;
    readonly discoveryIntervalMs?: number;
  };
  readonly backoff?: BackoffOptions;
  /**
   * Apps-ingress automation (reaching hosted clusters); default on. false: leave
   * status.appsIngressStatus to whoever else writes it (tests on an API server with no hosted cluster).
   */
  readonly appsIngress?: false | { readonly resyncMs?: number; readonly requestTimeoutMs?: number };
  /** close() gives up on what is left after this long (default 5 s). */
  readonly shutdownMs?: number;
  /** The operator's CA: client certificate Secrets for every data-plane child (mTLS on xDS). */
  readonly pki?: OperatorCa;
  /** Called during close() after writes stopped and the Lease was released: close xDS streams here. */
  readonly closeStreams?: () => Promise<void>;
}

/** A running operator. */
export interface RunningOperator {
  /** Resolves once every watch has listed (and the probe server listens). */
  readonly ready: Promise<void>;
  /** The probe server's address once listening. */
  httpAddress(): AddressInfo | undefined;
  isLeader(): boolean;
  /** The fleet's replicas and nodes as this replica sees them (undefined without `xds`). */
  readonly fleet: FleetReports | undefined;
  /** The latest snapshot (undefined before ready). */
  observed(): Observed | undefined;
  /** Stop writing, release the Lease, close streams (closeStreams), stop watching. */
  close(): Promise<void>;
}
