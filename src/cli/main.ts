#!/usr/bin/env node
// The `oooi` command line.
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { readFileSync } from "node:fs";
import type { ServerCredentials } from "@grpc/grpc-js";
import { serverCredentialsFromFiles } from "../xds/introspect/index.js";
import { DEFAULT_XDS_ADDRESS, splitHostPort } from "../envoy/bootstrap.js";
import { registerDhcpAgentCommand } from "./dhcp-agent.js";
import { renderCommand } from "./render.js";
import { checkServeFolders, serve } from "./serve.js";
import { registerDebugCommand } from "./debug.js";
import { registerOperatorCommand } from "./operator.js";
import {
  collect,
  hostPortOption,
  loopbackHostPort,
  filterChainMatcherOption,
  maxManifestBytesOption,
  xdsMaxConnectionsOption,
  xdsMaxNamesOption,
} from "./options.js";
import { DEFAULT_MAX_EVENT_CLIENTS } from "../status-page/index.js";
import { DEFAULT_MAX_TCP_CONNECTIONS } from "../dns/server/index.js";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_NAMES_PER_STREAM } from "../xds/server/index.js";
import { cliLogger, logFormatOption, type LogFormat } from "./logger.js";
import { registerVerifyCommand } from "./verify.js";
import { registerExplainCommand } from "./explain.js";
import { ListenError } from "./listen-error.js";

const program = new Command()
  .name("oooi")
  .version(packageVersion(), "-v, --version", "print the version of oooi")
  .description(
    "DHCP (Kea), split-horizon DNS (CoreDNS) and a TLS-passthrough SNI proxy (Envoy over xDS) for " +
      "OpenShift Hosted Control Planes whose KubeVirt workers live on an isolated VLAN.",
  )
  .showHelpAfterError("(run with --help for usage)")
  .exitOverride(usageExit);

program
  .command("render")
  .summary("render every Infra of a manifest folder, file or stdin once, and exit")
  .description(
    "Render every Infra found in a manifest directory, once, and exit.\n\n" +
      "Writes, per generated child object:\n" +
      "  OUT/<namespace>/<infra>-proxy/envoy.json      Envoy listeners, clusters, endpoints, routes (proto3 JSON)\n" +
      "  OUT/<namespace>/<infra>-proxy/bootstrap.yaml  Envoy bootstrap joining that node group over ADS (--xds-address)\n" +
      "  OUT/<namespace>/<infra>-dns/Corefile + zones   CoreDNS ConfigMap data (VLAN view + pod-network view)\n" +
      "  OUT/<namespace>/<infra>-dhcp/kea-dhcp4.json    Kea DHCPv4 configuration\n" +
      "  OUT/status.json                                Ready condition and problems of every object\n\n" +
      "Every problem is printed on stderr as FILE:LINE:COLUMN: OBJECT: FIELD: MESSAGE (Reason), typos with\n" +
      "the field they probably meant; status.json holds the same.\n\n" +
      "Exit status: 0 rendered (even when some objects have problems, unless --strict),\n" +
      "1 --strict and some object has an error, or the output cannot be written,\n" +
      "2 a manifest cannot be read (the message names file and line) or --out is refused.\n\n" +
      "--out may not be, contain or lie inside --manifests. oooi lists the files it writes in OUT/.oooi-index.json\n" +
      "and on the next render removes only those that are no longer rendered; your own files in OUT stay.\n" +
      "Each set is written whole into a new folder OUT/..<timestamp> and switched in at once through the symlink\n" +
      "OUT/..data (as Kubernetes updates ConfigMap volumes); OUT/<namespace>, OUT/status.json are symlinks into it,\n" +
      "so readers never see a mix of two renders. A write that fails (e.g. a full disk) names the file and leaves\n" +
      "the previous set as it was.",
  )
  .requiredOption(
    "--manifests <dir|file|->",
    "a folder of YAML/JSON manifests (read recursively), one file, or - for standard input: Infra, InfraClusterAttachment and the observed HostedCluster, NodePool, Machine, VirtualMachineInstance, Service, Namespace objects",
  )
  .requiredOption("--out <dir>", "output folder: new, empty, or one an earlier render wrote")
  .option("--force", "write into a non-empty folder that holds no earlier render (its other files are kept)")
  .option("--strict", "exit 1 when any object has a problem of severity error (for CI, like istioctl analyze)")
  .option("--kea-hooks-dir <dir>", "directory holding libdhcp_lease_cmds.so in the Kea image")
  .addOption(
    new Option("--xds-address <host:port>", "xDS server the bootstrap.yaml files point at")
      .argParser(dialHostPort)
      .default(splitHostPort(DEFAULT_XDS_ADDRESS), DEFAULT_XDS_ADDRESS),
  )
  .addOption(maxManifestBytesOption())
  .addOption(filterChainMatcherOption())
  .action(
    async (opts: {
      manifests: string;
      out: string;
      filterChainMatcher?: boolean;
      keaHooksDir?: string;
      force?: boolean;
      strict?: boolean;
      xdsAddress?: { host: string; port: number };
      maxManifestBytes?: number;
    }) => {
      process.exitCode = await renderCommand(opts, (line) => process.stderr.write(`${line}\n`));
    },
  );

