// What the model refuses even when an object skipped decoding (a cluster whose CRDs predate the
// rules, a caller building ClusterState itself): names (issue 25 row 7), VLAN CIDRs (row 16) and
// domains (row 17). Objects in → problems out, each naming its field.
import { describe, expect, it } from "vitest";
import type { Infra, InfraClusterAttachment } from "../../src/api/schema.js";
import { DOMAIN_MAX_LENGTH } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import { formatIPv4, parseCidr } from "../../src/model/ipv4.js";
import type { ClusterState } from "../../src/model/types.js";
import { attachment, combine, hostedCluster, infra } from "../support/fixtures.js";

const renamed = <T extends Infra | InfraClusterAttachment>(o: T, meta: Partial<T["metadata"]>): T => ({
  ...o,
  metadata: { ...o.metadata, ...meta },
});

/** An Infra on `cidr`: gateway, DHCP, DNS and proxy on its first four hosts, the pool further on. */
function infraOn(cidr: string): Infra {
  const c = parseCidr(cidr);
  if (c === undefined) throw new Error(cidr);
  const at = (n: number): string => formatIPv4(c.network + n);
  const base = infra("vlan100");
  return {
    ...base,
    spec: {
      ...base.spec,
      networkConfig: { ...base.spec.networkConfig, cidr, gateway: at(1) },
      infraComponents: {
        ...base.spec.infraComponents,
        dhcp: { ...base.spec.infraComponents?.dhcp, serverIP: at(2), rangeStart: at(100), rangeEnd: at(199) },
        dns: { ...base.spec.infraComponents?.dns, serverIP: at(3) },
        proxy: { ...base.spec.infraComponents?.proxy, serverIP: at(4), internalProxyService: "172.30.0.10" },
      },
    },
  };
}

function withDns(a: InfraClusterAttachment, dns: { clusterName: string; baseDomain: string }): InfraClusterAttachment {
  return { ...a, spec: { ...a.spec, dns } };
}

const alpha = hostedCluster("alpha", 1, ["192.0.2.10"]);
const long = (n: number, c = "a"): string => c.repeat(n);

interface Row {
  readonly name: string;
  readonly state: ClusterState;
  /** "Kind/name field reason" of every error; [] = accepted. */
  readonly errors: readonly string[];
  /** Whether the Infra is served (has a topology). */
  readonly served: boolean;
}

const infraNamed = (name: string): ClusterState => combine({ infras: [renamed(infra(), { name })] });
const cidrRow = (cidr: string, refused: boolean): Row => ({
  name: `CIDR ${cidr} ${refused ? "refused" : "accepted"}`,
  state: combine({ infras: [infraOn(cidr)] }),
  errors: refused ? ["Infra/vlan100 spec.networkConfig.cidr InvalidSpec"] : [],
  served: !refused,
});
const domainRow = (name: string, dns: { clusterName: string; baseDomain: string }, field: string): Row => ({
  name,
  state: combine({ infras: [infra()], attachments: [withDns(attachment("alpha"), dns)] }, alpha),
  errors: [`InfraClusterAttachment/alpha ${field} InvalidSpec`],
  served: true,
});

