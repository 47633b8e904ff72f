// networkConfig in → network model or the one refusal out: both forms, the original's CEL rules for
// manifests read without an API server, its support matrix in order (internal/network/normalize.go
// at b27cedb, summarised in docs/reference.md#network), and what oooi cannot attach yet.
import { describe, expect, it } from "vitest";
import type { Infra, NetworkConfig } from "../../src/api/schema.js";
import { build } from "../../src/model/build.js";
import { networkAttachment, resolveNetwork, type NetworkModel } from "../../src/model/network.js";
import { Problems } from "../../src/model/problems.js";
import { attachment, combine, hostedCluster, infra, NS } from "../support/fixtures.js";

const CIDR = { cidr: "192.0.2.0/24" };
const GW = { ...CIDR, gateway: "192.0.2.1" };
const CUDN = { kind: "ClusterUserDefinedNetwork" as const, name: "vlan-l", namespace: "infra" };
const NAD = { kind: "NetworkAttachmentDefinition" as const, name: "vlan-n" };
const LOCALNET = { topology: "Localnet", role: "Secondary", exposure: "Layer2" } as const;
const PRIMARY = {
  attachment: CUDN,
  topology: "Layer2",
  role: "Primary",
  exposure: "BGP",
  ipam: "OVNKubernetes",
  routeAdvertisementsRef: { name: "ra" },
} as const;

function run(nc: NetworkConfig, dhcpEnabled = true) {
  const problems = new Problems();
  const model = resolveNetwork(
    nc,
    "infra",
    dhcpEnabled,
    problems.for({ kind: "Infra", namespace: "infra", name: "x" }),
  );
  return { model, problems: problems.recorded().map((p) => [p.field, p.reason, p.message]) };
}

/** The model as a short line: kind name@namespace topology/role/exposure/ipam[ ra=name][ legacy]. */
const short = (m: NetworkModel | undefined): string | undefined =>
  m === undefined
    ? undefined
    : `${m.attachment.kind} ${m.attachment.name}@${m.attachment.namespace} ${m.topology}/${m.role}/${m.exposure}/${m.ipam}` +
      (m.routeAdvertisements === undefined ? "" : ` ra=${m.routeAdvertisements}`) +
      (m.legacy ? " legacy" : "");

interface Accepted {
  readonly name: string;
  readonly nc: NetworkConfig;
  readonly dhcp: boolean;
  readonly model: string;
}

const ACCEPTED: readonly Accepted[] = [
  {
    name: "legacy NAD with DHCP: Localnet Secondary Layer2, ipam DHCP, NAD in the Infra's namespace",
    nc: { ...GW, networkAttachmentDefinition: "vlan100" },
    dhcp: true,
    model: "NetworkAttachmentDefinition vlan100@infra Localnet/Secondary/Layer2/DHCP legacy",
  },
  {
    name: "legacy NAD without DHCP: ipam External, its own namespace kept",
    nc: { ...GW, networkAttachmentDefinition: "vlan100", networkAttachmentNamespace: "nets" },
    dhcp: false,
    model: "NetworkAttachmentDefinition vlan100@nets Localnet/Secondary/Layer2/External legacy",
  },
  {
    name: "structured NAD Localnet Secondary External, namespace defaults to the Infra's",
    nc: { ...GW, attachment: NAD, ...LOCALNET, ipam: "External" },
    dhcp: false,
    model: "NetworkAttachmentDefinition vlan-n@infra Localnet/Secondary/Layer2/External",
  },
  {
    name: "structured NAD Layer2 Secondary BGP with a routeAdvertisementsRef (intent only)",
    nc: {
      ...GW,
      attachment: NAD,
      topology: "Layer2",
      role: "Secondary",
      exposure: "BGP",
      ipam: "External",
      routeAdvertisementsRef: { name: "ra" },
    },
    dhcp: false,
    model: "NetworkAttachmentDefinition vlan-n@infra Layer2/Secondary/BGP/External ra=ra",
  },
  {
    name: "CUDN Localnet Secondary with DHCP",
    nc: { ...GW, attachment: CUDN, ...LOCALNET, ipam: "DHCP" },
    dhcp: true,
    model: "ClusterUserDefinedNetwork vlan-l@infra Localnet/Secondary/Layer2/DHCP",
  },
  {
    name: "CUDN Localnet Secondary with External IPAM",
    nc: { ...GW, attachment: { ...CUDN, namespace: "elsewhere" }, ...LOCALNET, ipam: "External" },
    dhcp: false,
    model: "ClusterUserDefinedNetwork vlan-l@elsewhere Localnet/Secondary/Layer2/External",
  },
];

