// The dhcp-agent's xDS side: one state-of-the-world ADS stream subscribed to the KeaConfig of
// one DHCPServer. Every configuration received goes to Kea through the applier, and only Kea's
// answer is turned into the ACK (it runs it) or NACK (it refused it, with Kea's text, and keeps
// the previous one) — so nothing is acknowledged before Kea has it. The stream is re-opened with
// jittered backoff, and a reconnect announces the version Kea runs.
import {
  Client,
  Metadata,
  credentials as grpcCredentials,
  status as GrpcStatus,
  type ChannelCredentials,
  type ClientDuplexStream,
  type StatusObject,
} from "@grpc/grpc-js";
import type { ApplyResult, KeaConfig } from "../applier.js";
import { backoffDelay, realTimers, type BackoffOptions, type Timers } from "../../util/backoff.js";
import { KEA_CONFIG_TYPE_URL, decodeKeaConfig, type KeaConfigJson } from "../kea-config-resource.js";
import { SILENT_LOGGER, type Logger } from "../../util/logger.js";
import { withLocalPaths, type LocalKeaPaths } from "./local-paths.js";
import {
  ADS_SOTW_METHOD,
  INVALID_ARGUMENT,
  decodeDiscoveryResponse,
  encodeDiscoveryRequest,
  type DiscoveryRequestInit,
  type DiscoveryResponseIn,
  type NodeInit,
} from "./ads-messages.js";

/** `node.user_agent_name` of the agent, as it shows in CSDS and the server's status. */
export const AGENT_USER_AGENT = "oooi-dhcp-agent";

/** Reconnect pacing: Envoy's ADS defaults (500 ms doubling to 30 s), half of it jittered. */
export const AGENT_BACKOFF: Required<BackoffOptions> = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5 };

/** What the agent needs of a KeaApplier. */
export interface AgentApplier {
  apply(config: KeaConfig): Promise<ApplyResult>;
}

/** Options of a DhcpAgent; only `xds`, `node`, `nodeId` and `applier` are required. */
export interface DhcpAgentOptions {
  /** gRPC target of the ADS server, e.g. "127.0.0.1:18000" or "dns:///oooi.oooi-system.svc:18000". */
  readonly xds: string;
  /** "<namespace>/<DHCPServer name>": the node group (`node.cluster`) and the KeaConfig resource subscribed to. */
  readonly node: string;
  /** `node.id`: this agent (its pod), unique among the group's agents. */
  readonly nodeId: string;
  readonly applier: AgentApplier;
  /**
   * Channel credentials (default: plaintext), asked for at every connection: returning new ones
   * (a rotated certificate re-read from its files) makes the next connection use them, on a new
   * channel; the open stream is not cut for it.
   */
  readonly credentials?: () => ChannelCredentials;
  /** Paths of the local Kea that replace the rendered ones. */
  readonly localPaths?: LocalKeaPaths;
  readonly backoff?: BackoffOptions;
  readonly timers?: Timers;
  readonly random?: () => number;
  readonly logger?: Logger;
  readonly onEvent?: (event: AgentEvent) => void;
}

/** How an ACKed response was taken: applied by Kea, already running, or carrying nothing for us. */
export type AckKind = "applied" | "unchanged" | "already-running" | "no-resource";

/** Protocol milestones, for logs and tests. */
export type AgentEvent =
  | { readonly type: "connecting"; readonly stream: number; readonly versionInfo: string }
  | {
      readonly type: "response";
      readonly stream: number;
      readonly version: string;
      readonly nonce: string;
      readonly resources: number;
    }
  | {
      readonly type: "ack";
      readonly stream: number;
      readonly version: string;
      readonly nonce: string;
      readonly kind: AckKind;
    }
  | {
      readonly type: "nack";
      readonly stream: number;
      readonly version: string;
      readonly nonce: string;
      readonly previousVersion: string;
      readonly message: string;
    }
  /** A result that is not answered: superseded by a newer response, or its stream is gone. */
  | {
      readonly type: "unanswered";
      readonly stream: number;
      readonly version: string;
      readonly nonce: string;
      readonly status: ApplyResult["status"];
    }
  | {
      readonly type: "stream-ended";
      readonly stream: number;
      readonly code: number;
      readonly details: string;
      readonly graceful: boolean;
      readonly retryInMs: number;
    };

