// `oooi explain`: the first question of every shared-VLAN debugging session. For a connection
// (--from IP --port P [--sni NAME]) the listener, filter chain, cluster and endpoints the snapshot
// selects — by src/envoy/select.ts, the selector the renderer is property-tested with — and why
// every other chain did not match; for a query (--from IP --dns NAME) the view, zone and record.
// The snapshot comes from a manifests folder (rendered here) or a running server (--xds, over ADS).
import { structured } from "./structured-output.js";
import { explainDnsQuery, type DnsExplanation } from "../dns/server/explain-answer.js";
import { parseIPv4 } from "../model/ipv4.js";
import type { Topology } from "../model/types.js";
import { renderAll } from "../pipeline/outputs.js";
import { xdsCredentials } from "./xds-tls-credentials.js";
import type { XdsTlsOptions } from "./xds-tls-flags.js";
import { fetchSnapshot } from "../verify/fetch-snapshot.js";
import { formatManifestError, loadManifests } from "../watchers/manifests.js";
import {
  explainConnection,
  inlineAssignments,
  servedElsewhere,
  type ChainVerdict,
  type Explanation,
} from "../envoy/explain-route.js";
import type { ConnectionInfo } from "../envoy/select.js";

export interface ExplainCommandOptions extends XdsTlsOptions {
  readonly from: string;
  readonly port?: number;
  readonly sni?: string;
  readonly dns?: string;
  readonly manifests?: string;
  readonly xds?: string;
  /** Node group to fetch with --xds alone ("<namespace>/<ProxyServer>"). */
  readonly group?: string;
  /** Destination address (default: the proxy's serverIP from the manifests). */
  readonly to?: string;
  readonly timeout: number;
  readonly output: string;
}

/** One node group's answer. */
export interface GroupExplanation {
  readonly group: string;
  readonly connection: ConnectionInfo;
  readonly explanation: Explanation;
  /** The hosted cluster ("<namespace>/<name>") whose attachment owns the selected chain. */
  readonly hostedCluster: string | undefined;
  /** When nothing matches here: the port whose listener would take the same connection. */
  readonly servedOn?: { readonly port: number; readonly listener: string; readonly chain: string };
}

export interface ExplainIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Exit status: 0 explained, 1 nothing matches (no listener, no chain, no view), 2 bad input. */
export async function explainCommand(opts: ExplainCommandOptions, io: ExplainIo): Promise<number> {
  const usage = checkUsage(opts);
  if (usage !== undefined) {
    io.err(`oooi explain: ${usage}\n`);
    return 2;
  }
  let topologies: readonly Topology[] = [];
  if (opts.manifests !== undefined) {
    const load = await loadManifests(opts.manifests);
    if (!load.ok) {
      io.err(`oooi explain: cannot read manifests: ${formatManifestError(load.error)}\n`);
      return 2;
    }
    const out = renderAll(load.state, { now: Date.now() });
    topologies = out.model.topologies;
    if (opts.dns !== undefined) return explainDns(topologies, opts.from, opts.dns, opts.output, io);
    if (opts.xds === undefined) {
      const answers = out.infras.flatMap((r) =>
        r.topology.proxy === undefined || r.envoy === undefined
          ? []
          : [
              answerFor(
                r.topology,
                r.topology.proxy.node,
                r.envoy.listeners,
                [...r.envoy.endpoints, ...inlineAssignments(r.envoy.clusters)],
                opts,
              ),
            ],
      );
      return report(answers, opts.output, io);
    }
  }
  const xds = opts.xds ?? "";
  const groups =
    opts.group !== undefined ? [opts.group] : topologies.flatMap((t) => (t.proxy === undefined ? [] : [t.proxy.node]));
  const answers: GroupExplanation[] = [];
  for (const group of groups) {
    try {
      const credentials = xdsCredentials(opts);
      const tls = credentials === undefined ? {} : { credentials };
      const snapshot = await fetchSnapshot({ address: xds, group, timeoutMs: opts.timeout, ...tls });
      const topology = topologies.find((t) => t.proxy?.node === group);
      answers.push(
        answerFor(
          topology,
          group,
          snapshot.listeners,
          [...snapshot.endpoints, ...inlineAssignments(snapshot.clusters)],
          opts,
        ),
      );
    } catch (e) {
      io.err(`oooi explain: ${(e as Error).message}\n`);
      return 1;
    }
  }
  return report(answers, opts.output, io);
}

function checkUsage(opts: ExplainCommandOptions): string | undefined {
  if (parseIPv4(opts.from) === undefined) return `--from ${opts.from} is not an IPv4 address`;
  if ((opts.port === undefined) === (opts.dns === undefined))
    return "give either --port (a connection) or --dns (a query)";
  if (opts.dns !== undefined && opts.manifests === undefined)
    return "--dns needs --manifests (DNS is not served over xDS)";
  if (opts.manifests === undefined && opts.xds === undefined) return "give --manifests DIR or --xds HOST:PORT";
  if (opts.manifests === undefined && opts.group === undefined)
    return "--xds without --manifests needs --group NAMESPACE/PROXYSERVER";
  return undefined;
}

