// `oooi dhcp-agent`: the sidecar next to kea-dhcp4. It subscribes over ADS to its DHCPServer's
// KeaConfig, applies every version through Kea's control socket, and ACKs or NACKs it.
import { readFileSync } from "node:fs";
import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { Logger } from "pino";
import { cliLogger, logFormatOption, type LogFormat } from "./logger.js";
import { KeaApplier, type ApplierEvent } from "../dhcp/applier.js";
import { DhcpAgent, defaultNodeId } from "../dhcp/agent/index.js";

interface AgentFlags {
  keaSocket: string;
  xds: string;
  node: string;
  nodeId?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  keaLeaseFile?: string;
  keaHooksDir?: string;
  logLevel: string;
  logFormat?: LogFormat;
}

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
      const creds = fileCredentials(opts, (msg) => cmd.error(`error: ${msg}`, { exitCode: 2 }));
      const log = cliLogger("dhcp-agent", opts.logLevel, opts.logFormat);
      await runAgent(opts, creds, log);
    });
}

async function runAgent(opts: AgentFlags, creds: () => ChannelCredentials, log: Logger): Promise<void> {
  const socket = opts.keaSocket;
  const applier = new KeaApplier(socket, {
    onEvent: (e) => {
      logApplierEvent(log, socket, e);
    },
  });
  const nodeId = opts.nodeId ?? defaultNodeId();
  const localPaths = {
    ...(opts.keaLeaseFile === undefined ? {} : { leaseFile: opts.keaLeaseFile }),
    ...(opts.keaHooksDir === undefined ? {} : { hooksDirectory: opts.keaHooksDir }),
  };
  const agent = new DhcpAgent({
    xds: opts.xds,
    node: opts.node,
    nodeId,
    applier,
    credentials: creds,
    localPaths,
    logger: log,
  });
  log.info(
    { xds: opts.xds, node: opts.node, nodeId, socket },
    `dhcp-agent for ${opts.node} (node ${nodeId}): xDS ${opts.xds}, Kea ${socket}`,
  );
  agent.start();
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal }, "shutting down");
      resolve();
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  await agent.close();
  applier.close();
  process.exit(0);
}

function logApplierEvent(log: Logger, socket: string, e: ApplierEvent): void {
  if (e.type === "waiting") {
    // Expected while Kea starts: said once, then rarely.
    if (e.attempt === 1 || e.attempt % 20 === 0)
      log.warn({ socket, attempt: e.attempt }, `Kea control socket ${socket} not reachable yet, retrying: ${e.error}`);
  } else if (e.type === "learned") {
    log.info({ socket, interfaces: e.interfaces }, `Kea control socket ${socket} reached`);
  }
  // Results are logged by the agent, with the xDS version they answer.
}

/**
 * TLS when any --tls-* flag is given; plaintext otherwise. The files are read again at every
 * connection, so a rotated certificate — a Secret volume whose `..data` symlink the kubelet swapped
 * to a new directory — is used from the next connection on, without a restart. Unreadable at start
 * is an error; unreadable later (in the middle of a swap) keeps the last good credentials.
 */
export function fileCredentials(files: TlsFlagFiles, fail: (msg: string) => never): () => ChannelCredentials {
  if (files.tlsCa === undefined && files.tlsCert === undefined && files.tlsKey === undefined)
    return () => credentials.createInsecure();
  if ((files.tlsCert === undefined) !== (files.tlsKey === undefined))
    fail("--tls-cert and --tls-key must be given together");
  const read = (): { material: Buffer; creds: ChannelCredentials } => {
    const get = (flag: string, file: string | undefined): Buffer | null => {
      if (file === undefined) return null;
      try {
        return readFileSync(file);
      } catch (e) {
        throw new Error(`cannot read ${flag} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    };
    const ca = get("--tls-ca", files.tlsCa);
    const key = get("--tls-key", files.tlsKey);
    const cert = get("--tls-cert", files.tlsCert);
    let creds: ChannelCredentials;
    try {
      creds = credentials.createSsl(ca, key, cert);
    } catch (e) {
      throw new Error(`unusable TLS material: ${(e as Error).message}`);
    }
    return { material: Buffer.concat([ca ?? Buffer.alloc(0), key ?? Buffer.alloc(0), cert ?? Buffer.alloc(0)]), creds };
  };
  let current: { material: Buffer; creds: ChannelCredentials };
  try {
    current = read();
  } catch (e) {
    return fail((e as Error).message);
  }
  return () => {
    try {
      const next = read();
      if (!next.material.equals(current.material)) current = next;
    } catch {
      // Half-swapped or briefly missing: the last good files stay in use.
    }
    return current.creds;
  };
}

/** The --tls-* flags. */
export interface TlsFlagFiles {
  readonly tlsCa?: string | undefined;
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
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
