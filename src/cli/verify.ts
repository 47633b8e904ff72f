// `oooi verify`: the user's Verification list run against a running `serve` — DNS from a VLAN and
// a pod-network source, every route through the served snapshot, every data plane's ACK, every
// VMI's reservation — as a PASS/FAIL table with cause and fix; exit 1 on any failure.
import type { Command } from "commander";
import { renderAll } from "../pipeline/outputs.js";
import { formatManifestError, loadManifests } from "../watchers/manifests.js";
import { DebugClient } from "../xds/introspect/debug-client.js";
import { fetchSnapshot } from "../verify/fetch-snapshot.js";
import { queryA } from "../verify/probe-dns.js";
import { formatVerifyJson, formatVerifyTable, verifyExitCode } from "../verify/report.js";
import { runVerify, type VerifyProbes } from "../verify/run.js";
import { DEFAULT_XDS_ADDRESS } from "./debug.js";
import { choice, hostPortOption, positiveInt } from "./options.js";

export interface VerifyCommandOptions {
  readonly manifests: string;
  readonly xds: string | false;
  readonly dns: { host: string; port: number } | false;
  readonly podSource: string;
  readonly vlanSource?: string;
  readonly forwardName?: string;
  readonly timeout: number;
  readonly output: string;
}

/** Where verify writes; injectable so tests read what a user reads. */
export interface VerifyIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly color: boolean;
}

/** Runs the checks; returns the exit status (0 all passed, 1 a check failed, 2 unreadable manifests). */
export async function verifyCommand(opts: VerifyCommandOptions, io: VerifyIo): Promise<number> {
  const load = await loadManifests(opts.manifests);
  if (!load.ok) {
    io.err(`oooi verify: cannot read manifests: ${formatManifestError(load.error)}\n`);
    return 2;
  }
  const out = renderAll(load.state, { now: Date.now() });
  const xds = opts.xds;
  const dns = opts.dns;
  const debug = xds === false ? undefined : new DebugClient({ address: xds, timeoutMs: opts.timeout });
  const probes: VerifyProbes = {
    ...(dns === false ? {} : { dns: (source, name) => queryA(dns, source, name, opts.timeout) }),
    ...(xds === false ? {} : { snapshot: (group) => fetchSnapshot({ address: xds, group, timeoutMs: opts.timeout }) }),
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

/** Adds `oooi verify` to `program`. */
export function registerVerifyCommand(program: Command): Command {
  return program
    .command("verify")
    .summary("run the Verification list of the user documentation against a running serve")
    .description(
      "Run the Verification list against a running `oooi serve` and compare every answer with the model\n" +
        "built from --manifests:\n" +
        "  dns     every published name (api, api-int, oauth, ignition, konnectivity, *.apps, the kubernetes\n" +
        "          aliases) and --forward-name, from a VLAN source and from a pod-network source\n" +
        "  route   every TLS backend: the chain the served snapshot selects, its cluster and endpoints\n" +
        "  ack     every connected Envoy / dhcp-agent: each type ACKed at the current snapshot's version\n" +
        "  dhcp    every VMI's reservation against the address it reports\n\n" +
        "Each failure names its cause and fix (the Troubleshooting rows). Exit status: 0 all passed,\n" +
        "1 a check failed, 2 the manifests cannot be read.\n" +
        "On loopback, the VLAN source is an address of the Infra's CIDR (the last host address unless\n" +
        "--vlan-source) and the pod-network source 127.0.0.1, as `dig -b` would ask.",
    )
    .requiredOption("--manifests <dir|file>", "the manifests serve reads (the model the answers are compared with)")
    .option("--xds <host:port>", "serve's xDS address", DEFAULT_XDS_ADDRESS)
    .option("--no-xds", "skip the route and ack checks")
    .addOption(hostPortOption("--dns <host:port>", "serve's DNS responder", "127.0.0.1:5353"))
    .option("--no-dns", "skip the DNS checks")
    .option("--vlan-source <ip>", "ask the VLAN view from this address (default: the last host address of the CIDR)")
    .option("--pod-source <ip>", "ask the pod-network view from this address", "127.0.0.1")
    .option(
      "--forward-name <name>",
      "also check that this name, outside every zone, is forwarded (e.g. www.example.net)",
    )
    .option("--timeout <ms>", "give up on an unanswered probe after this long", positiveInt, 3000)
    .option("-o, --output <format>", "table or json", choice(["table", "json"]), "table")
    .action(async (opts: VerifyCommandOptions) => {
      process.exitCode = await verifyCommand(opts, {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
        color: process.stdout.isTTY && (process.env["NO_COLOR"] ?? "") === "",
      });
    });
}
