// spec.appsIngress validation and status.appsIngressStatus → routes: a row per rule
// (docs/reference.md#apps-ingress), the field named.
import { describe, expect, it } from "vitest";
import type { InfraClusterAttachment, InfraClusterAttachmentSpec, InfraSpec } from "../../src/api/schema.js";
import { appsIngressSettings, rangeProblem, resolveAppsIngressConfig } from "../../src/model/apps-ingress.js";
import { dnsName } from "../../src/model/names.js";
import { build } from "../../src/model/build.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

const INFRA: InfraSpec = {
  networkConfig: { cidr: "192.0.2.0/24", gateway: "192.0.2.1", networkAttachmentDefinition: "vlan100" },
  infraComponents: {
    dhcp: { serverIP: "192.0.2.2", rangeStart: "192.0.2.100", rangeEnd: "192.0.2.199" },
    dns: { serverIP: "192.0.2.3" },
    proxy: { serverIP: "192.0.2.4" },
  },
};

function spec(metallb: Record<string, unknown> | undefined): InfraClusterAttachmentSpec {
  return {
    infraRef: { name: "tenant" },
    hostedClusterRef: { name: "alpha" },
    dns: { clusterName: "alpha", baseDomain: "example.com" },
    appsIngress: { enabled: true, ...(metallb === undefined ? {} : { metallb }) },
  };
}

