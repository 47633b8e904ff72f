// An Infra's spec, checked and resolved into numbers the rest of the model can trust.
import type { Infra, UnknownClientPolicy } from "../api/schema.js";
import type { Service } from "../api/external.js";
import { parseDurationSeconds } from "./duration.js";
import { objectNameErrors } from "./names.js";
import { cidrContains, formatCidr, formatIPv4, isHostAddress, parseCidr, parseIPv4, type Cidr } from "./ipv4.js";
import { resolveNetwork, type NetworkModel } from "./network.js";
import type { ObjectProblems, Problems } from "./problems.js";
import { selectorErrors } from "./selector.js";
import type { ObjectRef } from "./types.js";

type ProxySpec = NonNullable<NonNullable<Infra["spec"]["infraComponents"]>["proxy"]>;

export const RESOLV_CONF = "resolv.conf";

/** Observed Services by "<namespace>/<name>", built once per model build. */
export type ServiceIndex = ReadonlyMap<string, Service>;

export interface ResolvedInfra {
  readonly ref: ObjectRef;
  readonly infra: Infra;
  readonly cidr: Cidr;
  readonly cidrText: string;
  readonly gateway: string;
  /** Both networkConfig forms as one model (src/model/network.ts). */
  readonly network: NetworkModel;
  /** The NAD the components and workers select: the user's, or the one OVN-Kubernetes makes for a CUDN. */
  readonly nad: { readonly name: string; readonly namespace: string };
  /** Upstream resolver IPs, or "resolv.conf". */
  readonly upstreams: readonly string[] | "resolv.conf";
  readonly dhcp:
    | {
        readonly serverIP: string;
        readonly pool: { readonly start: number; readonly end: number } | undefined;
        readonly leaseTime: string;
        readonly leaseSeconds: number;
        readonly unknownClients: UnknownClientPolicy;
        readonly interface: string;
        readonly image: string | undefined;
      }
    | undefined;
  readonly dns: { readonly serverIP: string; readonly image: string | undefined } | undefined;
  readonly proxy:
    | {
        readonly serverIP: string;
        /** The proxy's pod-network address for the default DNS view; undefined when unset or unresolved. */
        readonly internalIP: string | undefined;
        readonly proxyImage: string | undefined;
        readonly managerImage: string | undefined;
      }
    | undefined;
}

const F = {
  cidr: "spec.networkConfig.cidr",
  gateway: "spec.networkConfig.gateway",
  dnsServers: "spec.networkConfig.dnsServers",
  dhcp: "spec.infraComponents.dhcp",
  dns: "spec.infraComponents.dns",
  proxy: "spec.infraComponents.proxy",
} as const;

/**
 * Checks everything about an Infra that the schema cannot: addresses inside the CIDR, no two
 * components (or the gateway) on one address, components outside the DHCP pool, a resolvable
 * internalProxyService. Returns undefined when the Infra cannot be served.
 */