type Row = readonly [field: string, reason: string, says: string];

interface Refused {
  readonly name: string;
  readonly nc: NetworkConfig;
  readonly dhcp: boolean;
  readonly problem: Row;
}

const F = "spec.networkConfig";
const REFUSED: readonly Refused[] = [
  // The CEL rules, for manifests no API server admitted.
  {
    name: "neither form",
    nc: GW,
    dhcp: true,
    problem: [F, "InvalidSpec", "networkConfig must specify either attachment or networkAttachmentDefinition"],
  },
  {
    name: "both forms",
    nc: { ...GW, networkAttachmentDefinition: "v", attachment: NAD },
    dhcp: true,
    problem: [F, "InvalidSpec", "cannot mix legacy networkAttachmentDefinition with structured attachment"],
  },
  {
    name: "both forms, each with two fields",
    nc: { ...GW, networkAttachmentDefinition: "v", networkAttachmentNamespace: "n", attachment: NAD, ipam: "DHCP" },
    dhcp: true,
    problem: [
      F,
      "InvalidSpec",
      "cannot mix legacy networkAttachmentDefinition/networkAttachmentNamespace with structured attachment/ipam",
    ],
  },
  {
    name: "structured fields without attachment",
    nc: { ...GW, topology: "Localnet", ipam: "DHCP" },
    dhcp: true,
    problem: [`${F}.attachment`, "InvalidSpec", "structured fields topology, ipam require attachment"],
  },
  {
    name: "networkAttachmentNamespace alone",
    nc: { ...GW, networkAttachmentNamespace: "nets" },
    dhcp: true,
    problem: [
      `${F}.networkAttachmentDefinition`,
      "InvalidSpec",
      "networkAttachmentNamespace requires networkAttachmentDefinition",
    ],
  },
  // Normalize.
  {
    name: "CUDN without a namespace",
    nc: { ...GW, attachment: { kind: "ClusterUserDefinedNetwork", name: "l" }, ...LOCALNET, ipam: "DHCP" },
    dhcp: true,
    problem: [`${F}.attachment.namespace`, "InvalidSpec", "ClusterUserDefinedNetwork attachment namespace is required"],
  },
  {
    name: "structured without ipam",
    nc: { ...GW, attachment: NAD, ...LOCALNET },
    dhcp: true,
    problem: [`${F}.ipam`, "InvalidSpec", "ipam is required when using structured attachment"],
  },
  ...(["topology", "role", "exposure"] as const).map((missing): Refused => ({
    name: `structured without ${missing} (the first one missing is named)`,
    nc: { ...GW, attachment: NAD, ...LOCALNET, ipam: "DHCP", [missing]: undefined },
    dhcp: true,
    problem: [`${F}.${missing}`, "InvalidSpec", `${missing} is required when using structured attachment`],
  })),
  {
    name: "CUDN with an empty namespace",
    nc: { ...GW, attachment: { ...CUDN, namespace: "" }, ...LOCALNET, ipam: "DHCP" },
    dhcp: true,
    problem: [`${F}.attachment.namespace`, "InvalidSpec", "ClusterUserDefinedNetwork attachment namespace is required"],
  },
  // The support matrix, one row each.
  {
    name: "Primary on a NAD",
    nc: { ...GW, attachment: NAD, ...LOCALNET, role: "Primary", ipam: "External" },
    dhcp: false,
    problem: [`${F}.role`, "InvalidSpec", "role Primary requires a ClusterUserDefinedNetwork attachment"],
  },
  {
    name: "Layer3",
    nc: { ...GW, attachment: NAD, ...LOCALNET, topology: "Layer3", ipam: "External" },
    dhcp: false,
    problem: [`${F}.topology`, "InvalidSpec", "topology Layer3 is not supported"],
  },
  {
    name: "primary CUDN on Localnet",
    nc: { ...CIDR, ...PRIMARY, topology: "Localnet" },
    dhcp: false,
    problem: [`${F}.topology`, "InvalidSpec", "primary ClusterUserDefinedNetwork requires Layer2 topology"],
  },
  {
    name: "primary CUDN on Layer2 exposure",
    nc: { ...CIDR, ...PRIMARY, exposure: "Layer2" },
    dhcp: false,
    problem: [`${F}.exposure`, "InvalidSpec", "primary ClusterUserDefinedNetwork requires BGP exposure"],
  },
  {
    name: "primary CUDN with External IPAM",
    nc: { ...GW, ...PRIMARY, ipam: "External" },
    dhcp: false,
    problem: [`${F}.ipam`, "InvalidSpec", "primary ClusterUserDefinedNetwork requires OVNKubernetes IPAM"],
  },
  {
    name: "primary CUDN without routeAdvertisementsRef",
    nc: { ...CIDR, attachment: CUDN, topology: "Layer2", role: "Primary", exposure: "BGP", ipam: "OVNKubernetes" },
    dhcp: false,
    problem: [
      `${F}.routeAdvertisementsRef`,
      "InvalidSpec",
      "routeAdvertisementsRef is required for ClusterUserDefinedNetwork BGP networks",
    ],
  },
  {
    name: "secondary CUDN on Layer2",
    nc: { ...GW, attachment: CUDN, ...LOCALNET, topology: "Layer2", ipam: "External" },
    dhcp: false,
    problem: [`${F}.topology`, "InvalidSpec", "secondary ClusterUserDefinedNetwork requires Localnet topology"],
  },
  {
    name: "secondary CUDN with BGP",
    nc: { ...GW, attachment: CUDN, ...LOCALNET, exposure: "BGP", ipam: "External" },
    dhcp: false,
    problem: [
      `${F}.exposure`,
      "InvalidSpec",
      "secondary ClusterUserDefinedNetwork requires Layer2 exposure (BGP is only supported for primary networks)",
    ],
  },
  {
    name: "NAD with OVNKubernetes IPAM",
    nc: { ...GW, attachment: NAD, ...LOCALNET, ipam: "OVNKubernetes" },
    dhcp: false,
    problem: [`${F}.ipam`, "InvalidSpec", "ipam OVNKubernetes is not supported for NetworkAttachmentDefinition"],
  },
  {
    name: "routeAdvertisementsRef on Localnet",
    nc: { ...GW, attachment: NAD, ...LOCALNET, ipam: "External", routeAdvertisementsRef: { name: "ra" } },
    dhcp: false,
    problem: [
      `${F}.routeAdvertisementsRef`,
      "InvalidSpec",
      "routeAdvertisementsRef is not allowed for Localnet topology",
    ],
  },
  {
    name: "ipam DHCP with dhcp disabled",
    nc: { ...GW, attachment: NAD, ...LOCALNET, ipam: "DHCP" },
    dhcp: false,
    problem: ["spec.infraComponents.dhcp.enabled", "InvalidSpec", "infraComponents.dhcp.enabled must match ipam"],
  },
  {
    name: "ipam External with dhcp enabled",
    nc: { ...GW, attachment: CUDN, ...LOCALNET, ipam: "External" },
    dhcp: true,
    problem: ["spec.infraComponents.dhcp.enabled", "InvalidSpec", "infraComponents.dhcp.enabled must match ipam"],
  },
  {
    name: "secondary with DHCP and no gateway",
    nc: { ...CIDR, attachment: CUDN, ...LOCALNET, ipam: "DHCP" },
    dhcp: true,
    problem: [`${F}.gateway`, "InvalidSpec", "gateway is required for Secondary networks with DHCP or External IPAM"],
  },
  {
    name: "legacy form without a gateway",
    nc: { ...CIDR, networkAttachmentDefinition: "v" },
    dhcp: true,
    problem: [`${F}.gateway`, "InvalidSpec", "gateway is required for Secondary networks with DHCP or External IPAM"],
  },
  // Accepted by the original, not attachable by oooi.
  {
    name: "primary CUDN as the original accepts it",
    nc: { ...CIDR, ...PRIMARY },
    dhcp: false,
    problem: [
      `${F}.role`,
      "UnsupportedNetwork",
      "oooi cannot attach its DHCP, DNS and proxy pods to a Primary network",
    ],
  },
  {
    name: "secondary CUDN with OVNKubernetes IPAM",
    nc: { ...CIDR, attachment: CUDN, ...LOCALNET, ipam: "OVNKubernetes" },
    dhcp: false,
    problem: [`${F}.ipam`, "UnsupportedNetwork", "with OVNKubernetes IPAM, OVN-Kubernetes does not give a pod"],
  },
];

