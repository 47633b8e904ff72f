// The `oooi serve` process as the command line starts it: checks its folders and TLS files (exit 2
// naming the flag), starts serve(), and stops it on SIGINT/SIGTERM.
import type { Command } from "commander";
import { serverCredentialsFromFiles } from "../../xds/introspect/index.js";
import type { LogFormat } from "../options.js";
import { ListenError } from "../listen-error.js";
import { cliLogger } from "../logger.js";
import { checkServeFolders, serve } from "../serve.js";

/** What `oooi serve` is given. */
export interface ServeFlags {
  readonly manifests: string;
  readonly out?: string;
  readonly keaSocket?: string;
  readonly dhcpInterface?: string;
  readonly dhcpServer?: string;
  readonly keaHooksDir?: string;
  readonly keaLeaseFile?: string;
  readonly dnsListen: { host: string; port: number };
  readonly dns: boolean;
  readonly dnsMaxTcpConnections: number;
  readonly dnsMaxTcpPerClient: number;
  readonly dnsUdpProcesses: number;
  readonly xdsListen: string;
  readonly xds: boolean;
  readonly xdsTlsCert?: string;
  readonly xdsTlsKey?: string;
  readonly xdsTlsCa?: string;
  readonly xdsMaxConnections: number;
  readonly xdsMaxNamesPerStream: number;
  readonly httpListen?: { host: string; port: number };
  readonly httpAllowHost?: string[];
  readonly httpMaxEventClients: number;
  readonly dnsServer?: string;
  readonly debounce: number;
  readonly maxManifestBytes: number;
  readonly filterChainMatcher: boolean;
  readonly logLevel: string;
  readonly logFormat?: LogFormat;
}

/** Runs `oooi serve` until a signal; usage errors exit 2 through `cmd.error`. */
export async function runServeCommand(opts: ServeFlags, cmd: Command): Promise<void> {
  const log = cliLogger("serve", opts.logLevel, opts.logFormat);
  const refused = await checkServeFolders(opts);
  if (refused !== undefined) cmd.error(`error: ${refused}`, { exitCode: 2 });
  if (
    (opts.xdsTlsCert === undefined) !== (opts.xdsTlsKey === undefined) ||
    (opts.xdsTlsCa !== undefined && opts.xdsTlsCert === undefined)
  ) {
    cmd.error("error: --xds-tls-cert and --xds-tls-key go together; --xds-tls-ca needs both", { exitCode: 2 });
  }
  const xdsTls =
    opts.xdsTlsCert === undefined || opts.xdsTlsKey === undefined
      ? undefined
      : { cert: opts.xdsTlsCert, key: opts.xdsTlsKey, ...(opts.xdsTlsCa === undefined ? {} : { ca: opts.xdsTlsCa }) };
  try {
    // Read and parsed here, so a bad file is a usage error; the ADS thread reads them again.
    if (xdsTls !== undefined) serverCredentialsFromFiles(xdsTls).close();
  } catch (e) {
    cmd.error(`error: cannot load the xDS TLS files: ${(e as Error).message}`, { exitCode: 2 });
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
        ...(opts.dns
          ? {
              dnsListen: opts.dnsListen,
              dnsMaxTcpConnections: opts.dnsMaxTcpConnections,
              dnsMaxTcpPerClient: opts.dnsMaxTcpPerClient,
              dnsUdpProcesses: opts.dnsUdpProcesses,
            }
          : {}),
        ...(opts.xds ? { xdsListen: opts.xdsListen } : {}),
        ...(xdsTls === undefined ? {} : { xdsTls }),
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
    cmd.error(`error: ${(e as Error).message}`, { exitCode: 2 });
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
}
