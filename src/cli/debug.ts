// `oooi debug`: a client of the xDS server's oooi.debug.v1 service. `nodes` prints who is connected
// and how far each stream is in sync, `config` prints what one node holds, `pushes` the recent
// push history with latencies.
import { structured } from "./structured-output.js";
import {
  DebugClient,
  DebugRefusedError,
  XdsNotFoundError,
  XdsUnreachableError,
} from "../xds/introspect/debug-client.js";
import { xdsCredentials } from "./xds-tls-credentials.js";
import type { XdsTlsOptions } from "./xds-tls-flags.js";
import type {
  FleetNodeMessage,
  ListFleetResponse,
  NodeMessage,
  PushMessage,
  ResourceMessage,
  TypeConfigMessage,
  TypeStateMessage,
} from "../xds/introspect/debug-client.js";
import { millisOf, typeLabel, typeMatches } from "../xds/introspect/state.js";
import { jsonFromStruct, LOADER_VALUE_KEYS } from "../xds/resource/struct.js";

/** Where `oooi debug` writes and how it ends; injectable so tests see what a user sees. */
export interface DebugIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Sets the exit status. */
  readonly exit: (code: number) => void;
  /** Clock (ms) for ages such as "connected 5m ago". */
  readonly now: () => number;
  /** Highlight with ANSI colours. */
  readonly color: boolean;
}

/** Connection options common to every `oooi debug` subcommand. */
export interface ConnectOptions extends XdsTlsOptions {
  readonly xds: string;
  /** --xds was given (not its default): with --kubeconfig, connect there instead of port-forwarding. */
  readonly xdsGiven?: boolean;
  readonly timeout: number;
  /** Reach the operator's leader through this kubeconfig's API server, as its user (debug-kube.ts). */
  readonly kubeconfig?: string;
  readonly context?: string;
  /** The operator's namespace. */
  readonly namespace?: string;
}

interface Connection {
  readonly client: DebugClient;
  /** What to say when the server cannot be reached, beyond gRPC's own words. */
  readonly unreachable: () => string;
  readonly close: () => Promise<void>;
}

async function connect(opts: ConnectOptions): Promise<Connection> {
  if (opts.kubeconfig === undefined) {
    const credentials = xdsCredentials(opts);
    const client = new DebugClient({
      address: opts.xds,
      timeoutMs: opts.timeout,
      ...(credentials ? { credentials } : {}),
    });
    return {
      client,
      unreachable: () => "(is `oooi serve` or `oooi operator` running there? set the address with --xds HOST:PORT)\n",
      close: () => Promise.resolve(),
    };
  }
  // Loaded only here: client-node and the kubeconfig rules cost start-up time every other use skips.
  const { loadKubeClientConfig } = await import("../kube/kubeconfig.js");
  const { kubeDebugTarget } = await import("./debug-kube.js");
  const config = loadKubeClientConfig(opts.kubeconfig, opts.context === undefined ? {} : { context: opts.context });
  const namespace = opts.namespace ?? "oooi-system";
  const target = await kubeDebugTarget(config, namespace, opts.xdsGiven === true ? opts.xds : undefined);
  const client = new DebugClient({
    address: target.address,
    timeoutMs: opts.timeout,
    credentials: target.credentials,
    token: target.token,
    serverName: target.serverName,
  });
  return {
    client,
    unreachable: () => {
      const why = target.forwardError();
      return why === undefined
        ? `(the leader is ${namespace}/${target.pod}, reached through ${config.origin})\n`
        : `(${why})\n`;
    },
    close: target.close,
  };
}

/** Runs `fn` with a client; prints a one-line error (no stack) and returns 1 on failure. */
async function withClient(
  opts: ConnectOptions,
  io: DebugIo,
  fn: (client: DebugClient) => Promise<number>,
): Promise<number> {
  let connection: Connection | undefined;
  try {
    connection = await connect(opts);
    return await fn(connection.client);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    io.err(`oooi debug: ${message}\n`);
    // A kubeconfig that cannot be used, or a user without a token: input to fix (docs/cli.md exit codes).
    if (e instanceof Error && (e.name === "KubeconfigError" || e.name === "NoTokenError")) return 2;
    if (e instanceof XdsUnreachableError && connection !== undefined) io.err(connection.unreachable());
    if (e instanceof DebugRefusedError && opts.kubeconfig !== undefined)
      io.err("(bind the ClusterRole oooi-debugger to your user in the operator's namespace: docs/install.md)\n");
    return 1;
  } finally {
    connection?.client.close();
    await connection?.close();
  }
}

