// `oooi explain`: its flags and help. The explanation (../explain.ts) is loaded when it runs.
import type { Command } from "commander";
import type { ExplainCommandOptions } from "../explain.js";
import { outputOption, port, positiveInt } from "../options.js";
import { withXdsTlsFlags } from "../xds-tls-flags.js";

/** Adds `oooi explain` to `program`. */
export function registerExplainCommand(program: Command): Command {
  return withXdsTlsFlags(
    program
      .command("explain")
      .summary("which listener, chain, cluster (or DNS view and record) answers a connection")
      .description(
        "Explain how the current snapshot handles one connection or one DNS query:\n" +
          "  oooi explain --manifests DIR --from 127.0.8.10 --port 6443              listener, chain, cluster, endpoints\n" +
          "  oooi explain --manifests DIR --from 127.0.8.10 --port 443 --sni NAME\n" +
          "  oooi explain --manifests DIR --from 127.0.8.10 --dns api.alpha.example.com   view, zone, record\n" +
          "  oooi explain --xds 127.0.0.1:18000 --group clusters/tenant-vlan-proxy --from IP --port 6443\n\n" +
          "With --xds the snapshot is fetched from the running server (serve or operator) as an Envoy of the " +
          "group gets it; with --manifests alone it is rendered here. Every chain not chosen is listed with the " +
          "criterion that turned the connection away; with no match, the nearest miss.\n\n" +
          "Exit status: 0 explained, 1 nothing matches, 2 bad usage or unreadable manifests.",
      )
      .requiredOption("--from <ip>", "source address of the client (a worker's VLAN address)")
      .option("--port <port>", "destination port of the connection (443, 6443, 80)", port)
      .option("--sni <name>", "TLS server name the client sends (none = SNI-less TLS)")
      .option("--dns <name>", "explain an A query for this name instead of a connection")
      .option("--to <ip>", "destination address (default: the proxy's serverIP)")
      .option("--manifests <dir|file>", "manifests folder to render the snapshot from (and to name hosted clusters)")
      .option("--xds <host:port>", "fetch the snapshot from this running xDS server")
      .option("--group <ns/name>", "node group to fetch with --xds (default: every proxy of --manifests)"),
  )
    .option("--timeout <ms>", "give up on the xDS server after this long", positiveInt, 5000)
    .addOption(outputOption("text"))
    .action(async (opts: ExplainCommandOptions) => {
      const { explainCommand } = await import("../explain.js");
      process.exitCode = await explainCommand(opts, {
        out: (t) => process.stdout.write(t),
        err: (t) => process.stderr.write(t),
      });
    });
}
