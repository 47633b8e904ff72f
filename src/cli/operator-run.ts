// `oooi operator`'s run, loaded only when the command runs: it pulls in the Kubernetes client
// (client-node), the operator and the xDS server, which `oooi --help` and the other commands need not load.
import { packageVersion, processStartMs } from "./package-version.js";
import type { ServerCredentials } from "@grpc/grpc-js";
import type { Command } from "commander";
import { cliLogger } from "./logger.js";
import type { LogFormat } from "./options.js";
import { Metrics, attachXdsMetrics } from "../metrics/index.js";
import { runOperator } from "../operator/process/run.js";
import { OPERATOR_METRICS } from "../operator/process/metrics.js";
import { settingsFromEnv } from "../operator/desired/settings.js";
import { ChangeFeed } from "../pipeline/change-feed.js";
import { SnapshotCache } from "../xds/cache/index.js";
import { addIntrospection, serverCredentialsFromFiles, type FleetSource } from "../xds/introspect/index.js";
import { KEA_CONFIG_TYPE_SPEC, KEA_CONFIG_TYPE_URL } from "../dhcp/kea-config-resource.js";
import { startXdsServer } from "../xds/server/index.js";
import { StatusPage } from "../status-page/index.js";
import { hostPort } from "./options.js";
import { checkListenable, listenFailureMessage } from "./listen-error.js";
import { AccessReview } from "../operator/process/access-review.js";
import { DEBUG_ACCESS } from "../operator/desired/permissions.js";
import { readOwnImage } from "../operator/process/own-image.js";
import { keaSccMode } from "../operator/process/kea-scc-grant.js";
import { startOperatorPki, type OperatorPki } from "./operator-pki.js";
import { loadKubeClientConfig, type KubeClientConfig } from "../kube/kubeconfig.js";
import { KubeRest } from "../kube/rest.js";
import { checkEnvoySnapshot } from "../envoy/snapshot.js";
import { startProbeServer } from "../operator/process/http.js";
import { httpTlsFromFiles, selfSignedHttpTls, type HttpTls } from "../operator/process/http-tls.js";
import { servingNames } from "../pki/store.js";
import { DEFAULT_OPERATOR_NAMESPACE, METRICS_SERVICE } from "../operator/desired/settings.js";
import { ApiRetry } from "../operator/process/api-retry.js";
import { SYSTEM_CLOCK } from "../util/clock.js";

export interface OperatorFlags {
  kubeconfig?: string;
  context?: string;
  xdsListen: string;
  httpListen: { host: string; port: number };
  httpAuth: "kubernetes" | "none";
  httpTlsCert?: string;
  httpTlsKey?: string;
  xdsTlsCert?: string;
  xdsTlsKey?: string;
  xdsTlsCa?: string;
  xdsPlaintext?: boolean;
  xdsMaxConnections: number;
  xdsMaxNamesPerStream: number;
  leaderElection: boolean;
  filterChainMatcher: boolean;
  apiRetryMax: number;
  logLevel: string;
  logFormat?: LogFormat;
}