export function resolveInfra(infra: Infra, services: ServiceIndex, problems: Problems): ResolvedInfra | undefined {
  const ref: ObjectRef = { kind: "Infra", namespace: infra.metadata.namespace, name: infra.metadata.name };
  const p = problems.for(ref);
  const nc = infra.spec.networkConfig;
  const comps = infra.spec.infraComponents ?? {};
  for (const e of objectNameErrors("Infra", infra.metadata)) p.error(e.field, "InvalidName", e.message);

  const cidr = parseCidr(nc.cidr);
  if (cidr === undefined) {
    p.error(
      F.cidr,
      "InvalidSpec",
      `${JSON.stringify(nc.cidr)} is not an IPv4 network address in CIDR form (host bits must be zero)`,
    );
    return undefined;
  }
  if (cidr.prefix > 30) {
    p.error(
      F.cidr,
      "InvalidSpec",
      `/${cidr.prefix} leaves no room for a gateway, three servers and workers; use /30 or larger`,
    );
    return undefined;
  }

  const outside = vlanCidrError(cidr);
  if (outside !== undefined) {
    p.error(F.cidr, "InvalidSpec", `${nc.cidr} ${outside}`);
    return undefined;
  }

  // Every address-valued field, checked once for "inside the CIDR" and "not shared".
  const owners = new Map<number, string>();
  const claim = (field: string, text: string | undefined, required: boolean): number | undefined => {
    if (text === undefined || text === "") {
      if (required) p.error(field, "InvalidSpec", "required when the component is enabled");
      return undefined;
    }
    const addr = parseIPv4(text);
    if (addr === undefined) {
      p.error(field, "InvalidSpec", `${JSON.stringify(text)} is not an IPv4 address`);
      return undefined;
    }
    if (!isHostAddress(cidr, addr)) {
      p.error(field, "InvalidSpec", `${text} is not a usable host address of ${nc.cidr}`);
      return undefined;
    }
    const owner = owners.get(addr);
    if (owner !== undefined) {
      p.error(field, "InvalidSpec", `${text} is already used by ${owner}`);
      return undefined;
    }
    owners.set(addr, field);
    return addr;
  };

  const dhcpOn = comps.dhcp?.enabled ?? true;
  const network = resolveNetwork(nc, infra.metadata.namespace, dhcpOn, p);
  // A missing gateway is the network's to judge (resolveNetwork): some networks need none.
  claim(F.gateway, nc.gateway, false);
  const dnsOn = comps.dns?.enabled ?? true;
  const proxyOn = comps.proxy?.enabled ?? true;
  const dhcpIP = dhcpOn ? claim(`${F.dhcp}.serverIP`, comps.dhcp?.serverIP, true) : undefined;
  const dnsIP = dnsOn ? claim(`${F.dns}.serverIP`, comps.dns?.serverIP, true) : undefined;
  const proxyIP = proxyOn ? claim(`${F.proxy}.serverIP`, comps.proxy?.serverIP, true) : undefined;

  // Pool: both ends or neither, inside the CIDR, ordered, and clear of every fixed address.
  let pool: { start: number; end: number } | undefined;
  if (dhcpOn) {
    const { rangeStart, rangeEnd } = comps.dhcp ?? {};
    if (rangeStart !== undefined && rangeEnd !== undefined) {
      const start = parseIPv4(rangeStart);
      const end = parseIPv4(rangeEnd);
      if (start === undefined || !isHostAddress(cidr, start)) {
        p.error(`${F.dhcp}.rangeStart`, "InvalidSpec", `${rangeStart} is not a usable host address of ${nc.cidr}`);
      } else if (end === undefined || !isHostAddress(cidr, end)) {
        p.error(`${F.dhcp}.rangeEnd`, "InvalidSpec", `${rangeEnd} is not a usable host address of ${nc.cidr}`);
      } else if (start > end) {
        p.error(`${F.dhcp}.rangeEnd`, "InvalidSpec", `rangeEnd ${rangeEnd} comes before rangeStart ${rangeStart}`);
      } else {
        pool = { start, end };
        for (const [addr, field] of owners) {
          if (addr >= start && addr <= end) {
            p.error(
              `${F.dhcp}.rangeStart`,
              "InvalidSpec",
              `pool ${rangeStart}-${rangeEnd} contains ${formatIPv4(addr)} (${field})`,
            );
          }
        }
      }
    } else if (rangeStart !== undefined || rangeEnd !== undefined) {
      const missing = rangeStart === undefined ? "rangeStart" : "rangeEnd";
      p.error(`${F.dhcp}.${missing}`, "InvalidSpec", "rangeStart and rangeEnd must be set together");
    }
  }

  const leaseTime = comps.dhcp?.leaseTime ?? "1h";
  const leaseSeconds = parseDurationSeconds(leaseTime);
  if (dhcpOn && (leaseSeconds === undefined || leaseSeconds < 60)) {
    p.error(`${F.dhcp}.leaseTime`, "InvalidSpec", `${JSON.stringify(leaseTime)} is not a duration of at least 1m`);
  }

  warnLegacyFields(infra, p);
  const upstreams = resolveUpstreams(nc.dnsServers ?? [RESOLV_CONF], p);

  let internalIP: string | undefined;
  const ips = comps.proxy?.internalProxyService;
  if (proxyOn && ips !== undefined && ips !== "") {
    internalIP = resolveInternalProxy(ips, infra.metadata.namespace, cidr, services, p);
  }

  checkInternalClients(comps.proxy, proxyOn, p);

  const gateway = nc.gateway;
  if (p.hasErrors || network === undefined || gateway === undefined) return undefined;
  return {
    ref,
    infra,
    cidr,
    cidrText: nc.cidr,
    gateway,
    network,
    nad: { name: network.attachment.name, namespace: network.attachment.namespace },
    upstreams,
    dhcp:
      dhcpIP === undefined
        ? undefined
        : {
            serverIP: formatIPv4(dhcpIP),
            pool,
            leaseTime,
            leaseSeconds: leaseSeconds ?? 3600,
            unknownClients: comps.dhcp?.unknownClients ?? "deny",
            interface: comps.dhcp?.interface ?? "net1",
            image: comps.dhcp?.image,
          },
    dns: dnsIP === undefined ? undefined : { serverIP: formatIPv4(dnsIP), image: comps.dns?.image },
    proxy:
      proxyIP === undefined
        ? undefined
        : {
            serverIP: formatIPv4(proxyIP),
            internalIP,
            proxyImage: comps.proxy?.proxyImage,
            managerImage: comps.proxy?.managerImage,
          },
  };
}