function answerFor(
  topology: Topology | undefined,
  group: string,
  listeners: readonly object[],
  endpoints: readonly object[],
  opts: ExplainCommandOptions,
): GroupExplanation {
  const destinationIp = opts.to ?? topology?.proxy?.serverIP;
  // Port 80 is the apps' plain HTTP; every other port the proxy serves is TLS passthrough.
  const transportOf = (port: number | undefined): "tls" | "raw_buffer" => (port === 80 ? "raw_buffer" : "tls");
  const connection: ConnectionInfo = {
    destinationPort: opts.port ?? 0,
    ...(destinationIp === undefined ? {} : { destinationIp }),
    sourceIp: opts.from,
    transportProtocol: transportOf(opts.port),
    ...(opts.sni === undefined ? {} : { serverName: opts.sni }),
  };
  const explanation = explainConnection(listeners, endpoints, connection);
  const servedOn = explanation.ok
    ? undefined
    : servedElsewhere(listeners, endpoints, connection, (p) => transportOf(p) === connection.transportProtocol);
  return {
    group,
    connection,
    explanation,
    hostedCluster: hostedClusterOf(topology, explanation),
    ...(servedOn === undefined ? {} : { servedOn }),
  };
}

/** The selected chain is named "<attachment namespace>/<attachment name>/<kind>" (src/envoy/render/listeners.ts). */
function hostedClusterOf(topology: Topology | undefined, e: Explanation): string | undefined {
  if (!e.ok) return undefined;
  const attachment = e.chain.split("/").slice(0, 2).join("/");
  return topology?.attachments.find((a) => `${a.ref.namespace}/${a.ref.name}` === attachment)?.hostedCluster;
}

function report(answers: readonly GroupExplanation[], output: string, io: ExplainIo): number {
  io.out(structured(answers, output) ?? (answers.map(formatConnection).join("\n") || "no proxy in the manifests\n"));
  return answers.length > 0 && answers.every((a) => a.explanation.ok) ? 0 : 1;
}

/** The human answer for one node group. */
export function formatConnection(a: GroupExplanation): string {
  const e = a.explanation;
  const c = a.connection;
  const sni = c.serverName === undefined ? "no SNI" : `SNI ${c.serverName}`;
  const lines = [
    `connection     ${c.sourceIp} → ${c.destinationIp ?? "*"}:${String(c.destinationPort)} (${c.transportProtocol === "tls" ? `TLS, ${sni}` : "plain"})`,
    `node group     ${a.group}`,
  ];
  const elsewhere =
    a.servedOn === undefined
      ? []
      : [
          `served on ${String(a.servedOn.port)}  listener ${a.servedOn.listener}, chain ${a.servedOn.chain} takes this connection on port ${String(a.servedOn.port)} (--port ${String(a.servedOn.port)})`,
        ];
  if (!e.ok && e.reason === "no-listener") {
    lines.push(`no listener on this port; the snapshot listens on ${e.ports.join(", ") || "nothing"}`, ...elsewhere);
    return lines.join("\n") + "\n";
  }
  lines.push(`listener       ${e.listener}`);
  if (!e.ok) {
    lines.push("no chain matches: Envoy closes the connection", ...elsewhere);
    if (e.nearest !== undefined) lines.push(`nearest miss   ${e.nearest.chain}: ${e.nearest.misses.join("; ")}`);
  } else {
    lines.push(`filter chain   ${e.chain}`);
    if (a.hostedCluster !== undefined) lines.push(`hosted cluster ${a.hostedCluster}`);
    lines.push(`cluster        ${e.cluster ?? "(none: not a TCP proxy chain)"}`);
    lines.push(`endpoints      ${e.endpoints.join(", ") || "(none: Envoy refuses the connection)"}`);
  }
  if (e.others.length > 0) {
    lines.push("not chosen:");
    for (const v of e.others) lines.push(`  ${formatVerdict(v)}`);
  }
  return lines.join("\n") + "\n";
}

function formatVerdict(v: ChainVerdict): string {
  return `${v.chain}: ${v.misses.join("; ")}`;
}

function explainDns(
  topologies: readonly Topology[],
  from: string,
  name: string,
  output: string,
  io: ExplainIo,
): number {
  const answers = topologies.flatMap((t) =>
    t.dns === undefined ? [] : [{ dnsServer: t.dns.name, ...explainDnsQuery(t.dns, from, name) }],
  );
  io.out(structured(answers, output) ?? (answers.map(formatDns).join("\n") || "no DNSServer in the manifests\n"));
  return answers.length > 0 && answers.every((a) => a.outcome !== "refused") ? 0 : 1;
}

function formatDns(a: DnsExplanation & { dnsServer: string }): string {
  const lines = [`DNS server     ${a.dnsServer}`, `view           ${a.view ?? "(none: refused)"}`];
  if (a.outcome === "forwarded") lines.push("zone           (none published here: forwarded upstream)");
  else if (a.zone !== undefined) lines.push(`zone           ${a.zone}`);
  if (a.outcome === "answer") lines.push(`record         A ${a.addresses.join(", ")}`);
  else if (a.outcome === "nxdomain" || a.outcome === "nodata")
    lines.push(`record         (${a.outcome.toUpperCase()})`);
  return lines.join("\n") + "\n";
}
