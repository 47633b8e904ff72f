// `oooi dhcp-agent`: its flags and help. The agent (../dhcp-agent.ts) is loaded when it runs.
import { InvalidArgumentError, Option, type Command } from "commander";
import type { AgentFlags } from "../dhcp-agent.js";
import { logFormatOption } from "../options.js";

/** Adds `oooi dhcp-agent` to the command line. */
export function registerDhcpAgentCommand(program: Command): void {
  program
    .command("dhcp-agent")
    .summary("drive a local kea-dhcp4 with the configuration received over xDS")
    .description(
      "Run next to kea-dhcp4 (sharing its control socket) and keep it on its DHCPServer's configuration.\n\n" +
        "Subscribes over ADS to the oooi.dhcp.v1.KeaConfig resource named NS/NAME and applies every version " +
        "with config-test, config-set and config-write, keeping the control socket and interfaces Kea was " +
        "started with. A version Kea runs is ACKed; one it refuses is NACKed with Kea's message while Kea " +
        "keeps serving the previous one. The agent shows up in CSDS and `oooi debug nodes` like an Envoy.\n\n" +
        "Waits for Kea's socket and for the xDS server, retrying with backoff; exits 0 on SIGTERM.",
    )
    .addHelpText(
      "after",
      "\nExample:\n  oooi dhcp-agent --kea-socket /run/kea/kea4-ctrl-socket --xds oooi.oooi-system.svc:18000 --node clusters/vlan100-dhcp",
    )
    .requiredOption("--kea-socket <path>", "Kea's unix control socket (it may not exist yet)")
    .requiredOption(
      "--xds <host:port>",
      "ADS server: host:port, or a gRPC target such as dns:///oooi.oooi-system.svc:18000",
      xdsTarget,
    )
    .requiredOption("--node <ns/name>", "the DHCPServer this Kea serves (node group and resource name)", nodeName)
    .option("--node-id <id>", "this agent's node.id (default: $POD_NAMESPACE/$POD_NAME, else the host name)", nonEmpty)
    .option("--tls-ca <file>", "PEM CA bundle to verify the xDS server with (enables TLS)")
    .option("--tls-cert <file>", "PEM client certificate for mTLS (with --tls-key)")
    .option("--tls-key <file>", "PEM private key of --tls-cert")
    .option(
      "--kea-lease-file <path>",
      "lease file of this Kea, replacing the rendered one (default: as rendered, /var/lib/kea/kea-leases4.csv)",
    )
    .option("--kea-hooks-dir <dir>", "directory of this Kea's hook libraries, replacing the rendered one")
    .addOption(
      new Option("--log-level <level>", "log verbosity")
        .choices(["trace", "debug", "info", "warn", "error"])
        .default("info"),
    )
    .addOption(logFormatOption())
    .action(async (opts: AgentFlags, cmd: Command) => {
      const { runAgentCommand } = await import("../dhcp-agent.js");
      await runAgentCommand(opts, cmd);
    });
}

/** "host:port", "[v6]:port", or a gRPC target URI (scheme://…). */
function xdsTarget(value: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\/?/i.test(value) && !/^[^:/]+:\d+$/.test(value)) return value;
  const m = /^(?:\[[^\]]+\]|[^:[\]\s]+):(\d+)$/.exec(value);
  const port = Number(m?.[1]);
  if (m === null || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidArgumentError(
      "expected host:port (e.g. 127.0.0.1:18000) or a gRPC target such as dns:///host:port",
    );
  }
  return value;
}

/** "<namespace>/<DHCPServer name>". */
function nodeName(value: string): string {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(value)) {
    throw new InvalidArgumentError("expected NAMESPACE/NAME of the DHCPServer, e.g. clusters/vlan100-dhcp");
  }
  return value;
}

function nonEmpty(value: string): string {
  if (value.trim() === "") throw new InvalidArgumentError("must not be empty");
  return value;
}
