// `oooi verify`: the user's Verification list run against a running `serve` — DNS from a VLAN and
// a pod-network source, every route through the served snapshot, every data plane's ACK, every
// VMI's reservation — or against a cluster (--kubeconfig, ../verify/cluster.ts), as a PASS/FAIL
// table with cause and fix; exit 1 on any failure.
import type { ChannelCredentials } from "@grpc/grpc-js";
import type { Command } from "commander";
import { renderAll } from "../pipeline/outputs.js";
import { formatManifestError, loadManifests } from "../watchers/manifests.js";
import { DebugClient } from "../xds/introspect/debug-client.js";
import { fetchSnapshot } from "../verify/fetch-snapshot.js";
import { queryA } from "../verify/probe-dns.js";
import { formatVerifyJson, formatVerifyTable, verifyExitCode } from "../verify/report.js";
import { runVerify, type VerifyProbes } from "../verify/run.js";
import { readCluster, runClusterVerify } from "../verify/cluster.js";
import { DEFAULT_PROBE_IMAGE } from "../verify/probe-pod.js";
import { KubeRest } from "../kube/rest.js";
import { DEFAULT_XDS_ADDRESS } from "./debug.js";
import { choice, hostPortOption, positiveInt } from "./options.js";
import { withXdsTlsFlags, xdsCredentials, type XdsTlsOptions } from "./xds-tls-flags.js";

export interface VerifyCommandOptions extends XdsTlsOptions {
  readonly manifests?: string;
  readonly kubeconfig?: string;
  /** The kubeconfig's context to use instead of its current-context. */
  readonly context?: string;
  readonly namespace?: string;
  readonly probeImage: string;
  readonly xds: string | false;
  readonly dns: { host: string; port: number } | false;
  readonly podSource: string;
  readonly vlanSource?: string;
  readonly forwardName?: string;
  /** Undefined: 3000 ms against serve, 120000 ms (a pod to start) against a cluster. */
  readonly timeout?: number;
  readonly output: string;
}

/** Where verify writes; injectable so tests read what a user reads. */
export interface VerifyIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly color: boolean;
  /** Aborted on SIGINT: the cluster probe stops waiting and deletes its pod. */
  readonly signal?: AbortSignal;
}

/** Runs the checks; returns the exit status (0 all passed, 1 a check failed, 2 unreadable input). */
export async function verifyCommand(opts: VerifyCommandOptions, io: VerifyIo): Promise<number> {
  if ((opts.manifests === undefined) === (opts.kubeconfig === undefined)) {
    io.err("oooi verify: give either --manifests (against serve) or --kubeconfig (against a cluster)\n");
    return 2;
  }
  if (opts.kubeconfig !== undefined) return verifyCluster(opts.kubeconfig, opts, io);
  const timeout = opts.timeout ?? 3000;
  const load = await loadManifests(opts.manifests ?? "");
  if (!load.ok) {
    io.err(`oooi verify: cannot read manifests: ${formatManifestError(load.error)}\n`);
    return 2;
  }
  const out = renderAll(load.state, { now: Date.now() });
  const xds = opts.xds;
  const dns = opts.dns;
  let credentials: ChannelCredentials | undefined;
  try {
    credentials = xds === false ? undefined : xdsCredentials(opts);
  } catch (e) {
    io.err(`oooi verify: ${(e as Error).message}\n`);
    return 2;
  }
  const tls = credentials === undefined ? {} : { credentials };
  const debug = xds === false ? undefined : new DebugClient({ address: xds, timeoutMs: timeout, ...tls });
  const probes: VerifyProbes = {
    ...(dns === false ? {} : { dns: (source, name) => queryA(dns, source, name, timeout) }),
    ...(xds === false
      ? {}
      : { snapshot: (group) => fetchSnapshot({ address: xds, group, timeoutMs: timeout, ...tls }) }),
    ...(debug === undefined ? {} : { nodes: () => debug.listNodes() }),
  };
  try {
    const results = await runVerify(load.state, out.model.topologies, probes, {
      podSource: opts.podSource,
      ...(opts.vlanSource === undefined ? {} : { vlanSource: opts.vlanSource }),
      ...(opts.forwardName === undefined ? {} : { forwardName: opts.forwardName }),
    });
    io.out(opts.output === "json" ? formatVerifyJson(results) : formatVerifyTable(results, io.color));
    return verifyExitCode(results);
  } finally {
    debug?.close();
  }
}

