// `oooi verify`: the user's Verification list run against a running `serve` — DNS from a VLAN and
// a pod-network source, every route through the served snapshot, every data plane's ACK, every
// VMI's reservation — or against a cluster (--kubeconfig, ../verify/cluster.ts), as a PASS/FAIL
// table with cause and fix; exit 1 on any failure.
import type { ChannelCredentials } from "@grpc/grpc-js";
import { renderAll } from "../pipeline/outputs.js";
import { formatManifestError, loadManifests } from "../watchers/manifests.js";
import { DebugClient } from "../xds/introspect/debug-client.js";
import { fetchSnapshot } from "../verify/fetch-snapshot.js";
import { queryA } from "../verify/probe-dns.js";
import {
  formatVerifyHeader,
  formatVerifyRow,
  formatVerifySummary,
  formatVerifyTable,
  tableLayout,
  verifyDocument,
  verifyExitCode,
  type TableLayout,
} from "../verify/report.js";
import { structured } from "./structured-output.js";
import { rootCause, runVerify, type VerifyProbes } from "../verify/run.js";
import { readCluster, runClusterVerify } from "../verify/cluster.js";
import { KubeRest } from "../kube/rest.js";
import { xdsCredentials } from "./xds-tls-credentials.js";
import type { XdsTlsOptions } from "./xds-tls-flags.js";

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
    ...(dns === false
      ? {}
      : { dns: (source, name) => queryA(dns, source, name, timeout), dnsAddress: `${dns.host}:${String(dns.port)}` }),
    ...(xds === false ? {} : { xdsAddress: xds }),
    ...(xds === false
      ? {}
      : { snapshot: (group) => fetchSnapshot({ address: xds, group, timeoutMs: timeout, ...tls }) }),
    ...(debug === undefined ? {} : { nodes: () => debug.listNodes() }),
  };
  try {
    // The table is printed row by row as the checks run; -o json|yaml once at the end.
    const table = opts.output === "table";
    let layout: TableLayout | undefined;
    const results = await runVerify(
      load.state,
      out.model.topologies,
      probes,
      {
        podSource: opts.podSource,
        ...(opts.vlanSource === undefined ? {} : { vlanSource: opts.vlanSource }),
        ...(opts.forwardName === undefined ? {} : { forwardName: opts.forwardName }),
      },
      table
        ? {
            onPlan: (rows) => {
              layout = tableLayout(rows);
              io.out(formatVerifyHeader(layout));
            },
            onResult: (r) => {
              io.out(formatVerifyRow(r, layout ?? tableLayout([r]), io.color));
            },
          }
        : {},
    );
    const cause = rootCause(results);
    io.out(
      table ? formatVerifySummary(results, cause) : (structured(verifyDocument(results, cause), opts.output) ?? ""),
    );
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
  io.out(structured(verifyDocument(results), opts.output) ?? formatVerifyTable(results, io.color));
  return verifyExitCode(results);
}
