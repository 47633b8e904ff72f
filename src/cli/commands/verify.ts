// `oooi verify`: its flags and help. The checks (../verify.ts) are loaded when it runs.
import type { Command } from "commander";
import { DEFAULT_XDS_ADDRESS } from "../../envoy/xds-address.js";
import { DEFAULT_PROBE_IMAGE } from "../../verify/probe-image.js";
import { hostPortOption, outputOption, positiveInt } from "../options.js";
import type { VerifyCommandOptions } from "../verify.js";
import { withXdsTlsFlags } from "../xds-tls-flags.js";

/** Adds `oooi verify` to `program`. */
export function registerVerifyCommand(program: Command): Command {
  return withXdsTlsFlags(
    program
      .command("verify")
      .summary("run the Verification list of the user documentation against a running serve or a cluster")
      .description(
        "Run the Verification list and compare every answer with the model.\n\n" +
          "Against a running `oooi serve` (--manifests: the model is built from them):\n" +
          "  dns     every published name (api, api-int, oauth, ignition, konnectivity, *.apps, the kubernetes\n" +
          "          aliases) and --forward-name, from a VLAN source and from a pod-network source\n" +
          "  route   every TLS backend: the chain the served snapshot selects, its cluster and endpoints\n" +
          "  ack     every connected Envoy / dhcp-agent: each type ACKed at the current snapshot's version\n" +
          "  dhcp    every VMI's reservation against the address it reports " +
          "On loopback, the VLAN source is an address of the Infra's CIDR (the last host address unless " +
          "--vlan-source) and the pod-network source 127.0.0.1, as `dig -b` would ask.\n\n" +
          "Against a cluster (--kubeconfig: the model is built from the Infras, attachments and what they " +
          "reference, listed once): the VLAN-view names from a short-lived probe pod on each Infra's NAD at " +
          "the last host address of its CIDR (--probe-image, dig), deleted afterwards; every ProxyServer / " +
          "DHCPServer's status.ackedVersion and lastNack; every VMI's reservation. The pod-network view and " +
          "the routes are skipped (use --manifests/--xds against the operator's xDS port for the routes).\n\n" +
          "Needs: list/watch what the operator reads; create, get and delete pods (and " +
          "network-attachment-definitions) and get pods/log in the Infra namespaces.\n\n" +
          "Each failure names its cause and fix (the Troubleshooting rows). Exit status: 0 all passed, " +
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
    .addOption(outputOption("table"))
    .action(async (opts: VerifyCommandOptions) => {
      // SIGINT ends the wait for a probe pod; the pod is deleted before the process exits.
      const interrupt = new AbortController();
      const onSigint = (): void => {
        interrupt.abort();
      };
      process.once("SIGINT", onSigint);
      try {
        const { verifyCommand } = await import("../verify.js");
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
