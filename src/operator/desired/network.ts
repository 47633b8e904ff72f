// How a component's pod gets its static VLAN address (serverIP) through Multus. Pure.
//
// Design. docs/reference.md#children asks for a NetworkAttachmentDefinition with static IPAM per component. Such
// a NAD must repeat the Infra NAD's plugin config (bridge/macvlan/ovs …, VLAN id, MTU) with the
// `ipam` replaced, so it is generated from the observed Infra NAD:
//   - classic CNI configs (a single plugin or a conflist): `<infra>-<component>` in the Infra's
//     namespace, the same config with `"ipam": {"type": "static", "addresses": [{address, gateway}]}`
//     and no routes (the pod keeps its default route on the pod network, where xDS is), and the
//     pod selects it by name. It lives next to the pod (no cross-namespace NAD reference, which
//     Multus may forbid) and is garbage-collected with the Infra.
//   - OVN-Kubernetes secondary networks (type ovn-k8s-cni-overlay) cannot be copied: OVN keys the
//     network on the config's own `netAttachDefName`, and it takes no `ipam`. There, and while the
//     Infra's NAD is not (yet) observed, the pod selects the Infra's NAD itself and asks for the
//     address with the network-selection `ips` field (OVN layer2/localnet and static IPAM with the
//     `ips` capability honour it) — the form the original operator's pods used.
//   - an OVN-Kubernetes ClusterUserDefinedNetwork (localnet, secondary, IPAM disabled): there is no
//     NAD of the user's; OVN-Kubernetes makes one named after the CUDN in each namespace the CUDN
//     selects, and honours a static address requested with `ips` on a layer2/localnet network
//     without subnets (ovn-kubernetes.io, features/multiple-networks/multi-homing and
//     features/user-defined-networks). The pod selects that NAD with `ips`, never a copy.
// Either way the interface is named explicitly, so Kea's `interfaces` always matches.
import type { NetworkAttachment } from "../../model/network.js";
import type { DesiredObject, OwnerReference } from "./objects.js";

/** Pod annotation Multus reads the extra networks from. */
export const NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks";
/** The OVN-Kubernetes CNI plugin type, whose NADs are referenced rather than copied. */
export const OVN_K8S_TYPE = "ovn-k8s-cni-overlay";

/** What a component needs to attach to the VLAN. */
export interface ComponentNetworkInput {
  /** The Infra's network: a NAD, or a CUDN by the namespace of the NAD OVN-Kubernetes makes for it. */
  readonly attachment: NetworkAttachment;
  /** That NAD's spec.config as observed; undefined when not observed. */
  readonly nadConfig: string | undefined;
  /** Name and namespace of the generated NAD (= the pod's namespace). */
  readonly name: string;
  readonly namespace: string;
  readonly serverIP: string;
  readonly prefixLength: number;
  readonly gateway: string;
  /** Interface name inside the pod. */
  readonly interfaceName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
}

/** The NAD to apply (when one is generated) and the pod annotation selecting the network. */
export interface ComponentNetwork {
  readonly nad: DesiredObject | undefined;
  readonly annotation: string;
}

/** Picks the attachment design above for one component. */
export function componentNetwork(input: ComponentNetworkInput): ComponentNetwork {
  const address = `${input.serverIP}/${input.prefixLength}`;
  const { attachment } = input;
  const config =
    attachment.kind === "ClusterUserDefinedNetwork" ? undefined : staticCopy(input.nadConfig, address, input.gateway);
  if (config === undefined) {
    return {
      nad: undefined,
      annotation: JSON.stringify([
        { name: attachment.name, namespace: attachment.namespace, interface: input.interfaceName, ips: [address] },
      ]),
    };
  }
  return {
    nad: {
      apiVersion: "k8s.cni.cncf.io/v1",
      kind: "NetworkAttachmentDefinition",
      metadata: { name: input.name, namespace: input.namespace, labels: input.labels, ownerReferences: [input.owner] },
      spec: { config },
    },
    annotation: JSON.stringify([{ name: input.name, namespace: input.namespace, interface: input.interfaceName }]),
  };
}

type Json = Record<string, unknown>;

/** The Infra NAD's config with static IPAM for `address`, or undefined when it cannot be copied. */
export function staticCopy(config: string | undefined, address: string, gateway: string): string | undefined {
  if (config === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(config);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const ipam = { type: "static", addresses: [{ address, gateway }] };
  if (Array.isArray(parsed["plugins"])) {
    const plugins = parsed["plugins"] as unknown[];
    if (plugins.length === 0 || !plugins.every(isRecord)) return undefined;
    if (plugins.some((p) => p["type"] === OVN_K8S_TYPE || typeof p["type"] !== "string")) return undefined;
    // IPAM belongs to the main (interface-creating) plugin: the one declaring ipam, else the first.
    const main = Math.max(
      0,
      plugins.findIndex((p) => "ipam" in p),
    );
    return JSON.stringify({ ...parsed, plugins: plugins.map((p, i) => (i === main ? { ...p, ipam } : p)) });
  }
  if (typeof parsed["type"] !== "string" || parsed["type"] === OVN_K8S_TYPE) return undefined;
  return JSON.stringify({ ...parsed, ipam });
}

function isRecord(v: unknown): v is Json {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