/**
 * The widest VLAN accepted: /16 (65,534 hosts) is already more than one broadcast domain holds;
 * a wider "VLAN" is a mistake, and 0.0.0.0/0 would give every client the VLAN view.
 */
export const WIDEST_VLAN_PREFIX = 16;

/**
 * Networks a VLAN never overlaps: addresses no VLAN host has, and the loopback addresses the
 * host's own clients use (inside the VLAN they would get the VLAN view). The rest of 127.0.0.0/8
 * stays accepted so that one machine can host a test VLAN on loopback (examples/standalone).
 * oooi has no setting for the pod and Service networks; the one pod-network address an Infra
 * names, internalProxyService, is refused inside its VLAN (resolveInternalProxy).
 */
const NEVER_A_VLAN: readonly { readonly cidr: Cidr; readonly what: string }[] = (
  [
    ["0.0.0.0/8", '"this network" (RFC 1122), which no host has'],
    ["127.0.0.0/24", "the loopback addresses this host's own clients use (127.0.0.1, 127.0.0.53)"],
    ["169.254.0.0/16", "link-local addresses (RFC 3927), which DHCP never gives"],
    ["224.0.0.0/4", "multicast addresses"],
    ["240.0.0.0/4", "reserved addresses and the broadcast address"],
  ] as const
).map(([text, what]) => ({ cidr: parseCidr(text) as Cidr, what }));

/** Why a CIDR cannot be a VLAN, or undefined when it can. */
export function vlanCidrError(cidr: Cidr): string | undefined {
  if (cidr.prefix < WIDEST_VLAN_PREFIX) {
    return `spans ${cidr.prefix === 0 ? "every IPv4 address" : `${String(2 ** (32 - cidr.prefix))} addresses`}: a VLAN is one broadcast domain, at most /${String(WIDEST_VLAN_PREFIX)}`;
  }
  for (const n of NEVER_A_VLAN) {
    if (cidr.first <= n.cidr.last && n.cidr.first <= cidr.last)
      return `overlaps ${formatCidr(n.cidr)}, ${n.what}; a VLAN never does`;
  }
  return undefined;
}

/**
 * The original's single-cluster Infra fields. They are accepted so its manifests load, but a hosted
 * cluster is served only through an InfraClusterAttachment (docs/reference.md#infra): say which field replaces each.
 */
const LEGACY_FIELDS: readonly { field: string; get: (i: Infra) => string | undefined; replacement: string }[] = [
  {
    field: `${F.dns}.clusterName`,
    get: (i) => i.spec.infraComponents?.dns?.clusterName,
    replacement: "spec.dns.clusterName",
  },
  {
    field: `${F.dns}.baseDomain`,
    get: (i) => i.spec.infraComponents?.dns?.baseDomain,
    replacement: "spec.dns.baseDomain",
  },
  {
    field: `${F.proxy}.controlPlaneNamespace`,
    get: (i) => i.spec.infraComponents?.proxy?.controlPlaneNamespace,
    replacement: "spec.controlPlaneNamespace",
  },
  {
    field: `${F.proxy}.apiServerService`,
    get: (i) => i.spec.infraComponents?.proxy?.apiServerService,
    replacement: "spec.apiServerService",
  },
];

function warnLegacyFields(infra: Infra, p: ObjectProblems): void {
  if (infra.spec.infraComponents?.proxy?.externalService?.enabled === true) {
    p.warning(
      `${F.proxy}.externalService`,
      "LegacyField",
      `deprecated: the Service ${infra.metadata.name}-proxy-external is still made, but the original moved the public proxy Service to each InfraClusterAttachment; set its spec.externalService instead (<attachment>-proxy-external)`,
    );
  }
  for (const l of LEGACY_FIELDS) {
    const value = l.get(infra);
    if (value === undefined || value === "") continue;
    p.warning(
      l.field,
      "LegacyField",
      `${JSON.stringify(value)} is ignored: a hosted cluster is served only through an InfraClusterAttachment with infraRef.name ${infra.metadata.name}; set its ${l.replacement} instead`,
    );
  }
}

