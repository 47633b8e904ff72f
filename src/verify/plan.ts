// The user's Verification list as data: Topology (+ the observed VMIs) → the checks `oooi verify`
// runs and what the model says each must find. Pure; the probes live in ./probe-*.ts.
import type { VirtualMachineInstance } from "../api/external.js";
import { formatIPv4, parseCidr, parseIPv4 } from "../model/ipv4.js";
import { stripPrefix } from "../model/workers.js";
import type { Backend, DnsView, Topology, Upstream } from "../model/types.js";

/** A DNS question and the answer the model says the view must give. */
export interface DnsCheck {
  readonly kind: "dns";
  readonly infra: string;
  readonly view: DnsView["name"];
  /** Source address the query is sent from (selects the view). */
  readonly source: string;
  readonly name: string;
  /** Sorted A addresses the view's zones hold, or "forwarded" when the view has no record for it. */
  readonly expected: readonly string[] | "forwarded";
}

/** A connection the proxy must route: the chain the snapshot selects must lead to `upstream`. */
export interface RouteCheck {
  readonly kind: "route";
  readonly infra: string;
  /** xDS node group whose snapshot routes it. */
  readonly group: string;
  readonly backend: string;
  readonly attachment: string;
  readonly sourceIp: string;
  readonly destinationIp: string;
  readonly port: number;
  readonly serverName: string | undefined;
  readonly upstream: string;
  /** "address:port", sorted. */
  readonly endpoints: readonly string[];
}

/** A VMI's DHCP reservation against the address its guest reports. */
export interface ReservationCheck {
  readonly kind: "reservation";
  readonly infra: string;
  readonly vmi: string;
  readonly mac: string;
  readonly reserved: string;
  /** What the VMI's interface with this MAC reports; undefined when it reports nothing yet. */
  readonly reported: string | undefined;
}

export type PlannedCheck = DnsCheck | RouteCheck | ReservationCheck;

/** Where the probes come from. */
export interface PlanOptions {
  /** Source for the pod-network view (outside every Infra CIDR). */
  readonly podSource: string;
  /** Source for the VLAN view; default: the last host address of the Infra's CIDR. */
  readonly vlanSource?: string;
  /** A name no zone holds, asked from both views: it must be forwarded. */
  readonly forwardName?: string;
}

/** The label a wildcard record is probed with (the console route every cluster has). */
export const WILDCARD_PROBE_LABEL = "console-openshift-console";

/** Every check for every Infra, in a stable order (Infra, then DNS, routes, reservations). */
export function planChecks(
  topologies: readonly Topology[],
  vmis: Iterable<VirtualMachineInstance>,
  options: PlanOptions,
): PlannedCheck[] {
  return topologies.flatMap((t) => [...planDns(t, options), ...planRoutes(t, options), ...planReservations(t, vmis)]);
}

/** The VLAN probe's source: the last host address of `cidr` (not the gateway nor a component, by convention). */
export function vlanProbeSource(cidr: string): string | undefined {
  const c = parseCidr(cidr);
  if (c === undefined) return undefined;
  return formatIPv4(c.prefix >= 31 ? c.last : c.last - 1);
}

function planDns(t: Topology, options: PlanOptions): DnsCheck[] {
  const dns = t.dns;
  if (dns === undefined) return [];
  const infra = `${t.infra.namespace}/${t.infra.name}`;
  const [vlan, pod] = dns.views;
  const vlanSource = options.vlanSource ?? vlanProbeSource(vlan.sourceCidr ?? "");
  // Every name either view publishes is asked in both: a name one view lacks must not leak there.
  const names = [...new Set([...recordNames(vlan), ...recordNames(pod)])].sort();
  if (options.forwardName !== undefined) names.push(options.forwardName.toLowerCase());
  const out: DnsCheck[] = [];
  for (const [view, source] of [
    [vlan, vlanSource],
    [pod, options.podSource],
  ] as const) {
    if (source === undefined) continue;
    for (const name of names) {
      out.push({ kind: "dns", infra, view: view.name, source, name, expected: answerOf(view, name) });
    }
  }
  return out;
}

