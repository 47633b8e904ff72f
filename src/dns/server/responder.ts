// The embedded split-horizon responder: UDP and TCP listeners on one address, the view chosen by
// the client's source address, authoritative answers assembled from the precomputed table, every
// other name forwarded. Nothing a client sends can throw out of a handler.
import { readFileSync } from "node:fs";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { lookup as dnsLookup, type LookupOneOptions } from "node:dns";
import { createServer, isIP, isIPv6, type Server, type Socket } from "node:net";
import type { DnsModel } from "../../model/types.js";
import { Forwarder, parseResolvConf, type Upstream } from "./forward.js";
import { SYSTEM_CLOCK, type Clock } from "../../util/clock.js";
import { QueryHandler, type QueryCounters } from "./handler.js";
import { buildServing, type ServingState } from "./serving.js";
import { DEFAULT_TCP_LIMITS, TcpConnection, type TcpLimits } from "./tcp.js";
import { TCP_LIMIT } from "./dns-message.js";
import { DEFAULT_MAX_TCP_CONNECTIONS, DEFAULT_MAX_TCP_CONNECTIONS_PER_CLIENT, MAX_UDP_PROCESSES } from "./limits.js";
import { UdpAnswerer } from "./udp-answerer.js";
import { UdpHelpers } from "./udp-helpers.js";

/** Counters since start, and the TCP side's state now. */
export interface DnsResponderStats extends QueryCounters {
  /** TCP connections open now. */
  readonly tcpOpen: number;
  /**
   * TCP connections closed at once: their client already had maxTcpConnectionsPerClient open, or
   * maxTcpConnections were open and every one was answering.
   */
  readonly tcpRefused: number;
  /** TCP connections closed to make room for a new one, at maxTcpConnections (the longest waiting on its client). */
  readonly tcpEvicted: number;
  /** TCP connections closed by the idle timeout or the message deadline. */
  readonly tcpTimedOut: number;
  /** TCP connections not read from now because their client is behind on replies. */
  readonly tcpPaused: number;
  /** Reply bytes queued in the process for all TCP connections now (beyond the kernel's buffers). */
  readonly tcpUnsentBytes: number;
}

/** How and where the responder listens and forwards. */
export interface DnsResponderOptions {
  /** Listening address (IPv4, or IPv6 such as "::", which also takes IPv4-mapped clients). */
  readonly host: string;
  /** UDP and TCP port; 0 picks a free port, the same for both transports. */
  readonly port: number;
  /** Budget of one forwarded query across all upstream attempts; SERVFAIL after it. Default 2000. */
  readonly upstreamTimeoutMs?: number;
  /** Port of every upstream resolver. Default 53. */
  readonly upstreamPort?: number;
  /** Resolver file read at start for the "resolv.conf" upstream. Default /etc/resolv.conf. */
  readonly resolvConfPath?: string;
  /** Forwarded queries in flight before new ones get SERVFAIL at once. Default 1024. */
  readonly maxForwardsInFlight?: number;
  /**
   * TCP connections open at once. At the cap a new connection takes the place of the one that has
   * waited longest on its client (idle, or a message not whole); when every one is answering, the
   * new one is closed at once (UDP is unaffected). Leave headroom below the process's file limit
   * for its other sockets and files. Default 1024.
   */
  readonly maxTcpConnections?: number;
  /**
   * TCP connections one client address may hold open; past it its new connections are closed at
   * once, so one address never holds every slot however fast it reconnects. Default 16.
   */
  readonly maxTcpConnectionsPerClient?: number;
  /**
   * A TCP connection with no query being received and none being answered is closed after this
   * long (RFC 7766 §6.2.3); so is one whose client reads no reply for this long. Default 10000.
   */
  readonly tcpIdleTimeoutMs?: number;
  /**
   * A TCP query must arrive whole within this long of its first byte, else the connection is
   * closed: a client trickling bytes cannot hold a connection slot. Default 5000.
   */
  readonly tcpMessageTimeoutMs?: number;
  /**
   * Reply bytes a TCP connection may have queued in the process; at this bound the connection is
   * no longer read until its client has read half of them. Default 65536.
   */
  readonly maxTcpUnsentBytes?: number;
  /** Forwarded queries one TCP connection may have in flight before it is no longer read. Default 64. */
  readonly maxTcpQueriesInFlight?: number;
  /**
   * Processes answering UDP on the one socket, this one included (./udp-helpers.ts): the others
   * are child processes given the bound socket, so UDP answers use more than one core. TCP stays
   * in this process. Forwarding limits apply per process. Default 1.
   */
  readonly udpProcesses?: number;
  /** Clock of the TCP deadlines (tests inject one). Default: the process clock. */
  readonly clock?: Clock;
  /** Receives one line per listen, update problem or socket error; silent by default. */
  readonly logger?: (msg: string) => void;
}

