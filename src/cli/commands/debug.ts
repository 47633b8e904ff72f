// `oooi debug`: its subcommands, flags and help. The client and the tables (../debug.ts) are loaded
// when a subcommand runs.
import type { Command } from "commander";
import { DEFAULT_XDS_ADDRESS } from "../../envoy/xds-address.js";
import { outputOption, positiveInt } from "../options.js";
import type { ConnectOptions, DebugIo } from "../debug.js";
import { withXdsTlsFlags } from "../xds-tls-flags.js";

function processIo(): DebugIo {
  return {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    exit: (code) => {
      process.exitCode = code;
    },
    now: () => Date.now(),
    color: process.stdout.isTTY && (process.env["NO_COLOR"] ?? "") === "",
  };
}

/** Adds `oooi debug nodes|config|pushes` to `program`. */
export function registerDebugCommand(program: Command, io: DebugIo = processIo()): Command {
  const debug = program
    .command("debug")
    .summary("inspect a running xDS server: connected nodes, their config, recent pushes")
    .description(
      "Inspect a running xDS server (oooi serve / oooi operator) through its oooi.debug.v1 service, " +
        "served on the xDS port next to ADS, CSDS, grpc.health.v1 and server reflection.\n\n" +
        "  oooi debug nodes                 connected Envoy / dhcp-agent nodes and their sync state per type\n" +
        "  oooi debug config NODE           the configuration one node was sent and acknowledged (YAML or JSON)\n" +
        "  oooi debug pushes                recent pushes with change→sent and change→ACK latencies\n\n" +
        "Sync states: synced (the group's current version was ACKed), BEHIND old→current (reason: held back " +
        "after a NACK, or not sent yet), stale (awaiting the ACK), NACK (the node " +
        "rejected the latest response: the reason is printed), not sent (subscribed, nothing to send yet).",
    );

  withConnect(debug.command("nodes"))
    .description(
      "List connected nodes: one row per xDS stream, one column per resource type: the version (shortened) and " +
        "how many resources the node holds of it — an empty configuration shows as (0, empty).",
    )
    .option("--cluster <ns/name>", "only nodes of this node group (Envoy node.cluster)")
    .option("--all", "also list nodes that disconnected recently")
    .addOption(outputOption("table"))
    .action(async (opts: ConnectOptions & { cluster?: string; all?: boolean; output: string }, cmd: Command) => {
      const { debugNodes } = await import("../debug.js");
      io.exit(await debugNodes(given(opts, cmd), io));
    });

  withConnect(debug.command("config").argument("<node>", "Envoy node.id of the node (see `oooi debug nodes`)"))
    .description(
      "Print the resources a node holds, per type: as acknowledged, and as sent when a newer version is pending or was rejected.",
    )
    .option("-t, --type <type>", "only this type: lds, cds, eds, rds, a type URL or a message name such as KeaConfig")
    .addOption(outputOption("yaml"))
    .action(async (node: string, opts: ConnectOptions & { type?: string; output: string }, cmd: Command) => {
      const { debugConfig } = await import("../debug.js");
      io.exit(await debugConfig(node, given(opts, cmd), io));
    });

  withConnect(debug.command("pushes"))
    .description("Recent pushes, oldest first: cause, version, size and change→sent / change→ACK latencies.")
    .option("--node <id>", "only pushes to this node")
    .option("--cluster <ns/name>", "only pushes of this node group")
    .option("-t, --type <type>", "only this type (lds, cds, eds, rds, a type URL or message name)")
    .option("-n, --limit <n>", "at most this many of the newest pushes", positiveInt, 50)
    .addOption(outputOption("table"))
    .action(
      async (
        opts: ConnectOptions & { node?: string; cluster?: string; type?: string; limit: number; output: string },
        cmd: Command,
      ) => {
        const { debugPushes } = await import("../debug.js");
        io.exit(await debugPushes(given(opts, cmd), io));
      },
    );
  return debug;
}

/** `opts` with whether --xds was given (with --kubeconfig it replaces the port-forward). */
function given<T extends ConnectOptions>(opts: T, cmd: Command): T {
  return { ...opts, xdsGiven: cmd.getOptionValueSource("xds") !== "default" };
}

function withConnect(cmd: Command): Command {
  return withXdsTlsFlags(cmd.option("--xds <host:port>", "address of the xDS server", DEFAULT_XDS_ADDRESS))
    .option("--timeout <ms>", "give up on an unanswered call after this long", positiveInt, 5000)
    .option(
      "--kubeconfig <file>",
      "reach the operator's leader through this kubeconfig's API server (pods/portforward) as its user: " +
        "its bearer token replaces the admin certificate and the operator's published CA is trusted " +
        "(needs the ClusterRole oooi-debugger bound in the operator's namespace; with --xds, connect there instead of port-forwarding)",
    )
    .option("--context <name>", "with --kubeconfig: the context to use instead of its current-context")
    .option("--namespace <ns>", "with --kubeconfig: the operator's namespace", "oooi-system");
}
