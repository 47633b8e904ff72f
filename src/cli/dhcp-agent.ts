// `oooi dhcp-agent`: the sidecar next to kea-dhcp4. It subscribes over ADS to its DHCPServer's
// KeaConfig, applies every version through Kea's control socket, and ACKs or NACKs it.
import { readFileSync } from "node:fs";
import { credentials, type ChannelCredentials } from "@grpc/grpc-js";
import type { Command } from "commander";
import type { Logger } from "pino";
import { cliLogger } from "./logger.js";
import type { LogFormat } from "./options.js";
import { KeaApplier, type ApplierEvent } from "../dhcp/applier.js";
import { DhcpAgent, defaultNodeId } from "../dhcp/agent/index.js";

/** What `oooi dhcp-agent` is given. */
export interface AgentFlags {
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

/** Runs `oooi dhcp-agent` until SIGTERM; unusable TLS files exit 2 through `cmd.error`. */
export async function runAgentCommand(opts: AgentFlags, cmd: Command): Promise<void> {
  const creds = fileCredentials(opts, (msg) => cmd.error(`error: ${msg}`, { exitCode: 2 }));
  await runAgent(opts, creds, cliLogger("dhcp-agent", opts.logLevel, opts.logFormat));
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