const rows: Row[] = [
  ...[long(300), "../../etc", "a/b", "Bad_Name", "<img src=x onerror=alert(1)>", "vlan.100", long(49)].map(
    (name): Row => ({
      name: `Infra named ${name.length > 40 ? `with ${String(name.length)} characters` : name}`,
      state: infraNamed(name),
      errors: [`Infra/${name} metadata.name InvalidName`],
      served: false,
    }),
  ),
  {
    name: "Infra in namespace ../..",
    state: combine({ infras: [renamed(infra(), { namespace: "../.." })] }),
    errors: ["Infra/vlan100 metadata.namespace InvalidName"],
    served: false,
  },
  {
    name: "attachment named Bad_Name: not served, its Infra is",
    state: combine({ infras: [infra()], attachments: [renamed(attachment("alpha"), { name: "Bad_Name" })] }, alpha),
    errors: ["InfraClusterAttachment/Bad_Name metadata.name InvalidName"],
    served: true,
  },
  cidrRow("0.0.0.0/0", true),
  cidrRow("10.0.0.0/8", true),
  cidrRow("10.0.0.0/15", true),
  cidrRow("10.0.0.0/16", false),
  cidrRow("127.0.0.0/16", true),
  cidrRow("127.0.0.0/24", true),
  cidrRow("127.0.8.0/24", false),
  cidrRow("0.0.0.0/24", true),
  cidrRow("169.254.0.0/24", true),
  cidrRow("224.0.0.0/24", true),
  cidrRow("255.255.255.0/24", true),
  domainRow(
    "clusterName of 70 characters",
    { clusterName: long(70), baseDomain: "example.com" },
    "spec.dns.clusterName",
  ),
  domainRow(
    "baseDomain with a label of 70 characters",
    { clusterName: "alpha", baseDomain: `${long(70)}.com` },
    "spec.dns.baseDomain",
  ),
  domainRow(
    "baseDomain of 300 characters",
    { clusterName: "alpha", baseDomain: `${[long(63), long(63), long(63), long(63), long(40)].join(".")}.com` },
    "spec.dns.baseDomain",
  ),
  domainRow(
    `domain of ${String(DOMAIN_MAX_LENGTH + 1)} characters (konnectivity.<domain> would pass 253)`,
    {
      clusterName: "alpha",
      baseDomain: `${[long(63), long(63), long(63)].join(".")}.${long(DOMAIN_MAX_LENGTH + 1 - 198)}`,
    },
    "spec.dns.baseDomain",
  ),
];

describe("the model refuses, naming the field", () => {
  it.each(rows)("$name", ({ state, errors, served }) => {
    const r = build(state);
    expect(
      r.problems
        .filter((p) => p.severity === "error")
        .map((p) => `${p.object.kind}/${p.object.name} ${p.field} ${p.reason}`),
    ).toEqual(errors);
    expect(r.topologies.length).toBe(served ? 1 : 0);
    // A refused attachment publishes nothing.
    if (errors.some((e) => e.startsWith("InfraClusterAttachment/")))
      expect(r.topologies[0]?.proxy?.backends ?? []).toEqual([]);
  });
});

describe(`a domain of ${String(DOMAIN_MAX_LENGTH)} characters`, () => {
  const domain = `alpha.${[long(63), long(63), long(63)].join(".")}.${long(DOMAIN_MAX_LENGTH - 198)}`;
  const a = withDns(attachment("alpha"), { clusterName: "alpha", baseDomain: domain.slice("alpha.".length) });

  // Built inside the test (not at collection): a mutation run attributes coverage to tests only.
  it("is served with every record and server name, each a DNS name of at most 253", () => {
    const r = build(combine({ infras: [infra()], attachments: [a] }, alpha));
    expect(domain.length).toBe(DOMAIN_MAX_LENGTH);
    expect(r.problems.filter((p) => p.severity === "error")).toEqual([]);
    const t = r.topologies[0];
    const names = [
      ...(t?.dns?.views ?? []).flatMap((v) => v.zones.flatMap((z) => z.records.map((x) => x.name))),
      ...(t?.proxy?.backends ?? []).flatMap((b) => b.serverNames),
    ];
    expect(names).toContain(`konnectivity.${domain}`);
    for (const n of names) expect(n.length, n).toBeLessThanOrEqual(253);
  });
});

it("a domain one character too long is refused with its length and the limit", () => {
  const baseDomain = `${[long(63), long(63), long(63)].join(".")}.${long(DOMAIN_MAX_LENGTH + 1 - 198)}`;
  const r = build(
    combine(
      { infras: [infra()], attachments: [withDns(attachment("alpha"), { clusterName: "alpha", baseDomain })] },
      alpha,
    ),
  );
  const p = r.problems.find((x) => x.field === "spec.dns.baseDomain");
  expect(p?.message).toBe(
    `the domain <clusterName>.<baseDomain> is ${String(DOMAIN_MAX_LENGTH + 1)} characters; at most ${String(DOMAIN_MAX_LENGTH)}, so that konnectivity.<domain> is a DNS name of at most 253; this attachment is not served`,
  );
});
