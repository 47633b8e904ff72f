// `oooi serve`: its flags and help. The process itself (../serve/command.ts) is loaded when it runs.
import { InvalidArgumentError, Option, type Command } from "commander";
import { DEFAULT_XDS_ADDRESS } from "../../envoy/xds-address.js";
import {
  DEFAULT_MAX_TCP_CONNECTIONS,
  DEFAULT_MAX_TCP_CONNECTIONS_PER_CLIENT,
  MAX_UDP_PROCESSES,
} from "../../dns/server/limits.js";
import { DEFAULT_MAX_EVENT_CLIENTS } from "../../status-page/events.js";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_NAMES_PER_STREAM } from "../../xds/server/limits.js";
import {
  collect,
  filterChainMatcherOption,
  hostPortOption,
  logFormatOption,
  loopbackHostPort,
  maxManifestBytesOption,
  nonNegativeInt,
  positiveInt,
  xdsMaxConnectionsOption,
  xdsMaxNamesOption,
} from "../options.js";
import type { ServeFlags } from "../serve/command.js";

/** Adds `oooi serve` to `program`. */
export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .summary("serve xDS, DNS and a live status page from watched manifests, no cluster needed")
    .description(
      "Run the whole pipeline with no cluster: manifests are read from a directory and watched; " +
        "every change is rendered within one debounce window (the first change at once).\n\n" +
        "Every edit is seen: in-place writes, rename-over (sed -i, editors' atomic saves, git checkout), " +
        "deletes, new sub-folders; editors' scratch files are ignored. Each problem is logged once, at warn, " +
        "as FILE:LINE:COLUMN: OBJECT: FIELD: MESSAGE (Reason); unreadable YAML keeps the last good configuration.\n\n" +
        "Exit status 2 when --manifests is missing or --out is, contains or lies inside it, or when a listening " +
        "address is taken (the message names the flag that moves it).",
    )
    .requiredOption(
      "--manifests <dir|file>",
      "folder of manifests, or one file, watched for changes (see `oooi render --help`)",
    )
    .option(
      "--out <dir>",
      "also write the rendered files here, each set switched in whole through OUT/..data (see `oooi render --help`); files listed in OUT/.oooi-index.json by an earlier run and no longer rendered are removed, nothing else; a failed write (a full disk) is logged naming the file and retried with backoff",
    )
    .option("--xds-listen <host:port>", "serve ADS (Envoy's xDS) here (port 0 picks one)", DEFAULT_XDS_ADDRESS)
    .option("--no-xds", "do not start the xDS server")
    .option("--xds-tls-cert <file>", "serve xDS over TLS with this certificate (PEM)")
    .option("--xds-tls-key <file>", "private key of --xds-tls-cert (PEM)")
    .option(
      "--xds-tls-ca <file>",
      "require client certificates signed by this CA (mTLS between Envoy and oooi); each client then receives only the node group its certificate names (URI SAN spiffe://oooi/ns/<ns>/<name>), and CSDS/debug need spiffe://oooi/admin",
    )
    .addOption(
      new Option(
        "--http-listen <host:port>",
        "serve the live status page (/), Prometheus /metrics, /healthz and /readyz here (:PORT binds loopback; name 0.0.0.0:PORT to expose it)",
      ).argParser(loopbackHostPort),
    )
    .option(
      "--http-allow-host <name>",
      "also answer HTTP requests whose Host is this name (repeatable); IP literals and localhost are always answered, other names get 403 (DNS-rebinding defence)",
      collect,
    )
    .option(
      "--http-max-event-clients <n>",
      "live status pages (/events streams) served at once; more get 503",
      nonNegativeInt,
      DEFAULT_MAX_EVENT_CLIENTS,
    )
    .addOption(
      hostPortOption(
        "--dns-listen <host:port>",
        "answer DNS here with the split-horizon views (port 0 picks one)",
        "127.0.0.1:5353",
      ),
    )
    .option(
      "--dns-max-tcp-connections <n>",
      "DNS-over-TCP connections open at once; past it a new one replaces the one waiting longest on its client (idle or a message not whole), or is closed at once when all are answering (UDP keeps answering)",
      nonNegativeInt,
      DEFAULT_MAX_TCP_CONNECTIONS,
    )
    .option(
      "--dns-max-tcp-per-client <n>",
      "DNS-over-TCP connections one client address may hold open; more from it are closed at once",
      positiveInt,
      DEFAULT_MAX_TCP_CONNECTIONS_PER_CLIENT,
    )
    .option(
      "--dns-udp-processes <n>",
      `processes answering DNS over UDP, all on the one socket: serve and up to ${String(MAX_UDP_PROCESSES - 1)} child processes it starts (one per core is the most that helps; TCP stays in serve)`,
      udpProcesses,
      1,
    )
    .option("--no-dns", "do not start the DNS responder")
    .option("--dns-server <ns/name>", "DNSServer the responder serves (default: the first Infra with DNS enabled)")
    .option("--kea-socket <path>", "drive a local kea-dhcp4 through its unix control socket")
    .option("--dhcp-interface <if>", "interface the local Kea serves on (default: the DHCPServer's, net1)")
    .option("--dhcp-server <ns/name>", "DHCPServer the local Kea serves (default: the first Infra with DHCP enabled)")
    .option("--kea-hooks-dir <dir>", "directory holding libdhcp_lease_cmds.so on this host")
    .option(
      "--kea-lease-file <path>",
      "memfile lease file of the local Kea (default: keep the lease database Kea runs with)",
    )
    .addOption(xdsMaxConnectionsOption(DEFAULT_MAX_CONNECTIONS))
    .addOption(xdsMaxNamesOption(DEFAULT_MAX_NAMES_PER_STREAM))
    .option("--debounce <ms>", "coalescing window for bursts of changes", nonNegativeInt, 100)
    .addOption(maxManifestBytesOption())
    .addOption(filterChainMatcherOption())
    .option("--log-level <level>", "trace, debug, info, warn or error", "info")
    .addOption(logFormatOption())
    .action(async (opts: ServeFlags, cmd: Command) => {
      const { runServeCommand } = await import("../serve/command.js");
      await runServeCommand(opts, cmd);
    });
}

function udpProcesses(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_UDP_PROCESSES)
    throw new InvalidArgumentError(`expected an integer from 1 to ${String(MAX_UDP_PROCESSES)}`);
  return n;
}
