// `oooi operator`: in-cluster controller plus xDS server. Every replica watches the cluster and
// serves ADS from its own cache; only the Lease holder writes.
import type { ServerCredentials } from "@grpc/grpc-js";
import { Option, type Command } from "commander";
import { cliLogger, logFormatOption, type LogFormat } from "./logger.js";
import { Metrics, attachXdsMetrics } from "../metrics/index.js";
import { runOperator } from "../operator/process/run.js";
import { OPERATOR_METRICS } from "../operator/process/metrics.js";
import { settingsFromEnv } from "../operator/desired/settings.js";
import { ChangeFeed } from "../pipeline/change-feed.js";
import { SnapshotCache } from "../xds/cache/index.js";
import { addIntrospection, serverCredentialsFromFiles, type FleetSource } from "../xds/introspect/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../dhcp/kea-config-resource.js";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_NAMES_PER_STREAM, startXdsServer } from "../xds/server/index.js";
import { StatusPage } from "../status-page/index.js";
import {
  choice,
  hostPort,
  hostPortOption,
  positiveInt,
  xdsMaxConnectionsOption,
  xdsMaxNamesOption,
} from "./options.js";
import { checkListenable, listenFailureMessage } from "./listen-error.js";
import { AccessReview } from "../operator/process/access-review.js";
import { startOperatorPki, type OperatorPki } from "./operator-pki.js";
import { loadKubeClientConfig, type KubeClientConfig } from "../kube/kubeconfig.js";
import { KubeRest } from "../kube/rest.js";
import { checkEnvoySnapshot } from "../envoy/snapshot.js";
import { startProbeServer } from "../operator/process/http.js";
import { ApiRetry, DEFAULT_API_RETRY_MAX_MS } from "../operator/process/api-retry.js";
import { SYSTEM_CLOCK } from "../util/clock.js";

interface OperatorFlags {
  kubeconfig?: string;
  context?: string;
  xdsListen: string;
  httpListen: { host: string; port: number };
  httpAuth: "kubernetes" | "none";
  xdsTlsCert?: string;
  xdsTlsKey?: string;
  xdsTlsCa?: string;
  xdsPlaintext?: boolean;
  xdsMaxConnections: number;
  xdsMaxNamesPerStream: number;
  leaderElection: boolean;
  apiRetryMax: number;
  logLevel: string;
  logFormat?: LogFormat;
}