/** The cluster mode: list the state, probe each Infra's VLAN from a pod, read the children's status. */
async function verifyCluster(kubeconfig: string, opts: VerifyCommandOptions, io: VerifyIo): Promise<number> {
  const timeout = opts.timeout ?? 120_000;
  let rest: KubeRest;
  try {
    // Loaded here: the Kubernetes client (client-node) costs the other commands' start-up otherwise.
    const { loadKubeconfigFiles } = await import("../kube/kubeconfig.js");
    rest = new KubeRest(loadKubeconfigFiles([kubeconfig], opts.context), {
      requestTimeoutMs: Math.min(timeout, 30_000),
    });
  } catch (e) {
    io.err(`oooi verify: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  let obs;
  try {
    obs = await readCluster(rest, timeout);
  } catch (e) {
    io.err(`oooi verify: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  const results = await runClusterVerify(rest, obs, {
    probeImage: opts.probeImage,
    timeoutMs: timeout,
    ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
    ...(opts.forwardName === undefined ? {} : { forwardName: opts.forwardName }),
    ...(io.signal === undefined ? {} : { signal: io.signal }),
  });
  io.out(opts.output === "json" ? formatVerifyJson(results) : formatVerifyTable(results, io.color));
  return verifyExitCode(results);
}

/** Adds `oooi verify` to `program`. */
export function registerVerifyCommand(program: Command): Command {
  return withXdsTlsFlags(
    program
      .command("verify")
      .summary("run the Verification list of the user documentation against a running serve or a cluster")
      .description(
        "Run the Verification list and compare every answer with the model.\n" +
          "Against a running `oooi serve` (--manifests: the model is built from them):\n" +
          "  dns     every published name (api, api-int, oauth, ignition, konnectivity, *.apps, the kubernetes\n" +
          "          aliases) and --forward-name, from a VLAN source and from a pod-network source\n" +
          "  route   every TLS backend: the chain the served snapshot selects, its cluster and endpoints\n" +
          "  ack     every connected Envoy / dhcp-agent: each type ACKed at the current snapshot's version\n" +
          "  dhcp    every VMI's reservation against the address it reports\n" +
          "On loopback, the VLAN source is an address of the Infra's CIDR (the last host address unless\n" +
          "--vlan-source) and the pod-network source 127.0.0.1, as `dig -b` would ask.\n\n" +
          "Against a cluster (--kubeconfig: the model is built from the Infras, attachments and what they\n" +
          "reference, listed once): the VLAN-view names from a short-lived probe pod on each Infra's NAD at\n" +
          "the last host address of its CIDR (--probe-image, dig), deleted afterwards; every ProxyServer /\n" +
          "DHCPServer's status.ackedVersion and lastNack; every VMI's reservation. The pod-network view and\n" +
          "the routes are skipped (use --manifests/--xds against the operator's xDS port for the routes).\n" +
          "Needs: list/watch what the operator reads; create, get and delete pods (and\n" +
          "network-attachment-definitions) and get pods/log in the Infra namespaces.\n\n" +
          "Each failure names its cause and fix (the Troubleshooting rows). Exit status: 0 all passed,\n" +
          "1 a check failed, 2 the manifests or the API server cannot be read.",
      )
      .option("--manifests <dir|file>", "the manifests serve reads (the model the answers are compared with)")
      .option("--kubeconfig <file>", "verify the cluster of this kubeconfig's current context instead of a serve")
      .option("--context <name>", "cluster mode: the kubeconfig's context to use instead of its current-context")
      .option("--namespace <ns>", "cluster mode: only the Infras of this namespace")
      .option("--probe-image <image>", "cluster mode: the probe pod's image (it runs sh and dig)", DEFAULT_PROBE_IMAGE)
      .option("--xds <host:port>", "serve's xDS address", DEFAULT_XDS_ADDRESS)
      .option("--no-xds", "skip the route and ack checks"),
  )
    .addOption(hostPortOption("--dns <host:port>", "serve's DNS responder", "127.0.0.1:5353"))
    .option("--no-dns", "skip the DNS checks")
    .option("--vlan-source <ip>", "ask the VLAN view from this address (default: the last host address of the CIDR)")
    .option("--pod-source <ip>", "ask the pod-network view from this address", "127.0.0.1")
    .option(
      "--forward-name <name>",
      "also check that this name, outside every zone, is forwarded (e.g. www.example.net)",
    )
    .option(
      "--timeout <ms>",
      "give up on an unanswered probe after this long (default 3000; cluster mode: the probe pod, 120000)",
      positiveInt,
    )
    .option("-o, --output <format>", "table or json", choice(["table", "json"]), "table")
    .action(async (opts: VerifyCommandOptions) => {
      // SIGINT ends the wait for a probe pod; the pod is deleted before the process exits.
      const interrupt = new AbortController();
      const onSigint = (): void => {
        interrupt.abort();
      };
      process.once("SIGINT", onSigint);
      try {
        process.exitCode = await verifyCommand(opts, {
          out: (t) => process.stdout.write(t),
          err: (t) => process.stderr.write(t),
          color: process.stdout.isTTY && (process.env["NO_COLOR"] ?? "") === "",
          signal: interrupt.signal,
        });
        if (interrupt.signal.aborted) process.exitCode = 130;
      } finally {
        process.off("SIGINT", onSigint);
      }
    });
}