// ---------------------------------------------------------------- nodes

/** `oooi debug nodes`: prints the node table; returns the exit status. */
export async function debugNodes(
  opts: ConnectOptions & { cluster?: string; all?: boolean; output?: string },
  io: DebugIo,
): Promise<number> {
  return withClient(opts, io, async (client) => {
    const cluster = opts.cluster ? { cluster: opts.cluster } : {};
    const nodes = await client.listNodes({ ...cluster, include_disconnected: opts.all === true });
    const fleet = await listFleet(client, cluster);
    const others = fleet.nodes.filter((n) => n.replica !== fleet.replica);
    const mine = fleet.replica === "" ? {} : { replica: fleet.replica };
    const doc = structured(
      [...nodes.map((n) => ({ ...nodeJson(n), ...mine })), ...others.map(fleetNodeJson)],
      opts.output ?? "table",
    );
    if (doc !== undefined) {
      io.out(doc);
      return 0;
    }
    io.out(formatNodes(nodes, { now: io.now(), color: io.color, address: opts.xds, fleet }));
    return 0;
  });
}

/** The fleet through the answering server; an empty one from a server without ListFleet (older, or `oooi serve`). */
async function listFleet(client: DebugClient, req: { cluster?: string }): Promise<ListFleetResponse> {
  try {
    return await client.listFleet(req);
  } catch (e) {
    if (e instanceof XdsUnreachableError) throw e;
    return { replica: "", replicas: [], nodes: [] };
  }
}

/**
 * Renders ListNodes as a table (one row per stream), then the NACK reasons. With an operator's
 * fleet, a REPLICA column says where each node's stream is, and the other replicas' nodes follow
 * as they report them (acknowledged versions and NACKs; their streams are on the other replica).
 */
export function formatNodes(
  nodes: readonly NodeMessage[],
  o: { now: number; color: boolean; address: string; fleet?: ListFleetResponse },
): string {
  const fleet = o.fleet ?? { replica: "", replicas: [], nodes: [] };
  const others = fleet.nodes.filter((n) => n.replica !== fleet.replica);
  if (nodes.length === 0 && others.length === 0) return `no xDS nodes connected to ${o.address}${replicaLine(fleet)}\n`;
  const typeUrls = [
    ...new Set([
      ...nodes.flatMap((n) => [...n.streams.flatMap((s) => s.types), ...n.types].map((t) => t.type_url)),
      ...others.flatMap((n) => n.types.map((t) => t.type_url)),
    ]),
  ].sort((a, b) => (typeLabel(a) < typeLabel(b) ? -1 : typeLabel(a) > typeLabel(b) ? 1 : 0));
  const withReplica = fleet.replica !== "";
  const replicaCell = (r: string): string[] => (withReplica ? [r] : []);
  const header = [
    "NODE",
    ...replicaCell("REPLICA"),
    "CLUSTER",
    "PEER",
    "PROTO",
    "CONNECTED",
    ...typeUrls.map((t) => columnLabel(t)),
  ];
  const rows: Cell[][] = [];
  const nacks: string[] = [];
  for (const n of nodes) {
    if (n.streams.length === 0) {
      const byType = new Map(n.types.map((t) => [t.type_url, t]));
      const gone = millisOf(n.gone_time ?? n.last_seen_time);
      rows.push([
        nodeCell(n),
        ...replicaCell(fleet.replica),
        n.cluster,
        "-",
        "-",
        { text: `GONE since ${goneTime(gone)} (${age(o.now, gone)} ago)`, color: "dim" },
        ...typeUrls.map((t) => ackedCell(byType.get(t))),
      ]);
      continue;
    }
    for (const s of n.streams) {
      const byType = new Map(s.types.map((t) => [t.type_url, t]));
      rows.push([
        nodeCell(n),
        ...replicaCell(fleet.replica),
        n.cluster,
        s.peer.replace(/^ipv[46]:/, ""),
        s.protocol === "PROTOCOL_DELTA" ? "delta" : "sotw",
        `${age(o.now, millisOf(s.connected_time))} ago`,
        ...typeUrls.map((t) => stateCell(byType.get(t))),
      ]);
      for (const t of s.types) {
        if (t.status === "SYNC_STATUS_ERROR" && t.last_nack) {
          const when = age(o.now, millisOf(t.last_nack.time));
          const repeats = t.last_nack.repeats > 1 ? `, ${t.last_nack.repeats} times` : "";
          nacks.push(
            `  ${n.id} ${typeLabel(t.type_url)} ${short(t.last_nack.version)} (${when} ago${repeats}): ${t.last_nack.message}`,
          );
        }
      }
    }
  }
  for (const n of others) {
    const byType = new Map(n.types.map((t) => [t.type_url, t]));
    rows.push([n.id, n.replica, n.cluster, "-", "-", "reported", ...typeUrls.map((t) => reportedCell(byType.get(t)))]);
    for (const t of n.types)
      if (t.nack_version !== "")
        nacks.push(`  ${n.id} ${typeLabel(t.type_url)} ${short(t.nack_version)} (on ${n.replica}): ${t.nack_message}`);
  }
  let text = table(header, rows, o.color);
  const streams = nodes.reduce((sum, n) => sum + n.streams.length, 0);
  text += `\n${plural(nodes.length + others.length, "node")}, ${plural(streams, "stream")}`;
  if (others.length > 0) text += ` here, ${plural(others.length, "node")} on other replicas`;
  text += nacks.length > 0 ? `; ${paint(`${plural(nacks.length, "rejected type")} (NACK)`, "red", o.color)}` : "";
  text += `${replicaLine(fleet)}\n`;
  text += groupLines(nodes);
  if (nacks.length > 0)
    text += `\n${paint("NACKs (the node keeps its last acknowledged version):", "red", o.color)}\n${nacks.join("\n")}\n`;
  return text;
}