describe("resolveNetwork", () => {
  it.each(ACCEPTED)("accepts $name", ({ nc, dhcp, model }) => {
    const r = run(nc, dhcp);
    expect(r.problems).toEqual([]);
    expect(short(r.model)).toBe(model);
  });

  it.each(REFUSED)("refuses $name", ({ nc, dhcp, problem }) => {
    const r = run(nc, dhcp);
    expect(r.model).toBeUndefined();
    expect(r.problems).toHaveLength(1);
    const [field, reason, says] = problem;
    expect(r.problems[0]?.slice(0, 2)).toEqual([field, reason]);
    // The message begins with the documented words (what follows may add detail).
    const message = r.problems[0]?.[2] ?? "";
    expect(message.startsWith(says), message).toBe(true);
  });
});

describe("an Infra with a structured network, through the schema and build()", () => {
  // The fixture's legacy NAD would mix the forms: the structured fields replace it.
  const withNetwork = (structured: Partial<NetworkConfig>): Infra => {
    const base = infra("vlan100");
    const networkConfig = { ...base.spec.networkConfig, ...structured };
    delete networkConfig.networkAttachmentDefinition;
    return { ...base, spec: { ...base.spec, networkConfig } };
  };
  const cudn: Partial<NetworkConfig> = {
    attachment: { kind: "ClusterUserDefinedNetwork", name: "vlan100-l", namespace: NS },
    topology: "Localnet",
    role: "Secondary",
    exposure: "Layer2",
    ipam: "DHCP",
  };
  const cudnInfra = withNetwork(cudn);

  it("is served like the legacy form; its children name the NAD OVN-Kubernetes makes for the CUDN", () => {
    const r = build(combine({ infras: [cudnInfra], attachments: [attachment("one")] }, hostedCluster("one", 1, [])));
    expect(r.problems.filter((p) => p.severity === "error")).toEqual([]);
    const t = r.topologies[0];
    expect(t?.children.dhcp?.spec.networkConfig).toMatchObject({
      networkAttachmentName: "vlan100-l",
      networkAttachmentNamespace: NS,
    });
    expect(t?.children.proxy?.spec.networkConfig).toMatchObject({ networkAttachmentName: "vlan100-l" });
  });

  it("an edit to a matrix-refused network serves nothing and names the field", () => {
    const layer3 = withNetwork({ ...cudn, topology: "Layer3" });
    const r = build(combine({ infras: [layer3], attachments: [attachment("one")] }, hostedCluster("one", 1, [])));
    expect(r.topologies).toEqual([]);
    expect(r.problems.filter((p) => p.object.kind === "Infra").map((p) => [p.field, p.reason])).toEqual([
      ["spec.networkConfig.topology", "InvalidSpec"],
    ]);
  });
});