/** Record names of a view, wildcards replaced by the probe label. */
function recordNames(view: DnsView): string[] {
  return view.zones.flatMap((z) =>
    z.records.map((r) => (r.name.startsWith("*.") ? `${WILDCARD_PROBE_LABEL}${r.name.slice(1)}` : r.name)),
  );
}

/** The A addresses `view` holds for `name` (exact owner first, else a covering wildcard). */
export function answerOf(view: DnsView, name: string): readonly string[] | "forwarded" {
  const records = view.zones.flatMap((z) => z.records);
  const exact = records.filter((r) => r.name === name);
  if (exact.length > 0) return exact.map((r) => r.address).sort();
  const dot = name.indexOf(".");
  const wildcard = dot < 0 ? [] : records.filter((r) => r.name === `*${name.slice(dot)}`);
  if (wildcard.length > 0) return wildcard.map((r) => r.address).sort();
  return "forwarded";
}

function planRoutes(t: Topology, options: PlanOptions): RouteCheck[] {
  const proxy = t.proxy;
  if (proxy === undefined) return [];
  const infra = `${t.infra.namespace}/${t.infra.name}`;
  const vlanSource = options.vlanSource ?? vlanProbeSource(t.dns?.views[0].sourceCidr ?? "") ?? options.podSource;
  const upstreams = new Map(proxy.upstreams.map((u) => [u.name, u]));
  // Port 80 is HTTP routing by Host (RDS), not a filter-chain choice; the TLS ports are checked.
  return proxy.backends
    .filter((b) => b.port !== 80)
    .map((b) => ({
      kind: "route" as const,
      infra,
      group: proxy.node,
      backend: b.name,
      attachment: b.attachment,
      sourceIp: sourceFor(b) ?? vlanSource,
      destinationIp: proxy.serverIP,
      port: b.port,
      serverName: probeName(b.serverNames[0]),
      upstream: b.upstream,
      endpoints: upstreamEndpoints(upstreams.get(b.upstream)),
    }));
}

/** "address:port" of each endpoint; a DNS upstream's one endpoint is its hostname (its cluster carries it). */
function upstreamEndpoints(u: Upstream | undefined): string[] {
  if (u === undefined) return [];
  if (u.kind === "dns") return [`${u.hostname}:${String(u.port)}`];
  return u.endpoints.map((e) => `${e.address}:${String(e.port)}`).sort();
}

/** A source inside the backend's first source range (a worker of that cluster), if it has one. */
function sourceFor(b: Backend): string | undefined {
  const range = b.sourcePrefixRanges[0];
  if (range === undefined) return undefined;
  const c = parseCidr(range);
  return c === undefined ? undefined : formatIPv4(c.first);
}

function probeName(name: string | undefined): string | undefined {
  return name?.startsWith("*.") === true ? `${WILDCARD_PROBE_LABEL}${name.slice(1)}` : name;
}

function planReservations(t: Topology, vmis: Iterable<VirtualMachineInstance>): ReservationCheck[] {
  const dhcp = t.dhcp;
  if (dhcp === undefined) return [];
  const infra = `${t.infra.namespace}/${t.infra.name}`;
  const byKey = new Map(Array.from(vmis, (v) => [`${v.metadata.namespace}/${v.metadata.name}`, v]));
  return dhcp.reservations
    .filter((r) => byKey.has(r.vmi))
    .map((r) => ({
      kind: "reservation" as const,
      infra,
      vmi: r.vmi,
      mac: r.hwAddress,
      reserved: r.ipAddress,
      reported: reportedAddress(byKey.get(r.vmi), r.hwAddress),
    }));
}

/** The first IPv4 address the VMI's interface with `mac` reports. */
export function reportedAddress(vmi: VirtualMachineInstance | undefined, mac: string): string | undefined {
  const iface = vmi?.status?.interfaces?.find((i) => (i.mac ?? "").toLowerCase() === mac);
  for (const text of [iface?.ipAddress, ...(iface?.ipAddresses ?? [])]) {
    const plain = stripPrefix(text ?? "");
    if (parseIPv4(plain) !== undefined) return plain;
  }
  return undefined;
}