interface Stream {
  readonly no: number;
  readonly call: ClientDuplexStream<DiscoveryRequestInit, DiscoveryResponseIn>;
  open: boolean;
  responded: boolean;
  /** Nonce of the latest response: only an answer to it counts (older ones are superseded). */
  latestNonce: string;
  readonly ended: Promise<void>;
  markEnded(): void;
}

/** What Kea runs from us: the version it came in, and its resource bytes for reconnect dedup. */
interface Accepted {
  version: string;
  readonly content: Uint8Array;
  /** Also on disk (config-write succeeded, or nothing had to be written): safe to skip re-applying. */
  readonly settled: boolean;
}

/** An ADS client that keeps one Kea on the KeaConfig of one DHCPServer. */
export class DhcpAgent {
  readonly #o: DhcpAgentOptions;
  #client: Client;
  #credentials: ChannelCredentials;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #nodeInfo: NodeInit;
  #stream: Stream | undefined;
  #streams = 0;
  #attempt = 0;
  #timer: unknown;
  #started = false;
  #closed = false;
  #accepted: Accepted | undefined;
  /** Applies submitted and not yet answered by the applier. */
  #outstanding = 0;

  constructor(options: DhcpAgentOptions) {
    this.#o = options;
    this.#timers = options.timers ?? realTimers;
    this.#random = options.random ?? Math.random;
    this.#log = options.logger ?? SILENT_LOGGER;
    this.#nodeInfo = { id: options.nodeId, cluster: options.node, user_agent_name: AGENT_USER_AGENT };
    this.#credentials = options.credentials?.() ?? grpcCredentials.createInsecure();
    this.#client = this.#newClient(this.#credentials);
  }