describe("networkAttachment: the attachment either form names, before any check", () => {
  it.each<[string, NetworkConfig, ReturnType<typeof networkAttachment>]>([
    ["neither form", GW, undefined],
    [
      "a legacy NAD: the Infra's namespace",
      { ...GW, networkAttachmentDefinition: "v" },
      { kind: NAD.kind, name: "v", namespace: "infra" },
    ],
    [
      "a legacy NAD in its own namespace",
      { ...GW, networkAttachmentDefinition: "v", networkAttachmentNamespace: "nets" },
      { kind: NAD.kind, name: "v", namespace: "nets" },
    ],
    ["a structured NAD without a namespace: the Infra's", { ...GW, attachment: NAD }, { ...NAD, namespace: "infra" }],
    ["a structured NAD with one", { ...GW, attachment: { ...NAD, namespace: "nets" } }, { ...NAD, namespace: "nets" }],
    [
      "a CUDN without a namespace: none (cluster-scoped; its NAD's namespace is unknown)",
      { ...GW, attachment: { kind: CUDN.kind, name: "l" } },
      { kind: CUDN.kind, name: "l", namespace: "" },
    ],
    ["a CUDN with one", { ...GW, attachment: CUDN }, CUDN],
  ])("%s", (_, nc, expected) => {
    expect(networkAttachment(nc, "infra")).toEqual(expected);
  });
});