function resolveUpstreams(entries: readonly string[], p: ObjectProblems): readonly string[] | "resolv.conf" {
  const ips: string[] = [];
  let inherit = false;
  for (const [i, entry] of entries.entries()) {
    if (entry === RESOLV_CONF) inherit = true;
    else if (parseIPv4(entry) === undefined) {
      p.error(
        `${F.dnsServers}[${String(i)}]`,
        "InvalidSpec",
        `${JSON.stringify(entry)} is neither an IPv4 address nor "resolv.conf"`,
      );
    } else if (!ips.includes(entry)) ips.push(entry);
  }
  if (inherit && ips.length > 0) {
    p.error(F.dnsServers, "InvalidSpec", `"resolv.conf" cannot be mixed with explicit resolvers (${ips.join(", ")})`);
  }
  return ips.length === 0 ? RESOLV_CONF : ips;
}

/**
 * `internalClients.namespaceSelector`: who may reach the proxy on the pod network. Unset means
 * nobody (the generated NetworkPolicy admits no pod), which makes an internalProxyService useless:
 * say so rather than leave the pods wondering.
 */
function checkInternalClients(proxy: ProxySpec | undefined, proxyOn: boolean, p: ObjectProblems): void {
  if (!proxyOn) return;
  const field = `${F.proxy}.internalClients.namespaceSelector`;
  const selector = proxy?.internalClients?.namespaceSelector;
  if (selector === undefined) {
    const ips = proxy?.internalProxyService;
    if (ips !== undefined && ips !== "")
      p.warning(
        field,
        "NoInternalClients",
        `internalProxyService is set, but no namespace may reach the proxy on the pod network; set ${field} to the labels of the client namespaces`,
      );
    return;
  }
  for (const e of selectorErrors(selector)) p.error(`${field}.${e.field}`, "InvalidSpec", e.message);
}

/** `internalProxyService`: a ClusterIP, or svc[.ns[.svc[.cluster.local]]] resolved to the Service's ClusterIP. */
function resolveInternalProxy(
  value: string,
  defaultNamespace: string,
  cidr: Cidr,
  services: ServiceIndex,
  p: ObjectProblems,
): string | undefined {
  const field = `${F.proxy}.internalProxyService`;
  // "svc.ns.svc.cluster.local." is the same name as without the final dot (the original accepts both).
  value = value.endsWith(".") ? value.slice(0, -1) : value;
  const literal = parseIPv4(value);
  if (literal !== undefined) {
    if (cidrContains(cidr, literal)) {
      p.error(
        field,
        "InvalidSpec",
        `${value} is inside the VLAN ${formatIPv4(cidr.network)}/${cidr.prefix}; the default view must never publish VLAN addresses`,
      );
      return undefined;
    }
    return value;
  }
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.([a-z0-9]([-a-z0-9]*[a-z0-9])?))?(\.svc(\.cluster\.local)?)?$/.exec(
    value,
  );
  if (m === null || (m[6] !== undefined && m[4] === undefined)) {
    p.error(
      field,
      "InvalidSpec",
      `${JSON.stringify(value)} is neither an IPv4 ClusterIP nor a Service name of the form svc.namespace[.svc.cluster.local]`,
    );
    return undefined;
  }
  const name = m[1] ?? "";
  const namespace = m[4] ?? defaultNamespace;
  const svc = services.get(`${namespace}/${name}`);
  const ip = svc?.spec?.clusterIP;
  if (svc === undefined) {
    p.pending(
      field,
      "InternalProxyServicePending",
      `Service ${namespace}/${name} not found; the default DNS view stays empty until it exists`,
    );
    return undefined;
  }
  // Headless ("None") and not yet allocated ("") do not parse either.
  if (ip === undefined || parseIPv4(ip) === undefined) {
    p.pending(
      field,
      "InternalProxyServicePending",
      `Service ${namespace}/${name} has no ClusterIP (headless or not yet allocated); the default DNS view stays empty`,
    );
    return undefined;
  }
  if (cidrContains(cidr, parseIPv4(ip) ?? -1)) {
    p.error(
      field,
      "InvalidSpec",
      `Service ${namespace}/${name} has ClusterIP ${ip} inside the VLAN; the default view must never publish VLAN addresses`,
    );
    return undefined;
  }
  return ip;
}