/**
 * Per node group its current version of each type ("group ns/p current: cds a1b2c3d4, lds …"), and
 * the groups nothing serves with the nearest served name.
 */
function groupLines(nodes: readonly NodeMessage[]): string {
  const current = new Map<string, Map<string, string>>();
  const unknown = new Map<string, string>();
  for (const n of nodes) {
    if (n.unknown_group) unknown.set(n.cluster, n.nearest_group);
    const versions = current.get(n.cluster) ?? new Map<string, string>();
    for (const t of [...n.types, ...n.streams.flatMap((s) => s.types)])
      if (t.current_version !== "") versions.set(typeLabel(t.type_url), short(t.current_version));
    current.set(n.cluster, versions);
  }
  const lines = [...current]
    .filter(([, v]) => v.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(
      ([g, v]) =>
        `group ${g} current: ${[...v]
          .sort()
          .map(([t, ver]) => `${t} ${ver}`)
          .join(", ")}`,
    );
  for (const [g, nearest] of [...unknown].sort(([a], [b]) => (a < b ? -1 : 1)))
    lines.push(
      `unknown group ${g}: no node group of this name is served${nearest === "" ? "" : ` (did you mean ${nearest}?)`}`,
    );
  return lines.length > 0 ? `\n${lines.join("\n")}\n` : "";
}

/** "\nreplicas: a (this one, 1 node), b (2 nodes), c (expired)" for an operator fleet; "" otherwise. */
function replicaLine(fleet: ListFleetResponse): string {
  if (fleet.replica === "") return "";
  const parts = fleet.replicas.map((r) => {
    const what = r.live ? plural(r.nodes, "node") : "report expired, its nodes not counted";
    return `${r.name} (${r.name === fleet.replica ? `answered, ${what}` : what})`;
  });
  return `\nreplicas: ${parts.join(", ")}`;
}

/** The node's id, marked when it is `oooi verify`'s probe rather than a data plane. */
function nodeCell(n: NodeMessage): string {
  return n.probe ? `${n.id} (probe)` : n.id;
}

/** "2026-12-04T14:03:12Z": when a node went, to the second. */
function goneTime(ms: number | undefined): string {
  return ms === undefined ? "?" : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** "LDS" for Envoy types, the bare message name ("KEACONFIG") for others. */
function columnLabel(typeUrl: string): string {
  const label = typeLabel(typeUrl);
  return label.slice(label.lastIndexOf(".") + 1).toUpperCase();
}

type Cell = string | { text: string; color: "red" | "yellow" | "green" | "dim" };

/**
 * A stream's type: the version and how many resources the client holds, so an empty
 * configuration stands out (yellow) — "a1b2c3d4 (4)", "none→a1b2c3d4? (0→4)", "NACK a1b2c3d4 (keeps 3)".
 */
function stateCell(t: TypeStateMessage | undefined): Cell {
  if (!t) return "-";
  // Acknowledged what it was sent, but not the group's current version (held back after a NACK, or not sent yet).
  if (t.health === "HEALTH_BEHIND" && t.status === "SYNC_STATUS_SYNCED")
    return {
      text: `BEHIND ${short(t.acked_version)}→${short(t.current_version)} (${t.behind_reason})`,
      color: "yellow",
    };
  switch (t.status) {
    case "SYNC_STATUS_SYNCED":
      return {
        text: `${short(t.acked_version)} (${String(t.acked_resources)}${t.acked_resources === 0 ? ", empty" : ""})`,
        color: t.acked_resources === 0 ? "yellow" : "green",
      };
    case "SYNC_STATUS_STALE":
      return {
        text: `${short(t.acked_version) || "none"}→${short(t.sent_version)}? (${String(t.acked_resources)}→${String(t.sent_resources)})`,
        color: "yellow",
      };
    case "SYNC_STATUS_ERROR":
      return { text: `NACK ${short(t.sent_version)} (keeps ${String(t.acked_resources)})`, color: "red" };
    case "SYNC_STATUS_NOT_SENT":
      return { text: "not sent", color: "dim" };
    default:
      return "?";
  }
}

function reportedCell(t: FleetNodeMessage["types"][number] | undefined): Cell {
  if (!t) return "-";
  if (t.nack_version !== "") return { text: `NACK ${short(t.nack_version)}`, color: "red" };
  return t.acked_version !== "" ? { text: short(t.acked_version), color: "green" } : "-";
}

function ackedCell(t: TypeStateMessage | undefined): Cell {
  return t && t.acked_version !== "" ? { text: short(t.acked_version), color: "dim" } : "-";
}

function nodeJson(n: NodeMessage): object {
  return {
    id: n.id,
    cluster: n.cluster,
    user_agent: n.user_agent,
    ...(n.unknown_group ? { unknown_group: true, nearest_group: n.nearest_group || undefined } : {}),
    last_seen: iso(n.last_seen_time),
    ...(n.gone_time ? { gone_since: iso(n.gone_time) } : {}),
    ...(n.probe ? { probe: true } : {}),
    streams: n.streams.map((s) => ({
      stream_id: s.stream_id,
      peer: s.peer,
      protocol: s.protocol.replace("PROTOCOL_", "").toLowerCase(),
      service: s.service,
      connected_since: iso(s.connected_time),
      types: s.types.map(typeJson),
    })),
  };
}

function fleetNodeJson(n: FleetNodeMessage): object {
  return {
    id: n.id,
    cluster: n.cluster,
    user_agent: n.user_agent,
    replica: n.replica,
    types: n.types.map((t) => ({
      type: typeLabel(t.type_url),
      type_url: t.type_url,
      ...(t.acked_version ? { acked_version: t.acked_version } : {}),
      ...(t.nack_version ? { last_nack: { version: t.nack_version, message: t.nack_message } } : {}),
    })),
  };
}

function typeJson(t: TypeStateMessage): Record<string, unknown> {
  return {
    type: typeLabel(t.type_url),
    type_url: t.type_url,
    status: t.status.replace("SYNC_STATUS_", ""),
    health: t.health.replace("HEALTH_", ""),
    ...(t.current_version ? { current_version: t.current_version } : {}),
    ...(t.behind_reason ? { behind_reason: t.behind_reason } : {}),
    ...(t.acked_version
      ? { acked_version: t.acked_version, acked_at: iso(t.acked_time), acked_resources: t.acked_resources }
      : {}),
    ...(t.sent_version
      ? { sent_version: t.sent_version, sent_at: iso(t.sent_time), sent_resources: t.sent_resources }
      : {}),
    ...(t.last_nack
      ? {
          last_nack: {
            version: t.last_nack.version,
            at: iso(t.last_nack.time),
            message: t.last_nack.message,
            repeats: t.last_nack.repeats,
          },
        }
      : {}),
  };
}

// ---------------------------------------------------------------- config

/** `oooi debug config NODE`: prints the node's configuration as YAML or JSON; returns the exit status. */
export async function debugConfig(
  node: string,
  opts: ConnectOptions & { type?: string; output?: string },
  io: DebugIo,
): Promise<number> {
  return withClient(opts, io, async (client) => {
    let res: Awaited<ReturnType<DebugClient["nodeConfig"]>>;
    try {
      res = await client.nodeConfig({ node_id: node });
    } catch (e) {
      if (!(e instanceof XdsNotFoundError)) throw e;
      io.err(`oooi debug: ${e.message}\n${knownNodes(node, await client.listNodes({ include_disconnected: true }))}`);
      return 1;
    }
    const wanted = opts.type;
    const configs =
      wanted === undefined
        ? res.configs
        : res.configs.filter((c) => c.state !== null && typeMatches(c.state.type_url, wanted));
    if (wanted !== undefined && configs.length === 0) {
      const has = [...new Set(res.configs.map((c) => typeLabel(c.state?.type_url ?? "")))].join(", ") || "nothing";
      io.err(`oooi debug: node ${node} holds no type matching "${wanted}" (it holds: ${has})\n`);
      return 1;
    }
    const doc = {
      node: res.node.id,
      cluster: res.node.cluster,
      user_agent: res.node.user_agent,
      ...(res.node.streams.length === 0 ? { connected: false } : {}),
      types: configs.map(configJson),
    };
    io.out(structured(doc, opts.output ?? "yaml") ?? "");
    return 0;
  });
}

/** What to ask instead of an unknown node id: the group's nodes when it names a group, else every node id. */
export function knownNodes(asked: string, nodes: readonly NodeMessage[]): string {
  const ids = (list: readonly NodeMessage[]): string => [...new Set(list.map((n) => n.id))].sort().join(", ");
  const ofGroup = nodes.filter((n) => n.cluster === asked);
  if (ofGroup.length > 0) return `${asked} is a node group (node.cluster), not a node id; its nodes: ${ids(ofGroup)}\n`;
  if (nodes.length === 0) return "no node is connected to this server\n";
  return `known node ids: ${ids(nodes)} (see \`oooi debug nodes\`)\n`;
}

function configJson(c: TypeConfigMessage): Record<string, unknown> {
  const acked = c.acked.map(resourceJson);
  const sameAsAcked =
    c.sent.length === c.acked.length &&
    c.sent.every((s, i) => s.name === c.acked[i]?.name && s.version === c.acked[i].version);
  return {
    stream_id: c.stream_id,
    ...(c.state ? typeJson(c.state) : {}),
    resources: acked,
    // What was sent but is not (yet) what the node runs: pending an ACK, or rejected.
    ...(sameAsAcked ? {} : { sent: c.sent.map(resourceJson) }),
  };
}

function resourceJson(r: ResourceMessage): Record<string, unknown> {
  return {
    name: r.name,
    version: r.version,
    ...(r.config ? { config: jsonFromStruct(r.config, LOADER_VALUE_KEYS) } : {}),
  };
}

// ---------------------------------------------------------------- pushes

/** `oooi debug pushes`: prints the push history; returns the exit status. */
export async function debugPushes(
  opts: ConnectOptions & { node?: string; cluster?: string; type?: string; limit?: number; output?: string },
  io: DebugIo,
): Promise<number> {
  return withClient(opts, io, async (client) => {
    const wanted = opts.type;
    let pushes = await client.pushHistory({
      ...(opts.node ? { node_id: opts.node } : {}),
      ...(opts.cluster ? { cluster: opts.cluster } : {}),
    });
    if (wanted !== undefined) pushes = pushes.filter((p) => typeMatches(p.type_url, wanted));
    if (opts.limit !== undefined) pushes = pushes.slice(-opts.limit);
    const doc = structured(pushes.map(pushJson), opts.output ?? "table");
    if (doc !== undefined) {
      io.out(doc);
      return 0;
    }
    io.out(formatPushes(pushes, { now: io.now(), color: io.color }));
    return 0;
  });
}

/** Renders PushHistory as a table. */
export function formatPushes(pushes: readonly PushMessage[], o: { now: number; color: boolean }): string {
  if (pushes.length === 0) return "no pushes recorded\n";
  const header = ["SENT", "NODE", "TYPE", "CAUSE", "VERSION", "RES", "BYTES", "CHANGE→SENT", "CHANGE→ACK"];
  const rows: Cell[][] = pushes.map((p) => {
    const nacked = p.nack_time !== null;
    const ack: Cell = nacked
      ? { text: "NACK", color: "red" }
      : p.change_to_ack
        ? ms(millisOf(p.change_to_ack))
        : { text: "pending", color: "yellow" };
    return [
      `${age(o.now, millisOf(p.sent_time))} ago`,
      p.node_id,
      typeLabel(p.type_url),
      p.cause === "PUSH_CAUSE_CHANGE" ? "change" : "subscribe",
      short(p.version),
      String(p.resources + p.removed),
      String(p.bytes),
      ms(millisOf(p.change_to_sent)),
      ack,
    ];
  });
  return table(header, rows, o.color);
}

function pushJson(p: PushMessage): object {
  return {
    node: p.node_id,
    cluster: p.cluster,
    stream_id: p.stream_id,
    type: typeLabel(p.type_url),
    type_url: p.type_url,
    protocol: p.protocol.replace("PROTOCOL_", "").toLowerCase(),
    cause: p.cause === "PUSH_CAUSE_CHANGE" ? "change" : "subscription",
    version: p.version,
    nonce: p.nonce,
    resources: p.resources,
    removed: p.removed,
    bytes: p.bytes,
    changed_at: iso(p.change_time),
    sent_at: iso(p.sent_time),
    ...(p.ack_time ? { acked_at: iso(p.ack_time) } : {}),
    ...(p.nack_time ? { nacked_at: iso(p.nack_time) } : {}),
    change_to_sent_ms: millisOf(p.change_to_sent),
    ...(p.change_to_ack ? { change_to_ack_ms: millisOf(p.change_to_ack) } : {}),
  };
}

// ---------------------------------------------------------------- formatting

/** A content-hash version shortened to 8 characters, as git does. */
function short(version: string): string {
  return version.length > 12 ? version.slice(0, 8) : version;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function iso(t: { seconds?: number | string | null; nanos?: number | null } | null): string | undefined {
  const m = millisOf(t);
  return m === undefined ? undefined : new Date(m).toISOString();
}

function ms(value: number | undefined): string {
  if (value === undefined) return "-";
  if (value < 10 && !Number.isInteger(value)) return `${value.toFixed(1)}ms`;
  return value < 10_000 ? `${Math.round(value)}ms` : `${(value / 1000).toFixed(1)}s`;
}

/** "42s", "5m03s", "2h10m", "3d4h" between `at` and `now`. */
function age(now: number, at: number | undefined): string {
  if (at === undefined) return "?";
  const s = Math.max(0, Math.floor((now - at) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
  return `${Math.floor(s / 86400)}d${Math.floor(s / 3600) % 24}h`;
}

const ANSI = { red: "\u001b[31;1m", yellow: "\u001b[33m", green: "\u001b[32m", dim: "\u001b[2m" } as const;

function paint(text: string, color: keyof typeof ANSI, on: boolean): string {
  return on ? `${ANSI[color]}${text}\u001b[0m` : text;
}

/** Left-aligned columns two spaces apart; colour codes do not count towards widths. */
function table(header: readonly string[], rows: readonly (readonly Cell[])[], color: boolean): string {
  const text = (c: Cell | undefined): string => (c === undefined ? "" : typeof c === "string" ? c : c.text);
  // Surrogate pairs count as one column.
  const width = (t: string): number => t.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, "_").length;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => width(text(r[i])))));
  const line = (cells: readonly Cell[]): string =>
    cells
      .map((c, i) => {
        const t = text(c);
        const padded = i === cells.length - 1 ? t : t + " ".repeat((widths[i] ?? 0) - width(t));
        return typeof c === "string" ? padded : paint(t, c.color, color) + padded.slice(t.length);
      })
      .join("  ")
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}
