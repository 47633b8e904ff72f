// An attachment's spec.appsIngress (+ its Infra's addresses) → the checked settings of the hosted
// objects, or the InvalidConfiguration message naming the field. Pure: the model reports it on the
// attachment, the operator's apps-ingress loop refuses to install from it (Degraded).
import type { InfraClusterAttachmentSpec, InfraSpec } from "../api/schema.js";
import { cidrContains, formatIPv4, parseCidr, parseIPv4 } from "./ipv4.js";

/** OLM Subscription defaults (docs/reference.md#apps-ingress). */
export const METALLB_DEFAULTS = {
  namespace: "openshift-operators",
  subscription: "metallb-operator",
  channel: "stable",
  source: "redhat-operators",
  sourceNamespace: "openshift-marketplace",
} as const;

/** What the hosted objects are made from. */
export interface AppsIngressConfig {
  /** false: a MetalLB already runs in the hosted cluster; install nothing, create only the Service. */
  readonly installMetalLB: boolean;
  readonly channel: string;
  readonly source: string;
  /** Undefined only with installMetalLB false and no pool named (MetalLB's default pool then answers). */
  readonly pool: string | undefined;
  readonly range: string | undefined;
  readonly l2Advertisement: string | undefined;
  readonly service: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly ports: { readonly http: number; readonly https: number };
}

export type ConfigResult =
  | { readonly ok: true; readonly config: AppsIngressConfig }
  | { readonly ok: false; readonly field: string; readonly message: string };

const FIELD = "spec.appsIngress.metallb";

/** The checked settings; the range must lie in the Infra CIDR, clear of the DHCP pool and every component address. */
export function resolveAppsIngressConfig(spec: InfraClusterAttachmentSpec, infra: InfraSpec | undefined): ConfigResult {
  const config = appsIngressSettings(spec);
  const bad = (field: string, message: string): ConfigResult => ({ ok: false, field: `${FIELD}.${field}`, message });
  if (config.installMetalLB && config.pool === undefined)
    return bad("addressPoolName", "no MetalLB address pool name; set addressPoolName (and ipAddressPoolRange)");
  if (config.installMetalLB && config.range === undefined)
    return bad("ipAddressPoolRange", `no address range for pool ${config.pool ?? ""}; set ipAddressPoolRange`);
  if (config.range !== undefined) {
    const problem = rangeProblem(config.range, infra);
    if (problem !== undefined) return bad("ipAddressPoolRange", problem);
  }
  return { ok: true, config };
}

/** The settings with their defaults, unchecked (cleanup uses them whatever the spec became). */
export function appsIngressSettings(spec: InfraClusterAttachmentSpec): AppsIngressConfig {
  const a = spec.appsIngress ?? {};
  const m = a.metallb ?? {};
  const pool = nonEmpty(m.addressPoolName);
  const service = a.service ?? {};
  return {
    installMetalLB: m.installOperator !== false,
    channel: nonEmpty(m.channel) ?? METALLB_DEFAULTS.channel,
    source: nonEmpty(m.source) ?? METALLB_DEFAULTS.source,
    pool,
    range: nonEmpty(m.ipAddressPoolRange),
    l2Advertisement: pool === undefined ? undefined : (nonEmpty(m.l2AdvertisementName) ?? `advertise-${pool}`),
    service: {
      name: nonEmpty(service.name) ?? "oooi-ingress",
      namespace: nonEmpty(service.namespace) ?? "openshift-ingress",
      labels: service.labels ?? {},
      annotations: service.annotations ?? {},
    },
    ports: { http: a.ports?.http ?? 80, https: a.ports?.https ?? 443 },
  };
}

/** Why a MetalLB range cannot be used on this Infra's VLAN; undefined when it can. */
export function rangeProblem(text: string, infra: InfraSpec | undefined): string | undefined {
  const r = parseRange(text);
  if (r === undefined) return `${JSON.stringify(text)} is neither "first-last" nor a CIDR`;
  const shown = `${formatIPv4(r.first)}-${formatIPv4(r.last)}`;
  const cidr = parseCidr(infra?.networkConfig.cidr ?? "");
  if (cidr === undefined) return undefined;
  if (!cidrContains(cidr, r.first) || !cidrContains(cidr, r.last))
    return `range ${shown} is not inside the Infra's network ${infra?.networkConfig.cidr ?? ""}`;
  const c = infra?.infraComponents;
  const dhcpFirst = parseIPv4(c?.dhcp?.rangeStart ?? "");
  const dhcpLast = parseIPv4(c?.dhcp?.rangeEnd ?? "");
  if (c?.dhcp?.enabled !== false && dhcpFirst !== undefined && dhcpLast !== undefined) {
    if (r.first <= dhcpLast && dhcpFirst <= r.last)
      return `range ${shown} overlaps the DHCP pool ${formatIPv4(dhcpFirst)}-${formatIPv4(dhcpLast)}`;
  }
  const addresses: [string | undefined, string][] = [
    [infra?.networkConfig.gateway, "the gateway"],
    [c?.dhcp?.serverIP, "the DHCP server"],
    [c?.dns?.serverIP, "the DNS server"],
    [c?.proxy?.serverIP, "the proxy"],
  ];
  for (const [ip, what] of addresses) {
    const n = parseIPv4(ip ?? "");
    if (n !== undefined && r.first <= n && n <= r.last) return `range ${shown} contains ${what} (${ip ?? ""})`;
  }
  return undefined;
}

/** MetalLB's address forms: "a.b.c.d-e.f.g.h" (spaces allowed) or "a.b.c.d[/p]" (p of one or two digits, ≤ 32). */
export function parseRange(text: string): { first: number; last: number } | undefined {
  const dash = text.split("-").map((t) => t.trim());
  if (dash.length === 2) {
    const first = parseIPv4(dash[0] ?? "");
    const last = parseIPv4(dash[1] ?? "");
    return first !== undefined && last !== undefined && first <= last ? { first, last } : undefined;
  }
  const slash = text.indexOf("/");
  const base = parseIPv4((slash < 0 ? text : text.slice(0, slash)).trim());
  // An empty or signed prefix is a typo, not /0 (Number("") is 0: "a.b.c.d/" would be every address).
  const prefixText = slash < 0 ? "32" : text.slice(slash + 1).trim();
  if (base === undefined || !/^[0-9]{1,2}$/.test(prefixText) || Number(prefixText) > 32) return undefined;
  const size = 2 ** (32 - Number(prefixText));
  const first = base - (base % size);
  return { first, last: first + size - 1 };
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === "" ? undefined : s;
}