program
  .command("serve")
  .summary("serve xDS, DNS and a live status page from watched manifests, no cluster needed")
  .description(
    "Run the whole pipeline with no cluster: manifests are read from a directory and watched;\n" +
      "every change is rendered within one debounce window (the first change at once).\n\n" +
      "Every edit is seen: in-place writes, rename-over (sed -i, editors' atomic saves, git checkout),\n" +
      "deletes, new sub-folders; editors' scratch files are ignored. Each problem is logged once, at warn,\n" +
      "as FILE:LINE:COLUMN: OBJECT: FIELD: MESSAGE (Reason); unreadable YAML keeps the last good configuration.\n" +
      "Exit status 2 when --manifests is missing or --out is, contains or lies inside it, or when a listening\n" +
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
    positiveInt,
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
    "DNS-over-TCP connections open at once; more are closed at once (UDP keeps answering)",
    positiveInt,
    DEFAULT_MAX_TCP_CONNECTIONS,
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
  .option("--debounce <ms>", "coalescing window for bursts of changes", positiveInt, 100)
  .addOption(maxManifestBytesOption())
  .addOption(filterChainMatcherOption())
  .option("--log-level <level>", "trace, debug, info, warn or error", "info")
  .addOption(logFormatOption())
  .action(
    async (opts: {
      manifests: string;
      out?: string;
      filterChainMatcher: boolean;
      keaSocket?: string;
      dhcpInterface?: string;
      dhcpServer?: string;
      keaHooksDir?: string;
      keaLeaseFile?: string;
      dnsListen: { host: string; port: number };
      dns: boolean;
      dnsMaxTcpConnections: number;
      xdsListen: string;
      xds: boolean;
      xdsTlsCert?: string;
      xdsTlsKey?: string;
      xdsTlsCa?: string;
      xdsMaxConnections: number;
      xdsMaxNamesPerStream: number;
      httpListen?: { host: string; port: number };
      httpAllowHost?: string[];
      httpMaxEventClients: number;
      dnsServer?: string;
      debounce: number;
      maxManifestBytes: number;
      logLevel: string;
      logFormat?: LogFormat;
    }) => {
      const log = cliLogger("serve", opts.logLevel, opts.logFormat);
      const refused = await checkServeFolders(opts);
      if (refused !== undefined) program.error(`error: ${refused}`, { exitCode: 2 });
      if (
        (opts.xdsTlsCert === undefined) !== (opts.xdsTlsKey === undefined) ||
        (opts.xdsTlsCa !== undefined && opts.xdsTlsCert === undefined)
      ) {
        program.error("error: --xds-tls-cert and --xds-tls-key go together; --xds-tls-ca needs both", { exitCode: 2 });
      }
      let credentials: ServerCredentials | undefined;
      try {
        credentials =
          opts.xdsTlsCert === undefined || opts.xdsTlsKey === undefined
            ? undefined
            : serverCredentialsFromFiles({
                cert: opts.xdsTlsCert,
                key: opts.xdsTlsKey,
                ...(opts.xdsTlsCa === undefined ? {} : { ca: opts.xdsTlsCa }),
              });
      } catch (e) {
        program.error(`error: cannot load the xDS TLS files: ${(e as Error).message}`, { exitCode: 2 });
      }
      let served: ReturnType<typeof serve>;
      try {
        served = serve(
          {
            manifests: opts.manifests,
            debounceMs: opts.debounce,
            maxManifestBytes: opts.maxManifestBytes,
            filterChainMatcher: opts.filterChainMatcher,
            ...(opts.out === undefined ? {} : { out: opts.out }),
            ...(opts.keaSocket === undefined ? {} : { keaSocket: opts.keaSocket }),
            ...(opts.dhcpInterface === undefined ? {} : { dhcpInterface: opts.dhcpInterface }),
            ...(opts.dhcpServer === undefined ? {} : { dhcpServer: opts.dhcpServer }),
            ...(opts.keaHooksDir === undefined ? {} : { keaHooksDir: opts.keaHooksDir }),
            ...(opts.keaLeaseFile === undefined ? {} : { keaLeaseFile: opts.keaLeaseFile }),
            ...(opts.dns ? { dnsListen: opts.dnsListen, dnsMaxTcpConnections: opts.dnsMaxTcpConnections } : {}),
            ...(opts.xds ? { xdsListen: opts.xdsListen } : {}),
            ...(credentials === undefined ? {} : { xdsCredentials: credentials }),
            // mTLS: the client certificate's identity decides what a client may receive (authz.ts).
            xdsRequireIdentity: opts.xdsTlsCa !== undefined,
            xdsMaxConnections: opts.xdsMaxConnections,
            xdsMaxNamesPerStream: opts.xdsMaxNamesPerStream,
            ...(opts.httpListen === undefined ? {} : { httpListen: opts.httpListen }),
            httpAllowHosts: opts.httpAllowHost ?? [],
            httpMaxEventClients: opts.httpMaxEventClients,
            ...(opts.dnsServer === undefined ? {} : { dnsServer: opts.dnsServer }),
          },
          log,
        );
      } catch (e) {
        // The DHCP state file in --out is unusable: starting empty could move live VMs' addresses.
        program.error(`error: ${(e as Error).message}`, { exitCode: 2 });
        return;
      }
      served.ready.catch((e: unknown) => {
        // A busy or forbidden address is the user's to change: say which flag moves it (exit 2).
        if (e instanceof ListenError) {
          const off = e.flag === "--xds-listen" ? " or --no-xds" : e.flag === "--dns-listen" ? " or --no-dns" : "";
          process.stderr.write(`error: ${e.message}${off}\n`);
          process.exit(2);
        }
        log.fatal(`cannot start: ${(e as Error).message}`);
        process.exit(1);
      });
      const stop = (signal: string) => {
        log.info({ signal }, "shutting down");
        void served.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    },
  );

/**
 * The exit contract of every command (docs/cli.md): 0 ok, 1 a finding, 2 usage or input. Commander
 * exits 1 on its own usage errors (unknown command or flag, missing option or argument, a value its
 * parser refused, a command group without its subcommand); those exit 2. `--help` and `--version`
 * stay 0, and a command's own `program.error(…, { exitCode })` keeps its code. Subcommands inherit
 * this override from `program` when created, so it is set before any of them.
 */
function usageExit(err: CommanderError): never {
  process.exit(err.exitCode === 0 || err.code === "commander.error" ? err.exitCode : 2);
}

/** The version in package.json (dist/cli/main.js and src/cli/main.ts both sit two levels below it). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
  return pkg.version ?? "unknown";
}

/** host:port a client can dial (port 1-65535). */
function dialHostPort(value: string): { host: string; port: number } {
  const parsed = splitHostPort(value);
  if (parsed === undefined)
    throw new InvalidArgumentError("expected host:port with a port 1-65535, e.g. 127.0.0.1:18000");
  return parsed;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("not a non-negative integer");
  return n;
}

registerDhcpAgentCommand(program);
registerDebugCommand(program);
registerOperatorCommand(program);
registerVerifyCommand(program);
registerExplainCommand(program);

await program.parseAsync(process.argv);
