// The pure model's vocabulary: what the cluster looks like (ClusterState), what each Infra
// should serve (Topology), and what is wrong (Problem) — plus EMPTY_STATE, the one empty ClusterState.
// Renderers read only these types.
import type {
  DHCPAllocation,
  DHCPServer,
  DNSServer,
  Infra,
  InfraClusterAttachment,
  ProxyServer,
  UnknownClientPolicy,
} from "../api/schema.js";
import type { PublishedEndpoint } from "./endpoints.js";
import type { ListView } from "../util/chunked-list.js";
import type { HostedCluster, Machine, Namespace, NodePool, Service, VirtualMachineInstance } from "../api/external.js";

/** Everything the model reads, as observed (specs already defaulted by src/api/validate). */
export interface ClusterState {
  readonly infras: readonly Infra[];
  readonly attachments: readonly InfraClusterAttachment[];
  // The watched kinds can be long (a Machine and a VMI per worker): a watch keeps them chunked
  // (src/util/chunked-list.ts) so that an event does not copy them; read them in order or by index.
  readonly hostedClusters: ListView<HostedCluster>;
  readonly nodePools: ListView<NodePool>;
  readonly machines: ListView<Machine>;
  readonly vmis: ListView<VirtualMachineInstance>;
  readonly services: ListView<Service>;
  readonly namespaces: ListView<Namespace>;
  /** Objects of our kinds that failed schema validation, reported as problems. */
  readonly invalid?: readonly InvalidObject[];
  /** Valid objects' undeclared fields (ignored, reported as warnings). */
  readonly unknownFields?: readonly InvalidObject[];
  /**
   * Claim (src/model/attachments.ts claimKey) → "<namespace>/<name>" of the attachment that held it
   * in the last accepted configuration, so an edit cannot take a claim away from its holder.
   * Remembered by src/pipeline/last-good.ts; absent = decide by creationTimestamp alone.
   */
  readonly incumbents?: ReadonlyMap<string, string>;
  /**
   * Durable DHCP state: each DHCPServer's ("<namespace>/<name>") allocation table as last
   * persisted (its status in the operator, a state file in serve). Absent = none yet.
   */
  readonly dhcpAllocations?: ReadonlyMap<string, readonly DHCPAllocation[]>;
  /** Milliseconds since the Unix epoch, injected so the model stays pure (DHCP grace periods). */
  readonly now?: number;
}

/** No objects at all: the state before the first observation, and what tests and sources add to. */
export const EMPTY_STATE: ClusterState = {
  infras: [],
  attachments: [],
  hostedClusters: [],
  nodePools: [],
  machines: [],
  vmis: [],
  services: [],
  namespaces: [],
};

export interface InvalidObject {
  readonly ref: ObjectRef;
  readonly errors: readonly { field: string; message: string }[];
}

