// An Infra's spec in → its problems and resolved model out (resolveInfra), rule by rule: the CIDR a
// VLAN may have, each component's address, the DHCP pool and lease, legacy fields, upstream
// resolvers, internalProxyService and internalClients. The Infras here skip the schema decoder (as a
// caller building ClusterState itself does), so no default is filled in before the model's own.
import { describe, expect, it } from "vitest";
import type { Service } from "../../src/api/external.js";
import type { Infra, NetworkConfig } from "../../src/api/schema.js";
import { resolveInfra, vlanCidrError, type ResolvedInfra } from "../../src/model/infra.js";
import { parseCidr } from "../../src/model/ipv4.js";
import { Problems } from "../../src/model/problems.js";

type Components = NonNullable<Infra["spec"]["infraComponents"]>;

const NET: NetworkConfig = { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" };
/** Every component on, each with only its address: DHCP .2, DNS .3, proxy .4. */
const ON = {
  dhcp: { serverIP: "192.0.2.2" },
  dns: { serverIP: "192.0.2.3" },
  proxy: { serverIP: "192.0.2.4" },
} as const satisfies Components;
const OFF = { dhcp: { enabled: false }, dns: { enabled: false }, proxy: { enabled: false } } as const;

function undecoded(infraComponents: Components | undefined, networkConfig: NetworkConfig = NET): Infra {
  return {
    apiVersion: "hostedcluster.densityops.com/v1alpha1",
    kind: "Infra",
    metadata: { name: "vlan100", namespace: "infra" },
    spec: infraComponents === undefined ? { networkConfig } : { networkConfig, infraComponents },
  };
}

/** ON with some components' fields replaced (each component merged one level deep). */
function on(patch: { dhcp?: Components["dhcp"]; dns?: Components["dns"]; proxy?: Components["proxy"] }): Components {
  return {
    dhcp: { ...ON.dhcp, ...patch.dhcp },
    dns: { ...ON.dns, ...patch.dns },
    proxy: { ...ON.proxy, ...patch.proxy },
  };
}

function svc(namespace: string, name: string, spec?: Service["spec"]): Service {
  const base = { apiVersion: "v1", kind: "Service", metadata: { name, namespace } };
  return spec === undefined ? base : { ...base, spec };
}

const SERVICES: readonly Service[] = [
  svc("infra", "proxy", { clusterIP: "172.30.0.10" }),
  svc("infra", "p", { clusterIP: "172.30.0.11" }),
  svc("infra", "my-proxy", { clusterIP: "172.30.0.12" }),
  svc("edge", "proxy", { clusterIP: "172.30.1.10" }),
  svc("e", "proxy", { clusterIP: "172.30.2.10" }),
  svc("edge2", "proxy2", { clusterIP: "172.30.3.10" }),
  svc("infra", "headless", { clusterIP: "None" }),
  svc("infra", "unallocated", { clusterIP: "" }),
  svc("infra", "noip", { type: "ClusterIP" }),
  svc("infra", "nospec"),
  svc("infra", "six", { clusterIP: "fd00::10" }),
  svc("infra", "onvlan", { clusterIP: "192.0.2.60" }),
];

function run(infra: Infra, services: readonly Service[] = SERVICES) {
  const problems = new Problems();
  const index = new Map(services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const model = resolveInfra(infra, index, problems);
  const rows = problems.recorded().map((p): Row => [p.severity, p.field, p.reason, p.message]);
  return { model, problems: rows };
}

type Row = readonly [severity: string, field: string, reason: string, message: string];

const DHCP = "spec.infraComponents.dhcp";
const DNS = "spec.infraComponents.dns";
const PROXY = "spec.infraComponents.proxy";
const IPS = `${PROXY}.internalProxyService`;
const SELECTOR = `${PROXY}.internalClients.namespaceSelector`;
const err = (field: string, message: string): Row => ["error", field, "InvalidSpec", message];
const required = (field: string): Row => err(field, "required when the component is enabled");
const legacy = (field: string, value: string, replacement: string): Row => [
  "warning",
  field,
  "LegacyField",
  `"${value}" is ignored: a hosted cluster is served only through an InfraClusterAttachment with infraRef.name vlan100; set its ${replacement} instead`,
];
const notIPS = (value: string): Row =>
  err(IPS, `"${value}" is neither an IPv4 ClusterIP nor a Service name of the form svc.namespace[.svc.cluster.local]`);
const pending = (message: string): Row => ["pending", IPS, "InternalProxyServicePending", message];
const NO_INTERNAL_CLIENTS: Row = [
  "warning",
  SELECTOR,
  "NoInternalClients",
  `internalProxyService is set, but no namespace may reach the proxy on the pod network; set ${SELECTOR} to the labels of the client namespaces`,
];
const EVERY_NAMESPACE = { internalClients: { namespaceSelector: {} } };

interface ProblemCase {
  readonly name: string;
  readonly infra: Infra;
  readonly problems: readonly Row[];
  /** Whether a model comes out (warnings and pending problems do not stop it; errors do). */
  readonly served: boolean;
}

const cidrCase = (cidr: string, message: string): ProblemCase => ({
  name: `CIDR ${cidr}`,
  infra: undecoded(ON, { ...NET, cidr }),
  problems: [err("spec.networkConfig.cidr", message)],
  served: false,
});
const poolCase = (
  name: string,
  rangeStart: string | undefined,
  rangeEnd: string | undefined,
  problems: Row[],
): ProblemCase => ({
  name,
  infra: undecoded(
    on({
      dhcp: {
        ...(rangeStart === undefined ? {} : { rangeStart }),
        ...(rangeEnd === undefined ? {} : { rangeEnd }),
      },
      proxy: { serverIP: "192.0.2.20" },
    }),
  ),
  problems,
  served: problems.length === 0,
});
const ipsCase = (value: string, problems: Row[], served = true): ProblemCase => ({
  name: `internalProxyService ${JSON.stringify(value)}`,
  infra: undecoded(on({ proxy: { internalProxyService: value, ...EVERY_NAMESPACE } })),
  problems,
  served,
});

const PROBLEM_CASES: readonly ProblemCase[] = [
  // Components default to enabled, and an enabled component needs its address.
  {
    name: "no infraComponents",
    infra: undecoded(undefined),
    problems: [required(`${DHCP}.serverIP`), required(`${DNS}.serverIP`), required(`${PROXY}.serverIP`)],
    served: false,
  },
  {
    name: "infraComponents without any component",
    infra: undecoded({}),
    problems: [required(`${DHCP}.serverIP`), required(`${DNS}.serverIP`), required(`${PROXY}.serverIP`)],
    served: false,
  },
  {
    name: "components present but empty",
    infra: undecoded({ dhcp: {}, dns: {}, proxy: {} }),
    problems: [required(`${DHCP}.serverIP`), required(`${DNS}.serverIP`), required(`${PROXY}.serverIP`)],
    served: false,
  },
  {
    name: "only the DNS component named, without its address",
    infra: undecoded({ dhcp: ON.dhcp, proxy: ON.proxy, dns: { image: "coredns" } }),
    problems: [required(`${DNS}.serverIP`)],
    served: false,
  },
  {
    name: "only the proxy component named, with an empty address",
    infra: undecoded({ dhcp: ON.dhcp, dns: ON.dns, proxy: { serverIP: "" } }),
    problems: [required(`${PROXY}.serverIP`)],
    served: false,
  },
  {
    name: "enabled: true needs the address like the default",
    infra: undecoded({ dhcp: { ...ON.dhcp, enabled: true }, dns: { enabled: true }, proxy: ON.proxy }),
    problems: [required(`${DNS}.serverIP`)],
    served: false,
  },
  {
    name: "a serverIP that is not an IPv4 address",
    infra: undecoded(on({ dhcp: { serverIP: "192.0.2.300" } })),
    problems: [err(`${DHCP}.serverIP`, `"192.0.2.300" is not an IPv4 address`)],
    served: false,
  },
  {
    name: "a serverIP outside the CIDR",
    infra: undecoded(on({ dns: { serverIP: "198.51.100.3" } })),
    problems: [err(`${DNS}.serverIP`, "198.51.100.3 is not a usable host address of 192.0.2.0/24")],
    served: false,
  },
  {
    name: "two components on one address",
    infra: undecoded(on({ proxy: { serverIP: "192.0.2.3" } })),
    problems: [err(`${PROXY}.serverIP`, `192.0.2.3 is already used by ${DNS}.serverIP`)],
    served: false,
  },
  {
    name: "a component on the gateway's address",
    infra: undecoded(on({ dhcp: { serverIP: "192.0.2.1" } })),
    problems: [err(`${DHCP}.serverIP`, "192.0.2.1 is already used by spec.networkConfig.gateway")],
    served: false,
  },
  {
    name: "no gateway on a Secondary network",
    infra: undecoded(ON, { cidr: NET.cidr, networkAttachmentDefinition: "vlan100" }),
    problems: [
      err(
        "spec.networkConfig.gateway",
        "gateway is required for Secondary networks with DHCP or External IPAM; nothing is served",
      ),
    ],
    served: false,
  },

  // The CIDR.
  cidrCase("192.0.2.0/31", "/31 leaves no room for a gateway, three servers and workers; use /30 or larger"),
  cidrCase("192.0.2.0/32", "/32 leaves no room for a gateway, three servers and workers; use /30 or larger"),
  cidrCase("10.0.0.0/15", "10.0.0.0/15 spans 131072 addresses: a VLAN is one broadcast domain, at most /16"),
  cidrCase("0.0.0.0/0", "0.0.0.0/0 spans every IPv4 address: a VLAN is one broadcast domain, at most /16"),
  cidrCase(
    "169.254.10.0/24",
    "169.254.10.0/24 overlaps 169.254.0.0/16, link-local addresses (RFC 3927), which DHCP never gives; a VLAN never does",
  ),

  // The DHCP pool.
  poolCase("rangeStart without rangeEnd", "192.0.2.100", undefined, [
    err(`${DHCP}.rangeEnd`, "rangeStart and rangeEnd must be set together"),
  ]),
  poolCase("rangeEnd without rangeStart", undefined, "192.0.2.199", [
    err(`${DHCP}.rangeStart`, "rangeStart and rangeEnd must be set together"),
  ]),
  poolCase("rangeStart outside the CIDR", "198.51.100.100", "192.0.2.199", [
    err(`${DHCP}.rangeStart`, "198.51.100.100 is not a usable host address of 192.0.2.0/24"),
  ]),
  poolCase("rangeStart on the network address", "192.0.2.0", "192.0.2.199", [
    err(`${DHCP}.rangeStart`, "192.0.2.0 is not a usable host address of 192.0.2.0/24"),
  ]),
  poolCase("rangeStart not an address", "first", "192.0.2.199", [
    err(`${DHCP}.rangeStart`, "first is not a usable host address of 192.0.2.0/24"),
  ]),
  poolCase("rangeEnd on the broadcast address", "192.0.2.100", "192.0.2.255", [
    err(`${DHCP}.rangeEnd`, "192.0.2.255 is not a usable host address of 192.0.2.0/24"),
  ]),
  poolCase("rangeEnd not an address", "192.0.2.100", "last", [
    err(`${DHCP}.rangeEnd`, "last is not a usable host address of 192.0.2.0/24"),
  ]),
  poolCase("rangeEnd before rangeStart", "192.0.2.200", "192.0.2.100", [
    err(`${DHCP}.rangeEnd`, "rangeEnd 192.0.2.100 comes before rangeStart 192.0.2.200"),
  ]),
  poolCase("a pool ending on the proxy's address", "192.0.2.10", "192.0.2.20", [
    err(`${DHCP}.rangeStart`, `pool 192.0.2.10-192.0.2.20 contains 192.0.2.20 (${PROXY}.serverIP)`),
  ]),
  poolCase("a pool starting on the DNS server's address", "192.0.2.3", "192.0.2.9", [
    err(`${DHCP}.rangeStart`, `pool 192.0.2.3-192.0.2.9 contains 192.0.2.3 (${DNS}.serverIP)`),
  ]),
  poolCase("a pool over the gateway and two servers, one problem each", "192.0.2.1", "192.0.2.3", [
    err(`${DHCP}.rangeStart`, "pool 192.0.2.1-192.0.2.3 contains 192.0.2.1 (spec.networkConfig.gateway)"),
    err(`${DHCP}.rangeStart`, `pool 192.0.2.1-192.0.2.3 contains 192.0.2.2 (${DHCP}.serverIP)`),
    err(`${DHCP}.rangeStart`, `pool 192.0.2.1-192.0.2.3 contains 192.0.2.3 (${DNS}.serverIP)`),
  ]),
  poolCase("a pool ending just before the proxy's address", "192.0.2.10", "192.0.2.19", []),
  {
    name: "DHCP disabled: its pool, lease and address are not checked",
    infra: undecoded(on({ dhcp: { enabled: false, serverIP: "bad", rangeStart: "192.0.2.3", leaseTime: "59s" } })),
    problems: [],
    served: true,
  },

  // The lease.
  {
    name: "leaseTime under a minute",
    infra: undecoded(on({ dhcp: { leaseTime: "59s" } })),
    problems: [err(`${DHCP}.leaseTime`, `"59s" is not a duration of at least 1m`)],
    served: false,
  },
  {
    name: "leaseTime not a duration",
    infra: undecoded(on({ dhcp: { leaseTime: "a day" } })),
    problems: [err(`${DHCP}.leaseTime`, `"a day" is not a duration of at least 1m`)],
    served: false,
  },

  // Legacy fields: accepted, ignored, each with the field that replaces it.
  {
    name: "legacy fields set",
    infra: undecoded(
      on({
        dns: { clusterName: "alpha", baseDomain: "example.com" },
        proxy: { controlPlaneNamespace: "clusters-alpha", apiServerService: "kube-apiserver" },
      }),
    ),
    problems: [
      legacy(`${DNS}.clusterName`, "alpha", "spec.dns.clusterName"),
      legacy(`${DNS}.baseDomain`, "example.com", "spec.dns.baseDomain"),
      legacy(`${PROXY}.controlPlaneNamespace`, "clusters-alpha", "spec.controlPlaneNamespace"),
      legacy(`${PROXY}.apiServerService`, "kube-apiserver", "spec.apiServerService"),
    ],
    served: true,
  },
  {
    name: "legacy fields empty",
    infra: undecoded(
      on({
        dns: { clusterName: "", baseDomain: "" },
        proxy: { controlPlaneNamespace: "", apiServerService: "", externalService: { enabled: false } },
      }),
    ),
    problems: [],
    served: true,
  },
  {
    name: "legacy proxy.externalService enabled",
    infra: undecoded(on({ proxy: { externalService: { enabled: true } } })),
    problems: [
      [
        "warning",
        `${PROXY}.externalService`,
        "LegacyField",
        "deprecated: the Service vlan100-proxy-external is still made, but the original moved the public proxy Service to each InfraClusterAttachment; set its spec.externalService instead (<attachment>-proxy-external)",
      ],
    ],
    served: true,
  },
  {
    name: "proxy.externalService without enabled",
    infra: undecoded(on({ proxy: { externalService: {} } })),
    problems: [],
    served: true,
  },

  // Upstream resolvers.
  {
    name: "resolv.conf mixed with explicit resolvers",
    infra: undecoded(ON, { ...NET, dnsServers: ["198.51.100.53", "resolv.conf", "203.0.113.53"] }),
    problems: [
      err(
        "spec.networkConfig.dnsServers",
        `"resolv.conf" cannot be mixed with explicit resolvers (198.51.100.53, 203.0.113.53)`,
      ),
    ],
    served: false,
  },
  {
    name: "a dnsServers entry that is neither",
    infra: undecoded(ON, { ...NET, dnsServers: ["198.51.100.53", "dns.example.com"] }),
    problems: [
      err("spec.networkConfig.dnsServers[1]", `"dns.example.com" is neither an IPv4 address nor "resolv.conf"`),
    ],
    served: false,
  },

  // internalProxyService.
  ipsCase(
    "192.0.2.50",
    [err(IPS, "192.0.2.50 is inside the VLAN 192.0.2.0/24; the default view must never publish VLAN addresses")],
    false,
  ),
  ipsCase("proxy.svc.cluster.local", [notIPS("proxy.svc.cluster.local")], false),
  ipsCase("Bad_Name", [notIPS("Bad_Name")], false),
  ipsCase("PROXY", [notIPS("PROXY")], false),
  ipsCase(".svc", [notIPS(".svc")], false),
  ipsCase("a.b.c.d.e", [notIPS("a.b.c.d.e")], false),
  ipsCase("-proxy", [notIPS("-proxy")], false),
  ipsCase("proxy-", [notIPS("proxy-")], false),
  ipsCase("proxy.edge-", [notIPS("proxy.edge-")], false),
  ipsCase("proxy.edge_", [notIPS("proxy.edge_")], false),
  ipsCase("proxy.edge/svc", [notIPS("proxy.edge/svc")], false),
  ipsCase("proxy.edge.svc.cluster", [notIPS("proxy.edge.svc.cluster")], false),
  ipsCase("proxy.edge.cluster.local", [notIPS("proxy.edge.cluster.local")], false),
  ipsCase("proxy.edge.svc.cluster.local.x", [notIPS("proxy.edge.svc.cluster.local.x")], false),
  ipsCase("missing", [pending("Service infra/missing not found; the default DNS view stays empty until it exists")]),
  // As a pod's DNS search path reads it: svc.ns with the namespace "svc".
  ipsCase("proxy.svc", [pending("Service svc/proxy not found; the default DNS view stays empty until it exists")]),
  ipsCase("proxy.elsewhere", [
    pending("Service elsewhere/proxy not found; the default DNS view stays empty until it exists"),
  ]),
  ...["headless", "unallocated", "noip", "nospec", "six"].map((name) =>
    ipsCase(name, [
      pending(
        `Service infra/${name} has no ClusterIP (headless or not yet allocated); the default DNS view stays empty`,
      ),
    ]),
  ),
  ipsCase(
    "onvlan",
    [
      err(
        IPS,
        "Service infra/onvlan has ClusterIP 192.0.2.60 inside the VLAN; the default view must never publish VLAN addresses",
      ),
    ],
    false,
  ),
  {
    name: "internalProxyService with the proxy disabled is not looked at",
    infra: undecoded({ ...ON, proxy: { enabled: false, internalProxyService: "Bad_Name" } }),
    problems: [],
    served: true,
  },

  // internalClients.
  {
    name: "internalProxyService without internalClients",
    infra: undecoded(on({ proxy: { internalProxyService: "172.30.0.10" } })),
    problems: [NO_INTERNAL_CLIENTS],
    served: true,
  },
  {
    name: "internalProxyService with internalClients but no namespaceSelector",
    infra: undecoded(on({ proxy: { internalProxyService: "172.30.0.10", internalClients: {} } })),
    problems: [NO_INTERNAL_CLIENTS],
    served: true,
  },
  {
    name: "internalProxyService empty and no internalClients",
    infra: undecoded(on({ proxy: { internalProxyService: "" } })),
    problems: [],
    served: true,
  },
  {
    name: "an invalid namespaceSelector, each error on its own field",
    infra: undecoded(
      on({
        proxy: {
          internalClients: {
            namespaceSelector: {
              matchLabels: { "bad key!": "true" },
              matchExpressions: [{ key: "tier", operator: "In" }],
            },
          },
        },
      }),
    ),
    problems: [
      err(
        `${SELECTOR}.matchLabels.bad key!`,
        `"bad key!": the name must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`,
      ),
      err(`${SELECTOR}.matchExpressions[0].values`, "operator In needs at least one value"),
    ],
    served: false,
  },
  {
    name: "an invalid namespaceSelector and internalProxyService with the proxy disabled",
    infra: undecoded({
      ...ON,
      proxy: {
        enabled: false,
        internalProxyService: "172.30.0.10",
        internalClients: { namespaceSelector: { matchLabels: { "bad key!": "true" } } },
      },
    }),
    problems: [],
    served: true,
  },
];

describe("resolveInfra: problems", () => {
  it.each(PROBLEM_CASES)("$name", ({ infra, problems, served }) => {
    const result = run(infra);
    expect(result.problems).toEqual(problems);
    expect(result.model !== undefined).toBe(served);
  });
});

interface ModelCase {
  readonly name: string;
  readonly infra: Infra;
  readonly model: Partial<ResolvedInfra>;
}

/** The DHCP model of ON with nothing else set: the schema's defaults, applied by the model. */
const DHCP_DEFAULTS = {
  serverIP: "192.0.2.2",
  pool: undefined,
  leaseTime: "1h",
  leaseSeconds: 3600,
  unknownClients: "deny",
  interface: "net1",
  image: undefined,
} as const;
const internalIP = (value: string, ip: string): ModelCase => ({
  name: `internalProxyService ${value} → ${ip}`,
  infra: undecoded(on({ proxy: { internalProxyService: value, ...EVERY_NAMESPACE } })),
  model: { proxy: { serverIP: "192.0.2.4", internalIP: ip, proxyImage: undefined, managerImage: undefined } },
});

const MODEL_CASES: readonly ModelCase[] = [
  {
    name: "every component with only its address: the defaults",
    infra: undecoded(ON),
    model: {
      cidrText: "192.0.2.0/24",
      gateway: "192.0.2.1",
      upstreams: "resolv.conf",
      dhcp: DHCP_DEFAULTS,
      dns: { serverIP: "192.0.2.3", image: undefined },
      proxy: { serverIP: "192.0.2.4", internalIP: undefined, proxyImage: undefined, managerImage: undefined },
    },
  },
  {
    name: "every field set",
    infra: undecoded(
      {
        dhcp: {
          serverIP: "192.0.2.2",
          rangeStart: "192.0.2.100",
          rangeEnd: "192.0.2.199",
          leaseTime: "1h30m",
          unknownClients: "pool",
          interface: "eth1",
          image: "kea:2",
        },
        dns: { serverIP: "192.0.2.3", image: "coredns:1" },
        proxy: { serverIP: "192.0.2.4", proxyImage: "envoy:1", managerImage: "oooi:1" },
      },
      { ...NET, dnsServers: ["198.51.100.53"] },
    ),
    model: {
      upstreams: ["198.51.100.53"],
      dhcp: {
        serverIP: "192.0.2.2",
        pool: { start: 0xc0000264, end: 0xc00002c7 },
        leaseTime: "1h30m",
        leaseSeconds: 5400,
        unknownClients: "pool",
        interface: "eth1",
        image: "kea:2",
      },
      dns: { serverIP: "192.0.2.3", image: "coredns:1" },
      proxy: { serverIP: "192.0.2.4", internalIP: undefined, proxyImage: "envoy:1", managerImage: "oooi:1" },
    },
  },
  {
    name: "leaseTime of exactly one minute",
    infra: undecoded(on({ dhcp: { leaseTime: "1m" } })),
    model: { dhcp: { ...DHCP_DEFAULTS, leaseTime: "1m", leaseSeconds: 60 } },
  },
  {
    name: "a one-address pool",
    infra: undecoded(on({ dhcp: { rangeStart: "192.0.2.9", rangeEnd: "192.0.2.9" } })),
    model: { dhcp: { ...DHCP_DEFAULTS, pool: { start: 0xc0000209, end: 0xc0000209 } } },
  },
  {
    name: "every component disabled: no address needed, none resolved",
    infra: undecoded(OFF),
    model: { gateway: "192.0.2.1", dhcp: undefined, dns: undefined, proxy: undefined },
  },
  {
    name: "a /30: the gateway and the DNS server on its two hosts",
    infra: undecoded({ ...OFF, dns: { serverIP: "192.0.2.2" } }, { ...NET, cidr: "192.0.2.0/30" }),
    model: { cidrText: "192.0.2.0/30", dhcp: undefined, dns: { serverIP: "192.0.2.2", image: undefined } },
  },
  {
    name: "a /16, the widest VLAN",
    infra: undecoded(ON, { ...NET, cidr: "192.0.0.0/16" }),
    model: { cidrText: "192.0.0.0/16", dns: { serverIP: "192.0.2.3", image: undefined } },
  },
  {
    name: "dnsServers: duplicates kept once, in order",
    infra: undecoded(ON, { ...NET, dnsServers: ["203.0.113.53", "198.51.100.53", "203.0.113.53"] }),
    model: { upstreams: ["203.0.113.53", "198.51.100.53"] },
  },
  {
    name: "dnsServers: resolv.conf alone",
    infra: undecoded(ON, { ...NET, dnsServers: ["resolv.conf"] }),
    model: { upstreams: "resolv.conf" },
  },
  internalIP("172.30.0.10", "172.30.0.10"),
  internalIP("172.30.0.10.", "172.30.0.10"),
  internalIP("proxy", "172.30.0.10"),
  internalIP("p", "172.30.0.11"),
  internalIP("my-proxy", "172.30.0.12"),
  internalIP("proxy.edge", "172.30.1.10"),
  internalIP("proxy.e", "172.30.2.10"),
  internalIP("proxy2.edge2", "172.30.3.10"),
  internalIP("proxy.edge.svc", "172.30.1.10"),
  internalIP("proxy.edge.svc.cluster.local", "172.30.1.10"),
  internalIP("proxy.edge.svc.cluster.local.", "172.30.1.10"),
];

describe("resolveInfra: the model", () => {
  it.each(MODEL_CASES)("$name", ({ infra, model }) => {
    const result = run(infra);
    expect(result.problems).toEqual([]);
    expect(result.model).toMatchObject(model);
  });
});

const overlap = (block: string, what: string): string => `overlaps ${block}, ${what}; a VLAN never does`;
const THIS_NETWORK = overlap("0.0.0.0/8", '"this network" (RFC 1122), which no host has');
const LOOPBACK = overlap("127.0.0.0/24", "the loopback addresses this host's own clients use (127.0.0.1, 127.0.0.53)");
const LINK_LOCAL = overlap("169.254.0.0/16", "link-local addresses (RFC 3927), which DHCP never gives");
const MULTICAST = overlap("224.0.0.0/4", "multicast addresses");
const RESERVED = overlap("240.0.0.0/4", "reserved addresses and the broadcast address");

describe("vlanCidrError", () => {
  // Each refused block at its first and last address, and the addresses just outside it. The /32
  // rows pin the inclusive ends exactly (resolveInfra refuses /31 and /32 before asking).
  it.each<[string, string | undefined]>([
    ["10.0.0.0/16", undefined],
    ["10.0.0.0/15", "spans 131072 addresses: a VLAN is one broadcast domain, at most /16"],
    ["128.0.0.0/1", "spans 2147483648 addresses: a VLAN is one broadcast domain, at most /16"],
    ["0.0.0.0/0", "spans every IPv4 address: a VLAN is one broadcast domain, at most /16"],
    ["0.0.0.0/32", THIS_NETWORK],
    ["0.255.255.255/32", THIS_NETWORK],
    ["0.255.255.252/30", THIS_NETWORK],
    ["1.0.0.0/32", undefined],
    ["1.0.0.0/30", undefined],
    ["126.255.255.255/32", undefined],
    ["126.255.255.252/30", undefined],
    ["127.0.0.0/32", LOOPBACK],
    ["127.0.0.0/30", LOOPBACK],
    ["127.0.0.255/32", LOOPBACK],
    ["127.0.0.252/30", LOOPBACK],
    ["127.0.1.0/32", undefined],
    ["127.0.1.0/30", undefined],
    ["169.253.255.255/32", undefined],
    ["169.254.0.0/32", LINK_LOCAL],
    ["169.254.255.255/32", LINK_LOCAL],
    ["169.255.0.0/32", undefined],
    ["223.255.255.255/32", undefined],
    ["223.255.255.252/30", undefined],
    ["224.0.0.0/32", MULTICAST],
    ["239.255.255.255/32", MULTICAST],
    ["240.0.0.0/32", RESERVED],
    ["255.255.255.255/32", RESERVED],
    ["255.255.0.0/16", RESERVED],
  ])("%s → %s", (text, error) => {
    const cidr = parseCidr(text);
    if (cidr === undefined) throw new Error(`test CIDR ${text} does not parse`);
    expect(vlanCidrError(cidr)).toBe(error);
  });
});