  #newClient(creds: ChannelCredentials): Client {
    const backoff = { ...AGENT_BACKOFF, ...this.#o.backoff };
    return new Client(this.#o.xds, creds, {
      // The channel's own reconnect pacing (default up to 120 s) must not outlast ours.
      "grpc.initial_reconnect_backoff_ms": backoff.initialMs,
      "grpc.max_reconnect_backoff_ms": backoff.maxMs,
      // An ADS stream lives for many minutes: let keepalives notice a vanished server.
      "grpc.keepalive_time_ms": 30_000,
      "grpc.keepalive_timeout_ms": 10_000,
      "grpc.max_receive_message_length": -1,
    });
  }

  /** The channel for the next stream: a new one when the credentials changed since the last. */
  #clientForConnect(): Client {
    const creds = this.#o.credentials?.();
    if (creds !== undefined && creds !== this.#credentials) {
      // The previous stream has ended (a connect follows an end): its channel can go.
      this.#client.close();
      this.#credentials = creds;
      this.#client = this.#newClient(creds);
    }
    return this.#client;
  }

  /** The version Kea last accepted from this agent (sent as version_info on reconnect and in NACKs). */
  get acceptedVersion(): string | undefined {
    return this.#accepted?.version;
  }

  /** Opens the stream; reconnects by itself until close(). */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#connect();
  }

  /** Half-closes the stream (the server ends it cleanly), waits up to a second, then cuts the channel. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    const s = this.#stream;
    if (s?.open === true) {
      try {
        s.call.end();
      } catch {
        /* already gone */
      }
      let grace: unknown;
      await Promise.race([
        s.ended,
        new Promise<void>((resolve) => {
          grace = this.#timers.setTimeout(resolve, 1000);
        }),
      ]);
      this.#timers.clearTimeout(grace);
      s.call.cancel();
    }
    this.#client.close();
  }

  #connect(): void {
    if (this.#closed) return;
    const no = (this.#streams += 1);
    const call = this.#clientForConnect().makeBidiStreamRequest(
      ADS_SOTW_METHOD,
      encodeDiscoveryRequest,
      decodeDiscoveryResponse,
      new Metadata(),
    );
    let markEnded = (): void => undefined;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const s: Stream = { no, call, open: true, responded: false, latestNonce: "", ended, markEnded };
    this.#stream = s;
    call.on("data", (res: DiscoveryResponseIn) => {
      this.#onResponse(s, res);
    });
    call.on("status", (st: StatusObject) => {
      this.#onEnd(s, st);
    });
    call.on("error", () => {
      /* reported through "status" */
    });
    const versionInfo = this.#accepted?.version ?? "";
    this.#emit({ type: "connecting", stream: no, versionInfo });
    this.#log.debug({ xds: this.#o.xds, stream: no, version: versionInfo }, `opening the ADS stream to ${this.#o.xds}`);
    // Naming the version Kea runs lets the server know what this node holds after a reconnect.
    this.#write(s, {
      version_info: versionInfo,
      node: this.#nodeInfo,
      resource_names: [this.#o.node],
      type_url: KEA_CONFIG_TYPE_URL,
      response_nonce: "",
    });
  }

  #write(s: Stream, req: DiscoveryRequestInit): boolean {
    if (!s.open) return false;
    try {
      s.call.write(req);
      return true;
    } catch (e) {
      this.#log.warn({ stream: s.no }, `cannot write to the ADS stream: ${(e as Error).message}`);
      return false;
    }
  }

  #onResponse(s: Stream, res: DiscoveryResponseIn): void {
    if (!s.open || this.#closed) return;
    if (res.typeUrl !== KEA_CONFIG_TYPE_URL) {
      this.#log.debug({ typeUrl: res.typeUrl }, "ignoring a response of a type this agent did not ask for");
      return;
    }
    if (!s.responded)
      this.#log.info({ xds: this.#o.xds, node: this.#o.node }, `connected to the xDS server ${this.#o.xds}`);
    s.responded = true;
    this.#attempt = 0;
    s.latestNonce = res.nonce;
    this.#emit({
      type: "response",
      stream: s.no,
      version: res.versionInfo,
      nonce: res.nonce,
      resources: res.resources.length,
    });

    let mine: { config: KeaConfigJson; content: Uint8Array } | undefined;
    try {
      mine = this.#pick(res);
    } catch (e) {
      this.#nack(s, res, (e as Error).message);
      return;
    }
    if (mine === undefined) {
      // No configuration for this DHCPServer (DHCP disabled, Infra gone): Kea keeps serving
      // what it has rather than dropping every lease holder's address.
      this.#log.warn(
        { version: res.versionInfo, node: this.#o.node },
        `the control plane has no KeaConfig ${this.#o.node}; Kea keeps its current configuration`,
      );
      if (this.#accepted) this.#accepted.version = res.versionInfo;
      this.#ack(s, res, "no-resource");
      return;
    }
    const acc = this.#accepted;
    if (this.#outstanding === 0 && acc?.settled === true && sameBytes(acc.content, mine.content)) {
      // A reconnect (or a revert after a NACK) brings back what Kea already runs.
      acc.version = res.versionInfo;
      this.#ack(s, res, "already-running");
      return;
    }
    const content = mine.content;
    const dhcp4 =
      this.#o.localPaths === undefined ? mine.config.dhcp4 : withLocalPaths(mine.config.dhcp4, this.#o.localPaths);
    this.#outstanding += 1;
    this.#o.applier.apply({ Dhcp4: dhcp4 }).then(
      (result) => {
        this.#outstanding -= 1;
        this.#settle(s, res, content, result);
      },
      (e: unknown) => {
        this.#outstanding -= 1;
        this.#settle(s, res, content, {
          status: "rejected",
          hash: "",
          command: "apply",
          result: -1,
          text: e instanceof Error ? e.message : String(e),
        });
      },
    );
  }

  /** Our KeaConfig in the response, or undefined when it carries none; throws what a NACK says. */
  #pick(res: DiscoveryResponseIn): { config: KeaConfigJson; content: Uint8Array } | undefined {
    for (const r of res.resources) {
      if (r.typeUrl !== KEA_CONFIG_TYPE_URL) throw new Error(`a resource of type ${r.typeUrl} in a KeaConfig response`);
      let config: KeaConfigJson;
      try {
        config = decodeKeaConfig(r.value);
      } catch (e) {
        throw new Error(`cannot decode the KeaConfig: ${(e as Error).message}`);
      }
      if (config.name === this.#o.node) return { config, content: r.value };
    }
    return undefined;
  }

  #settle(s: Stream, res: DiscoveryResponseIn, content: Uint8Array, result: ApplyResult): void {
    const current = s.open && s === this.#stream && s.latestNonce === res.nonce && !this.#closed;
    if (result.status === "applied" || result.status === "unchanged") {
      this.#accepted = {
        version: res.versionInfo,
        content,
        settled: result.status === "unchanged" || result.persisted,
      };
      if (result.status === "applied" && !result.persisted) {
        this.#log.warn(
          { version: res.versionInfo },
          `Kea runs version ${res.versionInfo} but could not write it to its config file (a Kea restart loses it): ${result.text ?? ""}`,
        );
      }
      if (current) this.#ack(s, res, result.status);
      else this.#unanswered(s, res, result);
      return;
    }
    if (result.status === "rejected") {
      if (current) this.#nack(s, res, result.text, result.command);
      else this.#unanswered(s, res, result);
      return;
    }
    this.#unanswered(s, res, result);
  }

  #ack(s: Stream, res: DiscoveryResponseIn, kind: AckKind): void {
    if (
      !this.#write(s, {
        version_info: res.versionInfo,
        resource_names: [this.#o.node],
        type_url: KEA_CONFIG_TYPE_URL,
        response_nonce: res.nonce,
      })
    )
      return;
    this.#emit({ type: "ack", stream: s.no, version: res.versionInfo, nonce: res.nonce, kind });
    const what: Record<AckKind, string> = {
      applied: "Kea configuration applied",
      unchanged: "Kea already runs this configuration",
      "already-running": "configuration unchanged since the last ACK, not re-applied",
      "no-resource": "nothing to apply",
    };
    const log = kind === "applied" ? this.#log.info.bind(this.#log) : this.#log.debug.bind(this.#log);
    log({ version: res.versionInfo, nonce: res.nonce }, `${what[kind]}; ACK version ${res.versionInfo}`);
  }

  #nack(s: Stream, res: DiscoveryResponseIn, message: string, command?: string): void {
    const previousVersion = this.#accepted?.version ?? "";
    if (
      !this.#write(s, {
        version_info: previousVersion,
        resource_names: [this.#o.node],
        type_url: KEA_CONFIG_TYPE_URL,
        response_nonce: res.nonce,
        error_detail: { code: INVALID_ARGUMENT, message },
      })
    )
      return;
    this.#emit({ type: "nack", stream: s.no, version: res.versionInfo, nonce: res.nonce, previousVersion, message });
    const keeps = previousVersion === "" ? "its current configuration" : `version ${previousVersion}`;
    this.#log.error(
      { version: res.versionInfo, nonce: res.nonce, ...(command === undefined ? {} : { command }) },
      `NACK version ${res.versionInfo}, Kea keeps ${keeps}: ${message}`,
    );
  }

  #unanswered(s: Stream, res: DiscoveryResponseIn, result: ApplyResult): void {
    this.#emit({ type: "unanswered", stream: s.no, version: res.versionInfo, nonce: res.nonce, status: result.status });
    if (result.status === "stopped") return;
    const why =
      result.status === "superseded"
        ? "superseded by a newer version before it reached Kea"
        : `${result.status}, but its stream is gone; the next stream says what Kea runs`;
    this.#log.debug({ version: res.versionInfo, nonce: res.nonce }, `version ${res.versionInfo} ${why}`);
  }

  #onEnd(s: Stream, st: StatusObject): void {
    if (!s.open) return;
    s.open = false;
    s.markEnded();
    if (this.#stream === s) this.#stream = undefined;
    if (this.#closed) return;
    // The server ending a working stream cleanly is routine (its maximum stream age, a rollout):
    // come straight back. Anything else backs off.
    const graceful = st.code === GrpcStatus.OK && s.responded;
    let retryInMs = 0;
    if (!graceful) {
      this.#attempt += 1;
      retryInMs = backoffDelay(this.#attempt, { ...AGENT_BACKOFF, ...this.#o.backoff }, this.#random);
    }
    this.#emit({ type: "stream-ended", stream: s.no, code: st.code, details: st.details, graceful, retryInMs });
    const ctx = { xds: this.#o.xds, code: GrpcStatus[st.code], attempt: this.#attempt, retryInMs };
    const wait = `${(retryInMs / 1000).toFixed(1)}s`;
    if (graceful) this.#log.info(ctx, "the xDS server ended the stream (maximum stream age or shutdown); reconnecting");
    else if (!s.responded)
      this.#log.warn(
        ctx,
        `cannot reach the xDS server ${this.#o.xds} (${plainDetails(st.details)}); retrying in ${wait}`,
      );
    else
      this.#log.warn(
        ctx,
        `lost the xDS stream to ${this.#o.xds} (${GrpcStatus[st.code]}: ${st.details}); reconnecting in ${wait}`,
      );
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      this.#connect();
    }, retryInMs);
  }

  #emit(event: AgentEvent): void {
    this.#o.onEvent?.(event);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** grpc-js's connection failure text without its wrapping: "connect ECONNREFUSED 127.0.0.1:1". */
function plainDetails(details: string): string {
  const m = /Last error: (?:Error: )?(.*?)\.?(?: Resolution note:.*)?$/.exec(details);
  return m?.[1] ?? details;
}