export interface ObjectRef {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * Something a user must know about one object. `severity: "error"` excludes the object (or the
 * named part of it) from the output; "pending" means waiting on something that may yet appear;
 * "warning" changes nothing but deserves a look.
 */
export interface Problem {
  readonly object: ObjectRef;
  /** Field path in the object, e.g. spec.networkConfig.gateway; "" when about the whole object. */
  readonly field: string;
  readonly reason: ProblemReason;
  readonly message: string;
  readonly severity: Severity;
}

/** What the apps-ingress controller (operator/apps-ingress) writes as appsIngressStatus.reason. */
export type AppsIngressReason =
  | "WaitingForHostedCluster"
  | "WaitingForKubeconfig"
  | "WaitingForAPIServerService"
  | "WaitingForHostedClusterNodes"
  | "WaitingForMetalLBCRDs"
  | "WaitingForExternalIP"
  | "HostedClusterAccessFailed"
  | "MetalLBInstallFailed"
  | "IngressServiceFailed"
  | "ExternalIPDiscoveryFailed"
  | "InvalidConfiguration"
  | "CleanupFailed";

export type Severity = "error" | "pending" | "warning";

/**
 * Every CamelCase reason a problem (and so a Ready condition) may carry, declared once: a new
 * check adds its reason here. status.ts counts a warning whose reason starts with "Duplicate" as a conflict.
 */
export type ProblemReason =
  // The object itself (model/infra.ts, model/attachments.ts, the schema decoder).
  | "InvalidSpec"
  | "UnsupportedNetwork"
  | "UnknownField"
  | "LegacyField"
  | "InvalidConfiguration"
  | "InvalidAddressRange"
  | "NoResolverAdvertised"
  | "NoInternalClients"
  | "ServicePortMismatch"
  | "EndpointNotServable"
  | "AppsIngressWithoutIP"
  | "AppsIngressByHostname"
  | "AppsIngressStatusIgnored"
  | "AppsIngressDegraded"
  | "AppsIngressPending"
  | AppsIngressReason
  // Waiting on something that may yet appear.
  | "InfraNotFound"
  | "InfraNotReady"
  | "InternalProxyServicePending"
  | "WaitingForControlPlaneNamespace"
  | "WaitingForServices"
  // Conflicts between objects (docs/reference.md#conflicts).
  | "DuplicateHostedCluster"
  | "DuplicateHostname"
  | "DuplicateMAC"
  | "DuplicateOption"
  | "DuplicateSourceIP"
  | "ReportedAddressConflict"
  // DHCP allocations (model/allocations.ts).
  | "AddressesExhausted"
  | "AllocationDropped"
  | "VMIWithoutMAC"
  // Last good (pipeline/last-good.ts) and rendering (a child refused by its consistency check).
  | "ServingLastGood"
  | "InconsistentConfig"
  // The operator (operator/desired).
  | "InfraNotObserved"
  | "InvalidName"
  | "InvalidOperatorSettings"
  // OpenShift: Kea's SCC RoleBinding (src/operator/desired/scc.ts).
  | "KeaSccBindingNeeded"
  | "KeaSccBindingConflict";

// ---------------------------------------------------------------- proxy

/** Which listener a backend lives on: TLS passthrough on 443/6443, plain HTTP on 80. */
export type ListenerPort = 443 | 6443 | 80;

/** A resolved upstream address. */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

/** What every upstream carries, whichever way Envoy finds its addresses. */
interface UpstreamCommon {
  /** Envoy cluster name, unique per proxy: "<namespace>/<service>:<port>", "vip/<ip>:<port>" or "dns/<host>:<port>". */
  readonly name: string;
  readonly connectTimeoutSeconds: number;
  /** What the user named: a Service (namespace, name, port) or, without namespace, a literal IP or hostname. */
  readonly target: { readonly service: string; readonly namespace: string | undefined; readonly port: number };
}

/**
 * One upstream target: an Envoy cluster. Several backends may share it (api, api-int and the
 * kubernetes aliases all reach kube-apiserver.CP:6443). "address": oooi resolved the endpoints and
 * pushes them over EDS; "dns": only a hostname is known and Envoy resolves it itself (LOGICAL_DNS).
 */
export type Upstream = AddressUpstream | DnsUpstream;

export interface AddressUpstream extends UpstreamCommon {
  readonly kind: "address";
  /** Resolved endpoints; empty while the Service is missing or headless (Envoy then refuses connections). */
  readonly endpoints: readonly Endpoint[];
}

export interface DnsUpstream extends UpstreamCommon {
  readonly kind: "dns";
  /** A DNS name (checked by the model), resolved by Envoy with the resolvers of its pod. */
  readonly hostname: string;
  readonly port: number;
}

/** One docs/reference.md#backends row for one attachment: how a connection is matched and where it goes. */
export interface Backend {
  /** Unique per proxy: "<attachment namespace>/<attachment name>/<kind>". */
  readonly name: string;
  readonly kind: BackendKind;
  /** "<namespace>/<name>" of the InfraClusterAttachment it came from. */
  readonly attachment: string;
  readonly port: ListenerPort;
  /** SNI names (port 443/6443) or HTTP Host domains (port 80); empty = matches without SNI. */
  readonly serverNames: readonly string[];
  /** Source CIDRs (minimal cover of worker /32s); empty = any source. */
  readonly sourcePrefixRanges: readonly string[];
  /** Name of the Upstream it forwards to. */
  readonly upstream: string;
}

export type BackendKind =
  | "kube-apiserver"
  | "kube-apiserver-internal"
  | "kubernetes-service"
  | "oauth-openshift"
  | "ignition-server"
  | "konnectivity-server"
  | "kubernetes-hostname"
  | "apps-https"
  | "apps-http";

export interface ProxyModel {
  /** xDS node.cluster of the Envoys that serve it: "<namespace>/<ProxyServer name>". */
  readonly node: string;
  readonly serverIP: string;
  /** Sorted by name. */
  readonly backends: readonly Backend[];
  /** Sorted by name; only upstreams referenced by some backend. */
  readonly upstreams: readonly Upstream[];
}

// ---------------------------------------------------------------- dns

export interface ARecord {
  /** Fully qualified, lower case, no trailing dot; may start with "*." for a wildcard. */
  readonly name: string;
  readonly address: string;
}

/** An authoritative zone: every record's name equals the origin or ends with "." + origin. */
export interface Zone {
  /** Lower case, no trailing dot. */
  readonly origin: string;
  /** Sorted by name then address. */
  readonly records: readonly ARecord[];
}

export interface DnsView {
  readonly name: "vlan" | "default";
  /** Clients whose source address is inside this CIDR get the view; undefined = everyone else. */
  readonly sourceCidr: string | undefined;
  /** Sorted by origin, then by records. May be empty (the default view when internalProxyService is unset). */
  readonly zones: readonly Zone[];
}

export interface DnsModel {
  /** "<namespace>/<DNSServer name>". */
  readonly name: string;
  readonly serverIP: string;
  /** The VLAN view first, then the default view. */
  readonly views: readonly [DnsView, DnsView];
  /** Upstream resolver IPs; "resolv.conf" when inheriting the node's resolvers. */
  readonly upstreams: readonly string[] | "resolv.conf";
  readonly cacheSeconds: number;
  readonly reloadSeconds: number;
}

// ---------------------------------------------------------------- dhcp

export interface Reservation {
  /** Lower-case colon-separated MAC. */
  readonly hwAddress: string;
  readonly ipAddress: string;
  /** VMI name (DHCP option 12). */
  readonly hostname: string;
  /** "<namespace>/<VMI name>", for status and debugging. */
  readonly vmi: string;
}

/** One extra DHCP option (src/model/dhcp-options.ts), checked. */
export interface DhcpOption {
  readonly code: number;
  /** As the user wrote it (copied to the DHCPServer's spec.options). */
  readonly value: string;
  /** Kea's option name where oooi knows the option; else it is sent by code. */
  readonly name?: string;
  /** Kea's data: text (csvFormat) or hex wire bytes. */
  readonly data: string;
  readonly csvFormat: boolean;
}

/** What a DHCP pool can give and how much of it is taken (src/model/allocations.ts poolUse). */
export interface PoolUse {
  /** Host addresses of the pool that no exclusion (gateway, components, MetalLB ranges) covers. */
  readonly addresses: number;
  /** Those of them the table holds (live or within their grace period). */
  readonly allocated: number;
}

export interface DhcpModel {
  /** "<namespace>/<DHCPServer name>". */
  readonly name: string;
  readonly interface: string;
  readonly serverIP: string;
  readonly subnet: string;
  /** Dotted netmask derived from the CIDR. */
  readonly netmask: string;
  readonly pool: { readonly start: string; readonly end: string } | undefined;
  readonly routers: string;
  /** Every resolver advertised to clients (option 6), in order. */
  readonly dnsServers: readonly string[];
  readonly validLifetimeSeconds: number;
  readonly unknownClients: UnknownClientPolicy;
  /** Sorted by hwAddress: one per allocation, live or within its grace period. */
  readonly reservations: readonly Reservation[];
  /** Extra options for every client, sorted by code. */
  readonly options: readonly DhcpOption[];
  /** The new allocation table, to persist (sorted by MAC). */
  readonly allocations: readonly DHCPAllocation[];
  /** How full the pool is (oooi_dhcp_pool_* metrics). */
  readonly poolUse: PoolUse;
}

// ---------------------------------------------------------------- topology

/** What one attachment contributes, and whether it is served. */
export interface AttachmentModel {
  readonly ref: ObjectRef;
  /** clusterName.baseDomain, lower case. */
  readonly domain: string;
  readonly controlPlaneNamespace: string;
  /** "<namespace>/<name>" of the HostedCluster it attaches. */
  readonly hostedCluster: string;
  /** Served = its backends and records are in the output. */
  readonly served: boolean;
  /** Worker source addresses (dotted quads, sorted) known for it. */
  readonly workerAddresses: readonly string[];
  /** api, oauth, ignition, konnectivity: the names published for it and where each came from. */
  readonly endpoints: readonly PublishedEndpoint[];
  /** Its public proxy Service `<attachment>-proxy-external`, when enabled (spec.externalService). */
  readonly externalService: AttachmentExternalService | undefined;
}

export interface AttachmentExternalService {
  readonly addressPoolName: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface Topology {
  readonly infra: ObjectRef;
  /** Generated child objects (spec only); undefined when the component is disabled or invalid. */
  readonly children: {
    readonly dhcp: DHCPServer | undefined;
    readonly dns: DNSServer | undefined;
    readonly proxy: ProxyServer | undefined;
  };
  readonly proxy: ProxyModel | undefined;
  readonly dns: DnsModel | undefined;
  readonly dhcp: DhcpModel | undefined;
  /** Sorted by namespace/name; includes unserved ones. */
  readonly attachments: readonly AttachmentModel[];
}

export interface BuildResult {
  /** Sorted by namespace/name; only Infras valid enough to serve. */
  readonly topologies: readonly Topology[];
  /** Sorted by object then field. */
  readonly problems: readonly Problem[];
  /** Who won each claim (claimKey → "<namespace>/<name>"): the next build's ClusterState.incumbents. */
  readonly claims: ReadonlyMap<string, string>;
}
