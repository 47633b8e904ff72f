// An Infra's networkConfig, in either form, → one network model (attachment, topology, role,
// exposure, ipam) + problems. Pure. It follows the original's Normalize and support matrix
// (docs/reference.md#network): the same order, the first refusal wins, and the same messages;
// then what oooi itself cannot attach yet (UnsupportedNetwork).
import type {
  AttachmentKind,
  NetworkConfig,
  NetworkExposure,
  NetworkIpam,
  NetworkRole,
  NetworkTopology,
} from "../api/schema.js";
import { LEGACY_NETWORK_FIELDS, STRUCTURED_NETWORK_FIELDS } from "../api/schema.js";
import type { ObjectProblems } from "./problems.js";

export const CUDN = "ClusterUserDefinedNetwork";
export const NAD = "NetworkAttachmentDefinition";

/**
 * The network-attachment object the components' pods select: a NAD by its namespace and name. A
 * ClusterUserDefinedNetwork has no NAD of the user's: OVN-Kubernetes generates one named after the
 * CUDN in each namespace the CUDN selects, so `namespace` is where the components find it.
 */
export interface NetworkAttachment {
  readonly kind: AttachmentKind;
  readonly name: string;
  readonly namespace: string;
}

export interface NetworkModel {
  readonly attachment: NetworkAttachment;
  readonly topology: NetworkTopology;
  readonly role: NetworkRole;
  readonly exposure: NetworkExposure;
  readonly ipam: NetworkIpam;
  /** Name of the cluster-scoped RouteAdvertisements, when one is named. */
  readonly routeAdvertisements: string | undefined;
  /** True for the legacy networkAttachmentDefinition form. */
  readonly legacy: boolean;
}

const F = "spec.networkConfig";
const DHCP_ENABLED = "spec.infraComponents.dhcp.enabled";

/** The attachment either form names, unchecked: what the operator and verify select; undefined when neither is given. */
export function networkAttachment(nc: NetworkConfig, infraNamespace: string): NetworkAttachment | undefined {
  if (nc.attachment !== undefined) {
    const a = nc.attachment;
    return { kind: a.kind, name: a.name, namespace: a.namespace ?? (a.kind === NAD ? infraNamespace : "") };
  }
  if (nc.networkAttachmentDefinition === undefined) return undefined;
  return {
    kind: NAD,
    name: nc.networkAttachmentDefinition,
    namespace: nc.networkAttachmentNamespace ?? infraNamespace,
  };
}

/** Checks networkConfig's form and support matrix; undefined (with one error) when the network cannot be served. */
export function resolveNetwork(
  nc: NetworkConfig,
  infraNamespace: string,
  dhcpEnabled: boolean,
  p: ObjectProblems,
): NetworkModel | undefined {
  const legacy = LEGACY_NETWORK_FIELDS.filter((f) => nc[f] !== undefined);
  const structured = STRUCTURED_NETWORK_FIELDS.filter((f) => nc[f] !== undefined);
  if (legacy.length > 0 && structured.length > 0) {
    p.error(
      F,
      "InvalidSpec",
      `cannot mix legacy ${legacy.join("/")} with structured ${structured.join("/")}; use one form: nothing is served`,
    );
    return undefined;
  }
  const model =
    legacy.length > 0 ? legacyNetwork(nc, infraNamespace, dhcpEnabled, p) : structuredNetwork(nc, infraNamespace, p);
  if (model === undefined) return undefined;
  const refusal = matrixRefusal(model, nc.gateway, dhcpEnabled);
  if (refusal !== undefined) {
    p.error(refusal.field, refusal.reason, `${refusal.message}; nothing is served`);
    return undefined;
  }
  return model;
}

/** The legacy form: a NAD carrying a Localnet Secondary network bridged to the VLAN. */
function legacyNetwork(
  nc: NetworkConfig,
  infraNamespace: string,
  dhcpEnabled: boolean,
  p: ObjectProblems,
): NetworkModel | undefined {
  if (nc.networkAttachmentDefinition === undefined) {
    p.error(
      `${F}.networkAttachmentDefinition`,
      "InvalidSpec",
      "networkAttachmentNamespace requires networkAttachmentDefinition",
    );
    return undefined;
  }
  return {
    attachment: {
      kind: NAD,
      name: nc.networkAttachmentDefinition,
      namespace: nc.networkAttachmentNamespace ?? infraNamespace,
    },
    topology: "Localnet",
    role: "Secondary",
    exposure: "Layer2",
    ipam: dhcpEnabled ? "DHCP" : "External",
    routeAdvertisements: undefined,
    legacy: true,
  };
}

function structuredNetwork(nc: NetworkConfig, infraNamespace: string, p: ObjectProblems): NetworkModel | undefined {
  const structured = STRUCTURED_NETWORK_FIELDS.filter((f) => nc[f] !== undefined);
  if (nc.attachment === undefined) {
    const what = structured.length > 0 ? `structured fields ${structured.join(", ")} require attachment; ` : "";
    p.error(
      structured.length > 0 ? `${F}.attachment` : F,
      "InvalidSpec",
      `${what}networkConfig must specify either attachment or networkAttachmentDefinition`,
    );
    return undefined;
  }

  const a = nc.attachment;
  if (a.kind === CUDN && (a.namespace === undefined || a.namespace === "")) {
    p.error(
      `${F}.attachment.namespace`,
      "InvalidSpec",
      `ClusterUserDefinedNetwork attachment namespace is required: the namespace where OVN-Kubernetes makes the NAD of ${a.name} for the components`,
    );
    return undefined;
  }
  const { topology, role, exposure, ipam } = nc;
  if (topology === undefined || role === undefined || exposure === undefined || ipam === undefined) {
    // The first one missing, in the order the fields are documented.
    const name =
      topology === undefined ? "topology" : role === undefined ? "role" : exposure === undefined ? "exposure" : "ipam";
    p.error(`${F}.${name}`, "InvalidSpec", `${name} is required when using structured attachment`);
    return undefined;
  }
  return {
    attachment: { kind: a.kind, name: a.name, namespace: a.namespace ?? infraNamespace },
    topology,
    role,
    exposure,
    ipam,
    routeAdvertisements: nc.routeAdvertisementsRef?.name,
    legacy: false,
  };
}