/** Where the responder listens. */
export interface DnsResponderAddress {
  readonly host: string;
  readonly udpPort: number;
  readonly tcpPort: number;
}

/** A running responder. */
export interface DnsResponder {
  readonly address: DnsResponderAddress;
  /** Serves `model` from the next query on (undefined: refuse everything). Never throws. */
  update(model: DnsModel | undefined): void;
  /** Stops listening, closes TCP connections and abandons forwarded queries. */
  close(): Promise<void>;
  stats(): DnsResponderStats;
}

const DEFAULT_UPSTREAM_TIMEOUT_MS = 2000;
const DEFAULT_MAX_FORWARDS = 1024;
const PORT_ATTEMPTS = 20;
/**
 * UDP socket buffers, sized for bursts: 500 queries in flight from one client arrive together,
 * and the kernel charges each datagram its whole buffer (~1 KB for a 40-byte query), so Linux's
 * default 208 KB drops them before the event loop can read. Capped by net.core.rmem_max and
 * wmem_max; a capped buffer is logged at start (docs/reference.md#dns-embedded).
 */
export const UDP_BUFFER_BYTES = 4 * 1024 * 1024;

/** Starts the responder serving `model`; resolves once both transports listen. */
export async function startDnsResponder(model: DnsModel | undefined, opts: DnsResponderOptions): Promise<DnsResponder> {
  const log = opts.logger ?? ((): void => undefined);
  const resolvConfPath = opts.resolvConfPath ?? "/etc/resolv.conf";
  let resolvConf: string[] = [];
  try {
    resolvConf = parseResolvConf(readFileSync(resolvConfPath, "utf8"));
  } catch (err) {
    log(`dns: cannot read ${resolvConfPath}: ${String(err)}`);
  }
  const { udp, tcp, port } = await listen(opts.host, opts.port);
  const capped = cappedBuffers(udp);
  if (capped !== undefined) log(`dns: ${capped}`);
  const upstreamTimeoutMs = opts.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const maxForwardsInFlight = opts.maxForwardsInFlight ?? DEFAULT_MAX_FORWARDS;
  const upstreamPort = opts.upstreamPort ?? 53;
  const extra = Math.min(opts.udpProcesses ?? 1, MAX_UDP_PROCESSES) - 1;
  const helpers =
    extra > 0
      ? await UdpHelpers.start(
          udp,
          extra,
          { host: opts.host, port, upstreamPort, resolvConf, upstreamTimeoutMs, maxForwardsInFlight },
          log,
        )
      : undefined;
  const responder = new Responder(udp, tcp, helpers, {
    host: opts.host,
    port,
    resolvConf,
    upstreamPort,
    forwarder: new Forwarder([], { timeoutMs: upstreamTimeoutMs, maxInFlight: maxForwardsInFlight }),
    maxTcpConnections: opts.maxTcpConnections ?? DEFAULT_MAX_TCP_CONNECTIONS,
    maxTcpConnectionsPerClient: opts.maxTcpConnectionsPerClient ?? DEFAULT_MAX_TCP_CONNECTIONS_PER_CLIENT,
    tcpLimits: {
      idleTimeoutMs: opts.tcpIdleTimeoutMs ?? DEFAULT_TCP_LIMITS.idleTimeoutMs,
      messageTimeoutMs: opts.tcpMessageTimeoutMs ?? DEFAULT_TCP_LIMITS.messageTimeoutMs,
      maxUnsentBytes: opts.maxTcpUnsentBytes ?? DEFAULT_TCP_LIMITS.maxUnsentBytes,
      maxQueriesInFlight: opts.maxTcpQueriesInFlight ?? DEFAULT_TCP_LIMITS.maxQueriesInFlight,
    },
    clock: opts.clock ?? SYSTEM_CLOCK,
    log,
  });
  responder.update(model);
  const processes = helpers === undefined ? "" : `, UDP in ${String(helpers.running + 1)} processes`;
  log(`dns: listening on ${opts.host} port ${port} (udp+tcp${processes})`);
  return responder;
}