const rows: { name: string; metallb: Record<string, unknown> | undefined; field?: string; message?: string }[] = [
  {
    name: "pool and range inside the CIDR, clear of everything",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.200-192.0.2.209" },
  },
  { name: "a CIDR range", metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.240/28" } },
  {
    name: "no metallb at all",
    metallb: undefined,
    field: "spec.appsIngress.metallb.addressPoolName",
    message: "no MetalLB address pool name",
  },
  {
    name: "empty pool name",
    metallb: { addressPoolName: " ", ipAddressPoolRange: "192.0.2.200-192.0.2.209" },
    field: "spec.appsIngress.metallb.addressPoolName",
    message: "no MetalLB address pool",
  },
  {
    name: "no range",
    metallb: { addressPoolName: "p" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "no address range for pool p",
  },
  {
    name: "a typo'd range",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.200-192.0.2" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "neither",
  },
  {
    name: "a reversed range",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.209-192.0.2.200" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "neither",
  },
  {
    name: "outside the Infra CIDR",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "198.51.100.10-198.51.100.20" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "not inside the Infra's network 192.0.2.0/24",
  },
  {
    name: "straddling the CIDR's end",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.250-192.0.3.5" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "not inside",
  },
  {
    name: "overlapping the DHCP pool",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.190-192.0.2.209" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "overlaps the DHCP pool 192.0.2.100-192.0.2.199",
  },
  {
    name: "containing the gateway",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.0/30" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "contains the gateway (192.0.2.1)",
  },
  {
    name: "containing the proxy",
    metallb: { addressPoolName: "p", ipAddressPoolRange: "192.0.2.4-192.0.2.9" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "contains the proxy (192.0.2.4)",
  },
  { name: "existing MetalLB: nothing required", metallb: { installOperator: false } },
  {
    name: "existing MetalLB: a named range is still checked",
    metallb: { installOperator: false, addressPoolName: "p", ipAddressPoolRange: "192.0.2.3-192.0.2.3" },
    field: "spec.appsIngress.metallb.ipAddressPoolRange",
    message: "contains the DNS server",
  },
];

describe("resolveAppsIngressConfig", () => {
  it.each(rows)("$name", ({ metallb, field, message }) => {
    const r = resolveAppsIngressConfig(spec(metallb), INFRA);
    if (field === undefined) {
      expect(r).toMatchObject({ ok: true });
      return;
    }
    expect(r).toMatchObject({ ok: false, field });
    expect(r.ok ? "" : r.message).toContain(message);
  });

  it("a DHCP pool that is disabled does not reserve its range", () => {
    const infra: InfraSpec = {
      ...INFRA,
      infraComponents: { ...INFRA.infraComponents, dhcp: { ...INFRA.infraComponents?.dhcp, enabled: false } },
    };
    const r = resolveAppsIngressConfig(
      spec({ addressPoolName: "p", ipAddressPoolRange: "192.0.2.150-192.0.2.160" }),
      infra,
    );
    expect(r.ok).toBe(true);
  });

  it("defaults: OLM channel/source, advertise-<pool>, openshift-ingress/oooi-ingress, ports 80/443", () => {
    expect(appsIngressSettings(spec({ addressPoolName: "p", ipAddressPoolRange: "192.0.2.200/29" }))).toEqual({
      installMetalLB: true,
      channel: "stable",
      source: "redhat-operators",
      pool: "p",
      range: "192.0.2.200/29",
      l2Advertisement: "advertise-p",
      service: { name: "oooi-ingress", namespace: "openshift-ingress", labels: {}, annotations: {} },
      ports: { http: 80, https: 443 },
    });
  });

  it("rangeProblem without an Infra only checks the syntax", () => {
    expect(rangeProblem("10.0.0.1-10.0.0.2", undefined)).toBeUndefined();
    expect(rangeProblem("nonsense", undefined)).toContain("neither");
  });
});

describe("rangeProblem: the whole message for each rule, at the edges", () => {
  const noComponents: InfraSpec = { networkConfig: INFRA.networkConfig };
  const noDhcp: InfraSpec = { ...INFRA, infraComponents: { dns: { serverIP: "192.0.2.3" } } };
  const proxyOnly: InfraSpec = { ...INFRA, infraComponents: { proxy: { serverIP: "192.0.2.4" } } };
  const gatewayAbove: InfraSpec = { ...INFRA, networkConfig: { ...INFRA.networkConfig, gateway: "192.0.2.254" } };
  it.each<[string, string, InfraSpec, string | undefined]>([
    [
      "ending on the DHCP pool's first address",
      "192.0.2.90-192.0.2.100",
      INFRA,
      "range 192.0.2.90-192.0.2.100 overlaps the DHCP pool 192.0.2.100-192.0.2.199",
    ],
    [
      "starting on its last address",
      "192.0.2.199-192.0.2.210",
      INFRA,
      "range 192.0.2.199-192.0.2.210 overlaps the DHCP pool 192.0.2.100-192.0.2.199",
    ],
    ["just past the pool", "192.0.2.200-192.0.2.209", INFRA, undefined],
    [
      "on the DHCP server",
      "192.0.2.2-192.0.2.2",
      INFRA,
      "range 192.0.2.2-192.0.2.2 contains the DHCP server (192.0.2.2)",
    ],
    ["on the DNS server", "192.0.2.3/32", INFRA, "range 192.0.2.3-192.0.2.3 contains the DNS server (192.0.2.3)"],
    ["above every component", "192.0.2.5-192.0.2.99", INFRA, undefined],
    [
      "outside the network",
      "198.51.100.1-198.51.100.2",
      INFRA,
      "range 198.51.100.1-198.51.100.2 is not inside the Infra's network 192.0.2.0/24",
    ],
    ["an Infra without components: only the gateway counts", "192.0.2.2-192.0.2.150", noComponents, undefined],
    [
      "an Infra without components, on the gateway",
      "192.0.2.0/30",
      noComponents,
      "range 192.0.2.0-192.0.2.3 contains the gateway (192.0.2.1)",
    ],
    ["an Infra without a DHCP component", "192.0.2.100-192.0.2.110", noDhcp, undefined],
    [
      "an Infra with only a proxy",
      "192.0.2.3-192.0.2.4",
      proxyOnly,
      "range 192.0.2.3-192.0.2.4 contains the proxy (192.0.2.4)",
    ],
    ["below a gateway at the top of the network", "192.0.2.5-192.0.2.99", gatewayAbove, undefined],
  ])("%s", (_, range, infra, problem) => {
    expect(rangeProblem(range, infra)).toBe(problem);
  });
});

// status.appsIngressStatus (written by the operator's loop, or by hand in serve's manifests) →
// *.apps routes, the wildcard record and the problem that says why (docs/reference.md#apps-ingress).
type AppsStatus = NonNullable<NonNullable<InfraClusterAttachment["status"]>["appsIngressStatus"]>;

interface StatusRow {
  readonly name: string;
  readonly enabled: boolean | undefined;
  readonly status: AppsStatus | undefined;
  /** The apps backends' upstreams: "https → <upstream>" and "http → <upstream>". */
  readonly routes: readonly string[];
  /** The upstreams' kinds and where they point. */
  readonly upstreams: readonly string[];
  readonly record: string | undefined;
  /** "<severity> <field> <reason>" of the attachment's apps problems, with a message fragment. */
  readonly problems: readonly [string, string][];
}

const APPS = "*.apps.alpha.example.com";
const STATUS_ROWS: readonly StatusRow[] = [
  {
    name: "Ready with an IP: routes to the VIP over EDS, the wildcard record, nothing to say",
    enabled: true,
    status: { phase: "Ready", externalIP: "192.0.2.200" },
    routes: ["apps-http → vip/192.0.2.200:80", "apps-https → vip/192.0.2.200:443"],
    upstreams: ["address vip/192.0.2.200:443 192.0.2.200:443", "address vip/192.0.2.200:80 192.0.2.200:80"],
    record: "192.0.2.200",
    problems: [],
  },
  {
    name: "Ready with only a hostname: routes to it by DNS (LOGICAL_DNS), no record, the reason said",
    enabled: true,
    status: { phase: "Ready", externalHostname: "LB-1.Example.NET." },
    routes: ["apps-http → dns/lb-1.example.net:80", "apps-https → dns/lb-1.example.net:443"],
    upstreams: ["dns dns/lb-1.example.net:443 lb-1.example.net:443", "dns dns/lb-1.example.net:80 lb-1.example.net:80"],
    record: undefined,
    problems: [
      [
        "warning status.appsIngressStatus.externalHostname AppsIngressByHostname",
        `only the hostname lb-1.example.net; ${APPS} is proxied to it with Envoy resolving the name (LOGICAL_DNS) and gets no DNS record`,
      ],
    ],
  },
  {
    name: "an IP and a hostname: the IP wins, as ingress[0] lists it",
    enabled: true,
    status: { phase: "Ready", externalIP: "192.0.2.201", externalHostname: "lb.example.net" },
    routes: ["apps-http → vip/192.0.2.201:80", "apps-https → vip/192.0.2.201:443"],
    upstreams: ["address vip/192.0.2.201:443 192.0.2.201:443", "address vip/192.0.2.201:80 192.0.2.201:80"],
    record: "192.0.2.201",
    problems: [],
  },
  {
    name: "a hostname that is not a DNS name (underscore): no route, the field named",
    enabled: true,
    status: { phase: "Ready", externalHostname: "lb_1.example.net" },
    routes: [],
    upstreams: [],
    record: undefined,
    problems: [
      [
        "warning status.appsIngressStatus.externalHostname AppsIngressWithoutIP",
        'externalHostname "lb_1.example.net" is not a DNS name',
      ],
    ],
  },
  {
    name: "a typo'd IP: no route, the field named (the hostname beside it is not guessed at)",
    enabled: true,
    status: { phase: "Ready", externalIP: "192.0.2.300", externalHostname: "lb.example.net" },
    routes: [],
    upstreams: [],
    record: undefined,
    problems: [
      ["warning status.appsIngressStatus.externalIP AppsIngressWithoutIP", 'externalIP "192.0.2.300" is not an IPv4'],
    ],
  },
  {
    name: "Ready with no address at all",
    enabled: true,
    status: { phase: "Ready" },
    routes: [],
    upstreams: [],
    record: undefined,
    problems: [["warning status.appsIngressStatus AppsIngressWithoutIP", "apps ingress reports no address"]],
  },
  {
    name: "Degraded keeps the last-good hostname's routes (a hosted API away does not take *.apps down)",
    enabled: true,
    status: {
      phase: "Degraded",
      reason: "HostedClusterAccessFailed",
      message: "x",
      externalHostname: "lb.example.net",
    },
    routes: ["apps-http → dns/lb.example.net:80", "apps-https → dns/lb.example.net:443"],
    upstreams: ["dns dns/lb.example.net:443 lb.example.net:443", "dns dns/lb.example.net:80 lb.example.net:80"],
    record: undefined,
    problems: [["pending status.appsIngressStatus HostedClusterAccessFailed", "x"]],
  },
  {
    name: "Ready while spec.appsIngress.enabled is unset: ignored, and said so on the spec field",
    enabled: undefined,
    status: { phase: "Ready", externalIP: "192.0.2.200" },
    routes: [],
    upstreams: [],
    record: undefined,
    problems: [
      [
        "warning spec.appsIngress.enabled AppsIngressStatusIgnored",
        `status.appsIngressStatus.phase is Ready (192.0.2.200) but spec.appsIngress.enabled is not true; ${APPS} gets no proxy route and no DNS record`,
      ],
    ],
  },
  {
    name: "Ready by hostname while enabled: false: ignored, said so",
    enabled: false,
    status: { phase: "Ready", externalHostname: "lb.example.net" },
    routes: [],
    upstreams: [],
    record: undefined,
    problems: [
      ["warning spec.appsIngress.enabled AppsIngressStatusIgnored", "is Ready (lb.example.net) but spec.appsIngress"],
    ],
  },
  {
    name: "Pending while disabled: nothing to say (only a Ready status is a slip)",
    enabled: false,
    status: { phase: "Pending", reason: "WaitingForExternalIP" },
    routes: [],
    upstreams: [],
    record: undefined,
    problems: [],
  },
];

describe("apps ingress status → routes, record and problems", () => {
  it.each(STATUS_ROWS)("$name", ({ enabled, status, routes, upstreams, record, problems }) => {
    const r = build(
      combine(
        {
          infras: [infra()],
          attachments: [
            attachment("alpha", {
              spec: {
                appsIngress: {
                  ...(enabled === undefined ? {} : { enabled }),
                  metallb: { installOperator: false },
                },
              },
              ...(status === undefined ? {} : { status: { appsIngressStatus: status } }),
            }),
          ],
        },
        hostedCluster("alpha", 1, []),
      ),
    );
    const proxy = r.topologies[0]?.proxy;
    const apps = proxy?.backends.filter((b) => b.kind.startsWith("apps-")) ?? [];
    expect(apps.map((b) => `${b.kind} → ${b.upstream}`)).toEqual(routes);
    const used = new Set(apps.map((b) => b.upstream));
    expect(
      proxy?.upstreams
        .filter((u) => used.has(u.name))
        .map((u) =>
          u.kind === "dns"
            ? `dns ${u.name} ${u.hostname}:${u.port}`
            : `address ${u.name} ${u.endpoints.map((e) => `${e.address}:${e.port}`).join()}`,
        ),
    ).toEqual(upstreams);
    const records = r.topologies[0]?.dns?.views[0].zones.flatMap((z) => z.records) ?? [];
    expect(records.find((x) => x.name === APPS)?.address).toEqual(record);
    const mine = r.problems.filter(
      (p) => p.object.name === "alpha" && (p.field.includes("appsIngress") || p.reason.startsWith("AppsIngress")),
    );
    expect(mine.map((p) => `${p.severity} ${p.field} ${p.reason}`)).toEqual(problems.map(([head]) => head));
    mine.forEach((p, i) => {
      expect(p.message).toContain(problems[i]?.[1]);
    });
  });
});

describe("dnsName", () => {
  it.each([
    ["lb.example.net", "lb.example.net"],
    ["LB.Example.NET.", "lb.example.net"],
    ["a-b.c0", "a-b.c0"],
    ["-lb.example.net", undefined],
    ["lb-.example.net", undefined],
    ["lb..example.net", undefined],
    ["*.example.net", undefined],
    ["192.0.2.1:80", undefined],
    ["", undefined],
    [`${"a".repeat(64)}.net`, undefined],
    [Array.from({ length: 64 }, () => "abc").join("."), undefined],
    // 253 characters is the longest name (RFC 1035 §2.3.4 without the root's length octets); 254 is not.
    [
      `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`,
      `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`,
    ],
    [`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`, undefined],
  ])("%j → %j", (text, expected) => {
    expect(dnsName(text)).toEqual(expected);
  });
});