interface MatrixRow {
  /** True when the row refuses the network. */
  readonly refuses: (n: NetworkModel, gateway: string | undefined, dhcpEnabled: boolean) => boolean;
  readonly field: string;
  /** InvalidSpec where the original refuses; UnsupportedNetwork where only oooi does. */
  readonly reason: "InvalidSpec" | "UnsupportedNetwork";
  readonly message: string;
}

const primaryCudn = (n: NetworkModel) => n.attachment.kind === CUDN && n.role === "Primary";
const secondaryCudn = (n: NetworkModel) => n.attachment.kind === CUDN && n.role === "Secondary";

/**
 * The original's support matrix (internal/network/normalize.go validateNetwork at b27cedb, in its
 * order), then what oooi cannot attach its own pods to. Messages keep the original's wording.
 */
export const NETWORK_MATRIX: readonly MatrixRow[] = [
  {
    refuses: (n) => n.role === "Primary" && n.attachment.kind === NAD,
    field: `${F}.role`,
    reason: "InvalidSpec",
    message: "role Primary requires a ClusterUserDefinedNetwork attachment",
  },
  {
    refuses: (n) => n.topology === "Layer3",
    field: `${F}.topology`,
    reason: "InvalidSpec",
    message: "topology Layer3 is not supported",
  },
  {
    refuses: (n) => primaryCudn(n) && n.topology !== "Layer2",
    field: `${F}.topology`,
    reason: "InvalidSpec",
    message: "primary ClusterUserDefinedNetwork requires Layer2 topology",
  },
  {
    refuses: (n) => primaryCudn(n) && n.exposure !== "BGP",
    field: `${F}.exposure`,
    reason: "InvalidSpec",
    message: "primary ClusterUserDefinedNetwork requires BGP exposure",
  },
  {
    refuses: (n) => primaryCudn(n) && n.ipam !== "OVNKubernetes",
    field: `${F}.ipam`,
    reason: "InvalidSpec",
    message: "primary ClusterUserDefinedNetwork requires OVNKubernetes IPAM",
  },
  {
    refuses: (n) => primaryCudn(n) && n.routeAdvertisements === undefined,
    field: `${F}.routeAdvertisementsRef`,
    reason: "InvalidSpec",
    message: "routeAdvertisementsRef is required for ClusterUserDefinedNetwork BGP networks",
  },
  {
    refuses: (n) => secondaryCudn(n) && n.topology !== "Localnet",
    field: `${F}.topology`,
    reason: "InvalidSpec",
    message: "secondary ClusterUserDefinedNetwork requires Localnet topology",
  },
  {
    refuses: (n) => secondaryCudn(n) && n.exposure !== "Layer2",
    field: `${F}.exposure`,
    reason: "InvalidSpec",
    message:
      "secondary ClusterUserDefinedNetwork requires Layer2 exposure (BGP is only supported for primary networks)",
  },
  {
    refuses: (n) => n.attachment.kind === NAD && n.ipam === "OVNKubernetes",
    field: `${F}.ipam`,
    reason: "InvalidSpec",
    message: "ipam OVNKubernetes is not supported for NetworkAttachmentDefinition",
  },
  {
    refuses: (n) => n.routeAdvertisements !== undefined && n.topology === "Localnet",
    field: `${F}.routeAdvertisementsRef`,
    reason: "InvalidSpec",
    message: "routeAdvertisementsRef is not allowed for Localnet topology",
  },
  {
    refuses: (n, _, dhcpEnabled) => dhcpEnabled !== (n.ipam === "DHCP"),
    field: DHCP_ENABLED,
    reason: "InvalidSpec",
    message: "infraComponents.dhcp.enabled must match ipam (true exactly when ipam is DHCP)",
  },
  {
    refuses: (n, gateway) => n.role === "Secondary" && n.ipam !== "OVNKubernetes" && gateway === undefined,
    field: `${F}.gateway`,
    reason: "InvalidSpec",
    message: "gateway is required for Secondary networks with DHCP or External IPAM",
  },
  // oooi's own limits: its components need their serverIPs on the network.
  {
    refuses: (n) => n.role === "Primary",
    field: `${F}.role`,
    reason: "UnsupportedNetwork",
    message:
      "oooi cannot attach its DHCP, DNS and proxy pods to a Primary network yet (the original accepts it but does not wire it either)",
  },
  {
    // OVN-Kubernetes honours a static address request (the network-selection `ips`) only on a
    // layer2/localnet network without subnets, i.e. with IPAM disabled.
    refuses: (n) => n.ipam === "OVNKubernetes",
    field: `${F}.ipam`,
    reason: "UnsupportedNetwork",
    message:
      "with OVNKubernetes IPAM, OVN-Kubernetes does not give a pod the address it asks for, so the components cannot hold their serverIPs; use ipam External or DHCP on a CUDN with IPAM disabled",
  },
];

/** The first row of the matrix that refuses the network, if any. */
export function matrixRefusal(
  n: NetworkModel,
  gateway: string | undefined,
  dhcpEnabled: boolean,
): Omit<MatrixRow, "refuses"> | undefined {
  return NETWORK_MATRIX.find((r) => r.refuses(n, gateway, dhcpEnabled));
}