interface ResponderSettings {
  readonly host: string;
  readonly port: number;
  readonly resolvConf: readonly string[];
  readonly upstreamPort: number;
  readonly forwarder: Forwarder;
  readonly maxTcpConnections: number;
  readonly maxTcpConnectionsPerClient: number;
  readonly tcpLimits: TcpLimits;
  readonly clock: Clock;
  readonly log: (msg: string) => void;
}

class Responder implements DnsResponder {
  readonly address: DnsResponderAddress;
  private serving: ServingState = { table: undefined, upstreams: [], files: undefined };
  private readonly handler: QueryHandler;
  private readonly answerer: UdpAnswerer;
  /** Open TCP connections, oldest first, each with its client's address. */
  private readonly connections = new Map<Socket, { readonly conn: TcpConnection; readonly client: string }>();
  /** Open TCP connections per client address. */
  private readonly perClient = new Map<string, number>();
  private tcpRefused = 0;
  private tcpEvicted = 0;
  private tcpTimedOut = 0;

  constructor(
    private readonly udp: UdpSocket,
    private readonly tcp: Server,
    private readonly helpers: UdpHelpers | undefined,
    private readonly settings: ResponderSettings,
  ) {
    this.address = { host: settings.host, udpPort: settings.port, tcpPort: settings.port };
    this.handler = new QueryHandler(settings.forwarder, settings.log);
    this.answerer = new UdpAnswerer(udp, this.handler, settings.log);
    tcp.on("connection", (socket: Socket) => {
      this.onConnection(socket);
    });
    tcp.on("error", (err) => {
      settings.log(`dns: tcp: ${err.message}`);
    });
  }

  update(model: DnsModel | undefined): void {
    try {
      const self: Upstream[] = [{ host: this.settings.host, port: this.settings.port }];
      const next = buildServing(model, this.serving.files, {
        resolvConf: this.settings.resolvConf,
        port: this.settings.upstreamPort,
        self,
      });
      this.serving = next;
      this.handler.table = next.table;
      this.helpers?.serve(next.files);
      this.settings.forwarder.setUpstreams(next.upstreams);
      if (model !== undefined && next.upstreams.length === 0) {
        this.settings.log(`dns: ${model.name}: no usable upstream; names outside the zones get SERVFAIL`);
      }
    } catch (err) {
      // The renderer and table never throw on model content; keep serving the last table if they do.
      this.settings.log(`dns: update failed, still serving the previous records: ${String(err)}`);
    }
  }

  stats(): DnsResponderStats {
    let paused = 0;
    let unsent = 0;
    for (const { conn } of this.connections.values()) {
      if (conn.paused) paused++;
      unsent += conn.unsentBytes;
    }
    return {
      ...this.handler.counters,
      tcpOpen: this.connections.size,
      tcpRefused: this.tcpRefused,
      tcpEvicted: this.tcpEvicted,
      tcpTimedOut: this.tcpTimedOut,
      tcpPaused: paused,
      tcpUnsentBytes: unsent,
    };
  }

  async close(): Promise<void> {
    this.settings.forwarder.close();
    for (const socket of this.connections.keys()) socket.destroy();
    await Promise.all([
      this.helpers?.close(),
      new Promise<void>((resolve) => {
        this.tcp.close(() => {
          resolve();
        });
      }),
      new Promise<void>((resolve) => {
        try {
          this.udp.close(() => {
            resolve();
          });
        } catch {
          resolve();
        }
      }),
    ]);
  }

  /**
   * Bounds a client by its address first, then the whole (RFC 7766 §10: a server may limit the
   * connections of one client address; §6.2.3: under pressure, idle connections go first). Refused
   * before anything is read: a flood of connections costs one accept each.
   */
  private onConnection(socket: Socket): void {
    const address = socket.remoteAddress ?? "";
    const client = address.toLowerCase().startsWith("::ffff:") ? address.slice(7) : address;
    const held = this.perClient.get(client) ?? 0;
    if (
      held >= this.settings.maxTcpConnectionsPerClient ||
      (this.connections.size >= this.settings.maxTcpConnections && !this.evictLongestWaiting())
    ) {
      this.tcpRefused++;
      socket.on("error", () => undefined);
      socket.destroy();
      return;
    }
    this.handler.counters.tcpConnections++;
    const ip = this.answerer.clientIPv4(address);
    const conn = new TcpConnection(
      socket,
      (msg) => this.handler.handle(msg, ip, TCP_LIMIT),
      this.settings.tcpLimits,
      this.settings.clock,
      () => {
        this.tcpTimedOut++;
      },
    );
    this.connections.set(socket, { conn, client });
    this.perClient.set(client, held + 1);
    socket.on("close", () => {
      this.forget(socket);
    });
  }

