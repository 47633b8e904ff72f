// `oooi operator`: in-cluster controller plus xDS server. Every replica watches the cluster and
// serves ADS from its own cache; only the Lease holder writes. The run itself (operator-run.ts) is
// loaded when the command runs.
import { Option, type Command } from "commander";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_NAMES_PER_STREAM } from "../../xds/server/limits.js";
import {
  filterChainMatcherOption,
  hostPort,
  logFormatOption,
  hostPortOption,
  positiveInt,
  xdsMaxConnectionsOption,
  xdsMaxNamesOption,
} from "../options.js";
import { DEFAULT_API_RETRY_MAX_MS } from "../../operator/process/api-retry.js";
import type { OperatorFlags } from "../operator-run.js";

export function registerOperatorCommand(program: Command): void {
  program
    .command("operator")
    .summary("run in the management cluster: reconcile, keep status, serve xDS")
    .description(
      "Run in the management cluster: watch Infra, InfraClusterAttachment and what HyperShift, CAPI and " +
        "KubeVirt report; server-side-apply the DHCP, DNS and proxy workloads; keep status conditions; serve " +
        "ADS to the Envoys and dhcp-agents. Several replicas may run: each serves xDS from its own watches, " +
        "only the holder of the Lease `oooi-operator` in $POD_NAMESPACE writes.\n\n" +
        "Environment: POD_NAMESPACE (Lease and xDS Service namespace), POD_NAME (leader identity; its Pod's " +
        "image is the dhcp-agent sidecars'), OOOI_IMAGE (overrides it), OOOI_ENVOY_IMAGE, OOOI_COREDNS_IMAGE, " +
        "OOOI_KEA_IMAGE, OOOI_XDS_ADDRESS.",
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
        "who may read the status page, /events, /status.json and /metrics: kubernetes = a bearer token the API server accepts (TokenReview) for a user allowed to get the path (SubjectAccessReview; bind the ClusterRole oooi-metrics-reader); none = anyone who reaches the port. /healthz and /readyz are always open. With kubernetes the port is HTTPS (tokens never travel in the clear)",
      )
        .choices(["kubernetes", "none"])
        .default("kubernetes"),
    )
    .option(
      "--http-tls-cert <file>",
      "serve --http-listen over HTTPS with this certificate (PEM; read again every 10 s, so a rotated Secret is served without a restart); default with --http-auth=kubernetes: a self-signed certificate made at start",
    )
    .option("--http-tls-key <file>", "private key of --http-tls-cert (PEM)")
    .option("--xds-tls-cert <file>", "serve xDS over TLS with this certificate (PEM)")
    .option("--xds-tls-key <file>", "private key of --xds-tls-cert (PEM)")
    .option("--xds-tls-ca <file>", "require client certificates signed by this CA (mTLS)")
    .option(
      "--xds-plaintext",
      "development only: serve xDS without TLS and without client certificates (no CA Secret, no client Secrets); default is mTLS with the operator's own CA unless --xds-tls-cert is given",
    )
    .addOption(xdsMaxConnectionsOption(DEFAULT_MAX_CONNECTIONS))
    .addOption(xdsMaxNamesOption(DEFAULT_MAX_NAMES_PER_STREAM))
    .addOption(filterChainMatcherOption())
    .option("--no-leader-election", "write without holding the Lease (one replica only)")
    .option(
      "--api-retry-max <ms>",
      "while the API server does not answer (at start: the longest wait between two attempts) — at start or later, the period of the one 'API server unreachable' summary line",
      positiveInt,
      DEFAULT_API_RETRY_MAX_MS,
    )
    .option("--log-level <level>", "trace, debug, info, warn or error", "info")
    .addOption(logFormatOption())
    .action(async (flags: OperatorFlags) => {
      const { runOperatorCommand } = await import("../operator-run.js");
      await runOperatorCommand(flags, program);
    });
}