export function registerOperatorCommand(program: Command): void {
  program
    .command("operator")
    .summary("run in the management cluster: reconcile, keep status, serve xDS")
    .description(
      "Run in the management cluster: watch Infra, InfraClusterAttachment and what HyperShift, CAPI and " +
        "KubeVirt report; server-side-apply the DHCP, DNS and proxy workloads; keep status conditions; serve " +
        "ADS to the Envoys and dhcp-agents. Several replicas may run: each serves xDS from its own watches, " +
        "only the holder of the Lease `oooi-operator` in $POD_NAMESPACE writes.\n\n" +
        "Environment: POD_NAMESPACE (Lease and xDS Service namespace), POD_NAME (leader identity), " +
        "OOOI_IMAGE, OOOI_ENVOY_IMAGE, OOOI_COREDNS_IMAGE, OOOI_KEA_IMAGE, OOOI_XDS_ADDRESS.",
    )
    .option(
      "--kubeconfig <file>",
      "kubeconfig to use (default: $KUBECONFIG, else the pod's service account, else ~/.kube/config)",
    )
    .option("--context <name>", "the kubeconfig's context to use instead of its current-context")
    .addOption(
      new Option("--xds-listen <host:port>", "serve ADS, CSDS and oooi.debug.v1 here")
        .argParser((value) => {
          hostPort(value);
          return value;
        })
        .default("0.0.0.0:18000"),
    )
    .addOption(
      hostPortOption(
        "--http-listen <host:port>",
        "serve the live status page (/), /healthz, /readyz and /metrics here",
        "0.0.0.0:8080",
      ),
    )
    .addOption(
      new Option(
        "--http-auth <mode>",
        "who may read the status page, /events, /status.json and /metrics: kubernetes = a bearer token the API server accepts (TokenReview) for a user allowed to get the path (SubjectAccessReview; bind the ClusterRole oooi-metrics-reader); none = anyone who reaches the port. /healthz and /readyz are always open",
      )
        .argParser(choice(["kubernetes", "none"]))
        .default("kubernetes"),
    )
    .option("--xds-tls-cert <file>", "serve xDS over TLS with this certificate (PEM)")
    .option("--xds-tls-key <file>", "private key of --xds-tls-cert (PEM)")
    .option("--xds-tls-ca <file>", "require client certificates signed by this CA (mTLS)")
    .option(
      "--xds-plaintext",
      "development only: serve xDS without TLS and without client certificates (no CA Secret, no client Secrets); default is mTLS with the operator's own CA unless --xds-tls-cert is given",
    )
    .addOption(xdsMaxConnectionsOption(DEFAULT_MAX_CONNECTIONS))
    .addOption(xdsMaxNamesOption(DEFAULT_MAX_NAMES_PER_STREAM))
    .option("--no-leader-election", "write without holding the Lease (one replica only)")
    .option(
      "--api-retry-max <ms>",
      "while the API server does not answer at start: the longest wait between two attempts, and the period of the one 'API server unreachable' summary line",
      positiveInt,
      DEFAULT_API_RETRY_MAX_MS,
    )
    .option("--log-level <level>", "trace, debug, info, warn or error", "info")
    .addOption(logFormatOption())
    .action(async (flags: OperatorFlags) => {
      const log = cliLogger("operator", flags.logLevel, flags.logFormat);
      let kubeConfig: KubeClientConfig;
      let credentials: ServerCredentials | undefined;
      try {
        kubeConfig = loadKubeClientConfig(
          flags.kubeconfig,
          flags.context === undefined ? {} : { context: flags.context },
        );
        if ((flags.xdsTlsCert === undefined) !== (flags.xdsTlsKey === undefined))
          throw new Error("--xds-tls-cert and --xds-tls-key go together");
        if (flags.xdsTlsCert !== undefined && flags.xdsTlsKey !== undefined) {
          credentials = serverCredentialsFromFiles({
            cert: flags.xdsTlsCert,
            key: flags.xdsTlsKey,
            ...(flags.xdsTlsCa === undefined ? {} : { ca: flags.xdsTlsCa }),
          });
        }
      } catch (e) {
        program.error(`error: ${(e as Error).message}`, { exitCode: 2 });
      }

      log.info(`API server ${kubeConfig.server} (${kubeConfig.origin})`);
      if (flags.httpAuth === "none")
        log.warn(
          "--http-auth=none: the status page, /status.json and /metrics are open to anyone who reaches --http-listen",
        );
      const metrics = new Metrics({ processMetrics: true });
      const recorder = metrics.recorder(OPERATOR_METRICS);
      const page = new StatusPage({ title: "oooi operator" });
      // Listening before the API server answers: /healthz says the process is up, /readyz that it is
      // not ready yet (runOperator takes the listener over). The listener is also what keeps the
      // process alive while start-up waits on timers.
      const httpAt = `${flags.httpListen.host}:${String(flags.httpListen.port)}`;
      const probe = await startProbeServer(flags.httpListen, {
        live: () => true,
        ready: () => false,
        metrics: recorder,
        page,
        // Fail closed while the API server is away: a review that cannot be made refuses (500).
        ...(flags.httpAuth === "kubernetes"
          ? { access: new AccessReview({ rest: new KubeRest(kubeConfig), now: () => Date.now(), logger: log }) }
          : {}),
      }).catch((e: unknown) =>
        program.error(`error: ${listenFailureMessage("--http-listen", httpAt, e)}`, { exitCode: 2 }),
      );
      log.info(`probes and metrics on http://${probe.address.address}:${String(probe.address.port)} (status page: /)`);
      // The xDS server starts once the API server answered: a busy --xds-listen is said now.
      await checkListenable(hostPort(flags.xdsListen)).catch((e: unknown) =>
        program.error(`error: ${listenFailureMessage("--xds-listen", flags.xdsListen, e)}`, { exitCode: 2 }),
      );
      const startup = new AbortController();
      const stopStarting = (signal: string) => {
        log.info({ signal }, "shutting down before start-up finished");
        startup.abort();
        void probe.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stopStarting);
      process.once("SIGTERM", stopStarting);
      const retry = new ApiRetry({ maxMs: flags.apiRetryMax, log, signal: startup.signal });

      // Discovery decides the platform (OpenShift: no pinned uids, see settingsFromEnv): the operator
      // waits for it rather than guess. mTLS by default: the operator's own CA (a Secret in its
      // namespace) signs this replica's serving certificate and every data-plane child's client
      // certificate (docs/reference.md "Identity on the xDS port").
      let pki: OperatorPki | undefined;
      let envSettings: ReturnType<typeof settingsFromEnv>;
      try {
        const discovery = await retry.until("API discovery", () =>
          new KubeRest(kubeConfig).request<{ groups?: { name?: string }[] }>({ method: "GET", path: "/apis" }),
        );
        const apiGroups = new Set((discovery.groups ?? []).flatMap((g) => (g.name === undefined ? [] : [g.name])));
        envSettings = settingsFromEnv(process.env, apiGroups);
        if (credentials === undefined && flags.xdsPlaintext !== true)
          pki = await startOperatorPki(new KubeRest(kubeConfig), envSettings, log, SYSTEM_CLOCK, retry);
      } catch (e) {
        if (startup.signal.aborted) return;
        program.error(`error: ${(e as Error).message}`, { exitCode: 2 });
      }
      process.off("SIGINT", stopStarting);
      process.off("SIGTERM", stopStarting);
      if (pki !== undefined) {
        credentials = pki.credentials;
      } else if (credentials === undefined) {
        log.warn("--xds-plaintext: xDS is served without TLS; any pod that reaches the port may join any node group");
      }
      // The data planes dial with their mounted client certificates only when this operator's CA signs them.
      const settings = { ...envSettings, xdsTls: pki !== undefined };
      const cache = new SnapshotCache({ check: checkEnvoySnapshot });
      cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
      const xds = await startXdsServer({
        cache,
        listen: flags.xdsListen,
        logger: log,
        ...(credentials === undefined ? {} : { credentials }),
        requireIdentity: flags.xdsTlsCa !== undefined || pki !== undefined,
        maxConnections: flags.xdsMaxConnections,
        maxNamesPerStream: flags.xdsMaxNamesPerStream,
      }).catch((e: unknown) =>
        program.error(`error: ${listenFailureMessage("--xds-listen", flags.xdsListen, e)}`, { exitCode: 2 }),
      );
      // The fleet exists once runOperator started (below); ListFleet reads it at each call.
      let fleet: () => FleetSource | undefined = () => undefined;
      const introspection = addIntrospection(xds.grpcServer, { status: xds.status, cache, fleet: () => fleet() });
      const detachMetrics = attachXdsMetrics(metrics, xds.status, { cache });
      log.info({ port: xds.port }, `xDS (ADS) server listening on port ${String(xds.port)}`);
      const detachPage = page.watchXds(xds.status);

      // Only the groups whose rendering changed since the last publish are handed to the cache; each
      // change that moved a group's versions is logged, then who ACKed it.
      const feed = new ChangeFeed({ cache, log, clock: SYSTEM_CLOCK });
      feed.attach(xds.status);
      const op = runOperator({
        kubeConfig,
        settings,
        xds: { status: xds.status, cache },
        onState: (_state, outputs, batch) => {
          feed.publish(outputs, batch);
          page.setModel(outputs.model);
        },
        logger: log,
        httpListen: probe,
        httpAuth: flags.httpAuth,
        page,
        metrics: recorder,
        leaderElection: flags.leaderElection,
        ...(pki === undefined ? {} : { pki: pki.ca }),
        ...(process.env["POD_NAME"] === undefined ? {} : { identity: process.env["POD_NAME"] }),
        closeStreams: async () => {
          introspection.setServing(false);
          detachMetrics();
          detachPage();
          feed.close();
          pki?.rotation.stop();
          await xds.close();
        },
      });
      fleet = () => op.fleet;

      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, "shutting down: writes stop, the Lease is released, streams close");
        // close() bounds each of its steps; this bounds the whole, whatever still holds the event loop.
        setTimeout(() => {
          log.error("shutdown did not finish in 8 s; exiting anyway");
          process.exit(1);
        }, 8_000).unref();
        void op.close().then(
          () => process.exit(0),
          (e: unknown) => {
            log.error(`unclean shutdown: ${(e as Error).message}`);
            process.exit(1);
          },
        );
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