  /** Closes the connection that has waited longest on its client; false when every one is answering. */
  private evictLongestWaiting(): boolean {
    let victim: Socket | undefined;
    let oldest = Infinity;
    for (const [socket, { conn }] of this.connections) {
      const since = conn.waitingSince;
      if (since !== undefined && since < oldest) {
        oldest = since;
        victim = socket;
      }
    }
    if (victim === undefined) return false;
    this.tcpEvicted++;
    // Its slot is free now: 'close' comes on a later turn.
    this.forget(victim);
    victim.destroy();
    return true;
  }

  private forget(socket: Socket): void {
    const entry = this.connections.get(socket);
    if (entry === undefined) return;
    this.connections.delete(socket);
    const left = (this.perClient.get(entry.client) ?? 1) - 1;
    if (left > 0) this.perClient.set(entry.client, left);
    else this.perClient.delete(entry.client);
  }
}

/**
 * dgram resolves the destination of every send, dns.lookup answering even an IP literal on the
 * next tick: a callback and a tick per reply. Replies go to the literal a datagram came from, so
 * answer literals at once and leave names (a configured host) to dns.lookup.
 */
function literalLookup(
  hostname: string,
  options: number | LookupOneOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  const family = isIP(hostname);
  if (family !== 0) {
    callback(null, hostname, family);
    return;
  }
  const opts: LookupOneOptions = typeof options === "number" ? { family: options } : options;
  dnsLookup(hostname, opts, callback);
}

/**
 * What the kernel granted of UDP_BUFFER_BYTES, as reported by getRecv/SendBufferSize, when less:
 * Linux reports twice the size it was set to, the bookkeeping overhead it adds (socket(7)
 * SO_RCVBUF), and silently caps at net.core.rmem_max/wmem_max. Undefined when all was granted.
 */
export function bufferShortfall(reportedReceive: number, reportedSend: number): string | undefined {
  const receive = reportedReceive / 2;
  const send = reportedSend / 2;
  if (receive >= UDP_BUFFER_BYTES && send >= UDP_BUFFER_BYTES) return undefined;
  return (
    `UDP receive/send buffers are ${String(receive)}/${String(send)} bytes, not ${String(UDP_BUFFER_BYTES)}: ` +
    "bursts of queries may be dropped by the kernel; raise net.core.rmem_max and net.core.wmem_max"
  );
}

function cappedBuffers(udp: UdpSocket): string | undefined {
  try {
    return bufferShortfall(udp.getRecvBufferSize(), udp.getSendBufferSize());
  } catch {
    return undefined; // not bound (cannot happen here) or a platform without the call
  }
}

/** Binds UDP and TCP on one port; with port 0, retries until both get the same free port. */
async function listen(host: string, port: number): Promise<{ udp: UdpSocket; tcp: Server; port: number }> {
  let lastError: unknown;
  for (let attempt = 0; attempt < (port === 0 ? PORT_ATTEMPTS : 1); attempt++) {
    const udp = createSocket({ type: isIPv6(host) ? "udp6" : "udp4", lookup: literalLookup });
    try {
      await new Promise<void>((resolve, reject) => {
        udp.once("error", reject);
        udp.bind(port, host, () => {
          udp.off("error", reject);
          resolve();
        });
      });
    } catch (err) {
      lastError = err;
      continue;
    }
    const bound = udp.address().port;
    try {
      udp.setRecvBufferSize(UDP_BUFFER_BYTES);
      udp.setSendBufferSize(UDP_BUFFER_BYTES);
    } catch {
      // Best effort: the kernel may cap or refuse bigger buffers.
    }
    const tcp = createServer({ allowHalfOpen: false });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen({ port: bound, host, backlog: 511 }, () => {
          tcp.off("error", reject);
          resolve();
        });
      });
      return { udp, tcp, port: bound };
    } catch (err) {
      lastError = err;
      udp.close();
    }
  }
  throw lastError instanceof Error ? lastError : new Error(`cannot listen on ${host}:${port}`);
}