/** Runs the operator until a signal; `program` reports usage errors with their exit code. */
export async function runOperatorCommand(flags: OperatorFlags, program: Command): Promise<void> {
  const log = cliLogger("operator", flags.logLevel, flags.logFormat);
  let kubeConfig: KubeClientConfig;
  let credentials: ServerCredentials | undefined;
  let httpTls: HttpTls | undefined;
  try {
    kubeConfig = loadKubeClientConfig(flags.kubeconfig, flags.context === undefined ? {} : { context: flags.context });
    if ((flags.httpTlsCert === undefined) !== (flags.httpTlsKey === undefined))
      throw new Error("--http-tls-cert and --http-tls-key go together");
    if (flags.httpTlsCert !== undefined && flags.httpTlsKey !== undefined)
      httpTls = httpTlsFromFiles({ cert: flags.httpTlsCert, key: flags.httpTlsKey });
    if ((flags.xdsTlsCert === undefined) !== (flags.xdsTlsKey === undefined))
      throw new Error("--xds-tls-cert and --xds-tls-key go together");
    if (flags.xdsTlsCert !== undefined && flags.xdsTlsKey !== undefined) {
      // A client without a certificate connects but has no identity: the debug services take a token instead.
      credentials = serverCredentialsFromFiles({
        cert: flags.xdsTlsCert,
        key: flags.xdsTlsKey,
        ...(flags.xdsTlsCa === undefined ? {} : { ca: flags.xdsTlsCa }),
        clientCertificate: "optional",
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
  // Bearer tokens never cross the network in the clear: with --http-auth=kubernetes the port is
  // HTTPS, on a self-signed certificate when none is given (as controller-runtime's metrics server).
  if (httpTls === undefined && flags.httpAuth === "kubernetes") {
    const namespace = process.env["POD_NAMESPACE"] ?? DEFAULT_OPERATOR_NAMESPACE;
    httpTls = await selfSignedHttpTls([...servingNames(METRICS_SERVICE, namespace), "localhost"]);
    log.info(
      "HTTP port: TLS with a self-signed certificate made at start (clients cannot verify it; --http-tls-cert and --http-tls-key give one they can)",
    );
  }
  const metrics = new Metrics({ processMetrics: true });
  const recorder = metrics.recorder(OPERATOR_METRICS);
  const page = new StatusPage({ title: "oooi operator" });
  // Listening before the API server answers: /healthz says the process is up, /readyz that it is
  // not ready yet (runOperator takes the listener over). The listener is also what keeps the
  // process alive while start-up waits on timers.
  const httpAt = `${flags.httpListen.host}:${String(flags.httpListen.port)}`;
  const probe = await startProbeServer(
    flags.httpListen,
    {
      live: () => true,
      ready: () => false,
      metrics: recorder,
      page,
      // Fail closed while the API server is away: a review that cannot be made refuses (500).
      ...(flags.httpAuth === "kubernetes"
        ? { access: new AccessReview({ rest: new KubeRest(kubeConfig), now: () => Date.now(), logger: log }) }
        : {}),
    },
    httpTls,
  ).catch((e: unknown) => program.error(`error: ${listenFailureMessage("--http-listen", httpAt, e)}`, { exitCode: 2 }));
  log.info(
    `probes and metrics on ${probe.scheme}://${probe.address.address}:${String(probe.address.port)} (status page: /)`,
  );
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
  // One listener for the process's life, pointed at what stops the current phase: swapping
  // listeners drops a signal libuv caught but had not yet dispatched, and between the two there was
  // none at all (the default action: killed, the Lease held until it expires).
  let shutdown = stopStarting;
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    shutdown(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
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
    const podImage = await readOwnImage({ rest: new KubeRest(kubeConfig), env: process.env, retry, log });
    const discovered = settingsFromEnv(process.env, apiGroups, podImage);
    const keaScc = await keaSccMode(discovered.keaScc, new KubeRest(kubeConfig), retry);
    if (keaScc === "bind") log.info("OpenShift: this operator binds Kea's SCC role per Infra (deploy/openshift)");
    envSettings = { ...discovered, keaScc };
    if (credentials === undefined && flags.xdsPlaintext !== true)
      pki = await startOperatorPki(new KubeRest(kubeConfig), envSettings, log, SYSTEM_CLOCK, retry);
  } catch (e) {
    if (startup.signal.aborted) return;
    program.error(`error: ${(e as Error).message}`, { exitCode: 2 });
  }
  if (pki !== undefined) {
    credentials = pki.credentials;
  } else if (credentials === undefined) {
    log.warn("--xds-plaintext: xDS is served without TLS; any pod that reaches the port may join any node group");
  }
  // The data planes dial with their mounted client certificates only when this operator's CA signs them.
  const settings = { ...envSettings, xdsTls: pki !== undefined };
  // Fail closed while the API server is away, as on the HTTP port.
  const debugAccess = new AccessReview({ rest: new KubeRest(kubeConfig), now: () => Date.now(), logger: log });
  const cache = new SnapshotCache({ check: checkEnvoySnapshot });
  cache.registerType(KEA_CONFIG_TYPE_URL, KEA_CONFIG_TYPE_SPEC);
  const xds = await startXdsServer({
    cache,
    listen: flags.xdsListen,
    logger: log,
    ...(credentials === undefined ? {} : { credentials }),
    requireIdentity: flags.xdsTlsCa !== undefined || pki !== undefined,
    // `oooi debug --kubeconfig`: a token whose user may `debug` the operator's resource (deploy/rbac oooi-debugger).
    tokens: (authorization) =>
      debugAccess.decideResource(authorization, { ...DEBUG_ACCESS, namespace: settings.namespace }),
    maxConnections: flags.xdsMaxConnections,
    maxNamesPerStream: flags.xdsMaxNamesPerStream,
  }).catch((e: unknown) =>
    program.error(`error: ${listenFailureMessage("--xds-listen", flags.xdsListen, e)}`, { exitCode: 2 }),
  );
  // Stopped while the xDS server started: nothing is written; stopStarting exits.
  if (startup.signal.aborted) return;
  // The fleet exists once runOperator started (below); ListFleet reads it at each call.
  let fleet: () => FleetSource | undefined = () => undefined;
  const introspection = addIntrospection(xds.grpcServer, {
    status: xds.status,
    cache,
    fleet: () => fleet(),
    server: { version: packageVersion(), command: "operator", startedMs: processStartMs() },
  });
  const detachMetrics = attachXdsMetrics(metrics, xds.status, { cache });
  log.info({ port: xds.port }, `xDS (ADS) server listening on port ${String(xds.port)}`);
  const detachPage = page.watchXds(xds.status, cache);

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
    apiRetryMaxMs: flags.apiRetryMax,
    envoy: { filterChainMatcher: flags.filterChainMatcher },
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

  const stop = (signal: string) => {
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
  shutdown = stop;
}
