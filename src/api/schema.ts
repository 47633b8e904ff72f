// The one definition of the API: TypeScript types (Static<>), defaults and runtime
// validation (TypeBox Value), and the CRDs in deploy/crds (src/api/crd.ts) all come from here.
// Field names follow the original Go operator so its manifests load unchanged.
import { Type, type Static, type TSchema, type TObject, type TProperties, type TString } from "@sinclair/typebox";

export const GROUP = "hostedcluster.densityops.com";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;

const IPV4 = String.raw`^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$`;
const IPV4_CIDR = String.raw`^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])/([0-9]|[12][0-9]|3[0-2])$`;
/** RFC 1123 label of at most 63 characters: a hosted cluster's name in DNS, a namespace. */
const DNS_LABEL = String.raw`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`;
/** A domain of two labels or more, each at most 63 characters (the length as a whole is a maxLength). */
const DNS_SUBDOMAIN = String.raw`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$`;
/** metadata.name of a custom resource as the API server checks it: an RFC 1123 subdomain (one label or more). */
const OBJECT_NAME = String.raw`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`;
/** RFC 1035 label: what a Service's name must be (a letter first, no dot). */
const SERVICE_NAME = String.raw`^[a-z]([-a-z0-9]*[a-z0-9])?$`;
/** Go time.Duration as the original accepted it ("1h", "90m", "1h30m", "3600s"). */
const GO_DURATION = String.raw`^([0-9]+(\.[0-9]+)?(h|m|s|ms))+$`;
const SIMPLE_DURATION = String.raw`^[0-9]+(s|m|h)$`;
const MAC = String.raw`^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$`;

/**
 * Why a limit is what it is, said after the message of a value over it (src/api/validate.ts).
 * Not a JSON Schema keyword: the CRD generator leaves it out.
 */
export const WHY = "x-oooi-why";

/** What each pattern means, for error messages a person can act on. */
export const PATTERN_MEANINGS: ReadonlyMap<string, string> = new Map([
  [IPV4, "an IPv4 address such as 192.0.2.10"],
  [IPV4_CIDR, "an IPv4 CIDR such as 192.0.2.0/24"],
  [DNS_LABEL, "a lower-case DNS label of at most 63 characters such as example-hcp"],
  [DNS_SUBDOMAIN, "a lower-case DNS domain such as clusters.example.com, each label at most 63 characters"],
  [OBJECT_NAME, "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"],
  [SERVICE_NAME, "lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"],
  [GO_DURATION, "a duration such as 1h, 90m or 1h30m"],
  [SIMPLE_DURATION, "a duration such as 5s, 1m or 1h"],
  [MAC, "a MAC address such as 02:00:00:00:00:01"],
]);

const ipv4 = (description: string) => Type.String({ pattern: IPV4, description });
const opt = <T extends TSchema>(t: T) => Type.Optional(t);
const obj = <P extends TProperties>(props: P, description?: string): TObject<P> =>
  Type.Object(props, description === undefined ? {} : { description });
/** An optional object that defaults to {} so the API server (and Value.Default) fills its inner defaults. */
const section = <P extends TProperties>(props: P, description?: string) =>
  Type.Optional(Type.Object(props, { default: {}, ...(description === undefined ? {} : { description }) }));
const stringMap = (description: string) => Type.Record(Type.String(), Type.String(), { description });

/** metav1.Condition, as Kubernetes validates it. */
export const Condition = obj({
  type: Type.String({
    maxLength: 316,
    pattern: String.raw`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`,
  }),
  status: Type.Union([Type.Literal("True"), Type.Literal("False"), Type.Literal("Unknown")]),
  observedGeneration: opt(Type.Integer({ minimum: 0 })),
  lastTransitionTime: Type.String({ format: "date-time" }),
  reason: Type.String({ maxLength: 1024, minLength: 1, pattern: String.raw`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$` }),
  message: Type.String({ maxLength: 32768 }),
});
export type Condition = Static<typeof Condition>;
const Conditions = Type.Array(Condition, {
  description: "Latest observations of the object's state; type Ready summarises it.",
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
});

// ---------------------------------------------------------------- Infra

export const AttachmentKind = Type.Union(
  [Type.Literal("NetworkAttachmentDefinition"), Type.Literal("ClusterUserDefinedNetwork")],
  { description: "What the attachment names: a Multus NAD, or an OVN-Kubernetes ClusterUserDefinedNetwork." },
);
export const NetworkTopology = Type.Union([Type.Literal("Localnet"), Type.Literal("Layer2"), Type.Literal("Layer3")], {
  description: "Topology of the network (Layer3 is refused).",
});
export const NetworkRole = Type.Union([Type.Literal("Secondary"), Type.Literal("Primary")], {
  description: "Secondary: an extra interface next to the pod network; Primary: the pods' own network (CUDN only).",
});
export const NetworkExposure = Type.Union([Type.Literal("Layer2"), Type.Literal("BGP")], {
  description: "How the network reaches the outside: bridged to a VLAN (Layer2) or advertised by BGP.",
});
export const NetworkIpam = Type.Union([Type.Literal("DHCP"), Type.Literal("External"), Type.Literal("OVNKubernetes")], {
  description:
    "Who gives workers their addresses: oooi's Kea (DHCP, needs dhcp.enabled), someone else (External), or OVN-Kubernetes.",
});

/** Structured fields of networkConfig; each needs `attachment` and none mixes with the legacy NAD fields. */
export const STRUCTURED_NETWORK_FIELDS = [
  "attachment",
  "topology",
  "role",
  "exposure",
  "ipam",
  "routeAdvertisementsRef",
] as const;
export const LEGACY_NETWORK_FIELDS = ["networkAttachmentDefinition", "networkAttachmentNamespace"] as const;

const anyOf = (fields: readonly string[]) => fields.map((f) => `has(self.${f})`).join(" || ");

/**
 * The original's CEL rules on networkConfig (its api/v1alpha1/infra_types.go): the API server applies
 * them at admission. src/model/network.ts checks the same rules for manifests read without one.
 */
export const NETWORK_CONFIG_RULES: readonly { rule: string; message: string }[] = [
  {
    rule: "has(self.attachment) || has(self.networkAttachmentDefinition)",
    message: "networkConfig must specify either attachment or networkAttachmentDefinition",
  },
  {
    rule: `!((${anyOf(LEGACY_NETWORK_FIELDS)}) && (${anyOf(STRUCTURED_NETWORK_FIELDS)}))`,
    message:
      "cannot mix legacy networkAttachmentDefinition/networkAttachmentNamespace with structured attachment/topology/role/exposure/ipam/routeAdvertisementsRef",
  },
  {
    rule: `has(self.attachment) || !(${anyOf(STRUCTURED_NETWORK_FIELDS.slice(1))})`,
    message: "structured fields topology, role, exposure, ipam and routeAdvertisementsRef require attachment",
  },
  {
    rule: "!has(self.networkAttachmentNamespace) || has(self.networkAttachmentDefinition)",
    message: "networkAttachmentNamespace requires networkAttachmentDefinition",
  },
];

export const NetworkConfig = Type.Object(
  {
    cidr: Type.String({ pattern: IPV4_CIDR, description: "IPv4 CIDR of the isolated VLAN, e.g. 192.0.2.0/24." }),
    gateway: opt(
      ipv4(
        "Default gateway of the VLAN; must lie inside cidr. Required except on a Primary network or with OVNKubernetes IPAM.",
      ),
    ),
    networkAttachmentDefinition: opt(
      Type.String({
        minLength: 1,
        description: "Legacy form: the Multus NetworkAttachmentDefinition of the VLAN (a Localnet Secondary network).",
      }),
    ),
    networkAttachmentNamespace: opt(
      Type.String({ description: "Namespace of the NetworkAttachmentDefinition; default: the Infra's namespace." }),
    ),
    attachment: opt(
      obj(
        {
          kind: AttachmentKind,
          name: Type.String({ minLength: 1, description: "Name of the NAD or of the ClusterUserDefinedNetwork." }),
          namespace: opt(
            Type.String({
              description:
                "NAD: its namespace, default the Infra's. CUDN: required, the namespace of the NAD OVN-Kubernetes generates for it.",
            }),
          ),
        },
        "Structured form: the network the components and the worker VMs attach to.",
      ),
    ),
    topology: opt(NetworkTopology),
    role: opt(NetworkRole),
    exposure: opt(NetworkExposure),
    ipam: opt(NetworkIpam),
    routeAdvertisementsRef: opt(
      obj(
        { name: Type.String({ minLength: 1 }) },
        "The cluster-scoped OVN-Kubernetes RouteAdvertisements of a BGP network.",
      ),
    ),
    dnsServers: opt(
      Type.Array(Type.String({ minLength: 1 }), {
        default: ["resolv.conf"],
        description:
          'Upstream resolvers: IPv4 addresses, or the literal "resolv.conf" to inherit the node\'s resolvers.',
      }),
    ),
  },
  {
    description:
      "The isolated VLAN the worker VMs are attached to: networkAttachmentDefinition (legacy) or attachment (structured), exactly one.",
    "x-kubernetes-validations": NETWORK_CONFIG_RULES,
  },
);

export const UnknownClientPolicy = Type.Union([Type.Literal("deny"), Type.Literal("pool")], {
  default: "deny",
  description:
    "What Kea does for a MAC that belongs to no known VMI: deny (no lease) or pool (a lease from rangeStart-rangeEnd).",
});

/**
 * One DHCP option by code (the original's `options[{code,value}]`). Value syntax per code is
 * checked by the model (src/model/dhcp-options.ts), with the field path of the entry.
 */
function DHCPOption() {
  return obj({
    code: Type.Integer({
      minimum: 1,
      maximum: 254,
      description:
        "DHCP option code, e.g. 26 (MTU), 42 (NTP servers), 119 (domain search), 121 (classless static routes).",
    }),
    value: Type.String({
      description:
        'Option value in Kea\'s text form: an integer, comma-separated addresses or names, or for 121 "dest/prefix - router" pairs.',
    }),
  });
}

export const DHCPConfig = obj(
  {
    enabled: opt(Type.Boolean({ default: true, description: "Deploy the Kea DHCPv4 server." })),
    serverIP: opt(ipv4("Static VLAN address of the DHCP server; required when enabled.")),
    rangeStart: opt(ipv4("First address of the dynamic pool.")),
    rangeEnd: opt(ipv4("Last address of the dynamic pool.")),
    leaseTime: opt(
      Type.String({
        pattern: GO_DURATION,
        default: "1h",
        description: "Lease lifetime as a Go duration (1h, 30m, 1h30m).",
      }),
    ),
    image: opt(Type.String({ description: "Kea container image." })),
    unknownClients: opt(UnknownClientPolicy),
    interface: opt(
      Type.String({
        minLength: 1,
        default: "net1",
        description: "Interface Kea listens on inside its pod (the Multus attachment).",
      }),
    ),
    options: opt(
      Type.Array(DHCPOption(), {
        description: "Extra DHCP options for every client (added to the DHCPServer's options).",
      }),
    ),
  },
  "Kea DHCPv4 on the VLAN.",
);

export const DNSConfig = obj(
  {
    enabled: opt(Type.Boolean({ default: true, description: "Deploy the split-horizon CoreDNS server." })),
    serverIP: opt(ipv4("Static VLAN address of the DNS server; required when enabled.")),
    image: opt(Type.String({ description: "CoreDNS container image." })),
    baseDomain: opt(
      Type.String({
        description: "Accepted for compatibility with the original operator; ignored: use an InfraClusterAttachment.",
      }),
    ),
    clusterName: opt(
      Type.String({
        description: "Accepted for compatibility with the original operator; ignored: use an InfraClusterAttachment.",
      }),
    ),
  },
  "CoreDNS with a VLAN view and a pod-network view.",
);

export const ExternalServiceConfig = obj({
  enabled: opt(
    Type.Boolean({
      default: false,
      description:
        "Deprecated (the original moved it to the InfraClusterAttachment's externalService): create the LoadBalancer Service <infra>-proxy-external on port 443.",
    }),
  ),
  addressPoolName: opt(
    Type.String({ description: "MetalLB address pool (annotation metallb.universe.tf/address-pool)." }),
  ),
  labels: opt(stringMap("Labels added to the Service.")),
  annotations: opt(stringMap("Annotations added to the Service.")),
  publishAttachmentOAuths: opt(
    Type.Boolean({
      default: false,
      description: "Append each Ready attachment's oauth.<domain> to external-dns.alpha.kubernetes.io/hostname.",
    }),
  ),
});

/** metav1.LabelSelector: matchLabels and matchExpressions are ANDed; `{}` selects everything. */
const labelSelector = (description: string) =>
  obj(
    {
      matchLabels: opt(stringMap("Labels the object must carry, each with this value.")),
      matchExpressions: opt(
        Type.Array(
          obj({
            key: Type.String({ minLength: 1 }),
            operator: Type.Union(
              [Type.Literal("In"), Type.Literal("NotIn"), Type.Literal("Exists"), Type.Literal("DoesNotExist")],
              { description: "In/NotIn need values; Exists/DoesNotExist take none." },
            ),
            values: opt(Type.Array(Type.String())),
          }),
        ),
      ),
    },
    description,
  );

export const InternalClientsConfig = obj({
  namespaceSelector: opt(
    labelSelector(
      "Namespaces whose pods may reach the proxy on the pod network (internalProxyService), as a label selector. Unset: none may; {}: every namespace.",
    ),
  ),
});
export type LabelSelector = NonNullable<Static<typeof InternalClientsConfig>["namespaceSelector"]>;

export const ProxyConfig = obj(
  {
    enabled: opt(Type.Boolean({ default: true, description: "Deploy the Envoy TLS-passthrough SNI proxy." })),
    serverIP: opt(ipv4("Static VLAN address of the proxy; required when enabled.")),
    internalProxyService: opt(
      Type.String({
        description:
          "ClusterIP, or svc.ns[.svc.cluster.local], of the proxy Service on the pod network; published in the default DNS view.",
      }),
    ),
    internalClients: section(
      InternalClientsConfig.properties,
      "Who may reach the proxy on the pod network; VLAN clients are not affected.",
    ),
    proxyImage: opt(Type.String({ description: "Envoy container image." })),
    managerImage: opt(Type.String({ description: "oooi image." })),
    controlPlaneNamespace: opt(
      Type.String({
        description: "Accepted for compatibility with the original operator; ignored: use an InfraClusterAttachment.",
      }),
    ),
    apiServerService: opt(
      Type.String({
        description: "Accepted for compatibility with the original operator; ignored: use an InfraClusterAttachment.",
      }),
    ),
    externalService: section(ExternalServiceConfig.properties),
  },
  "Envoy, configured live over xDS.",
);

export const InfraSpec = obj({
  networkConfig: NetworkConfig,
  infraComponents: section(
    {
      dhcp: section(DHCPConfig.properties, DHCPConfig.description),
      dns: section(DNSConfig.properties, DNSConfig.description),
      proxy: section(ProxyConfig.properties, ProxyConfig.description),
    },
    "The three VLAN services.",
  ),
});

export const InfraStatus = obj({
  conditions: opt(Conditions),
  componentStatus: opt(
    obj(
      {
        dhcpReady: opt(Type.Boolean()),
        dnsReady: opt(Type.Boolean()),
        proxyReady: opt(Type.Boolean()),
      },
      "True only when the workload is available and its data plane acknowledged the current config.",
    ),
  ),
  attachments: opt(obj({ total: opt(Type.Integer()), ready: opt(Type.Integer()) })),
  observedGeneration: opt(Type.Integer()),
});

// ---------------------------------------------------------------- InfraClusterAttachment

/**
 * The longest name oooi publishes under a hosted cluster's domain is konnectivity.<domain>
 * (src/model/backends.ts CONTROL_PLANE_HOSTS); a DNS name has at most 253 characters.
 */
export const DOMAIN_MAX_LENGTH = 253 - "konnectivity.".length;

export const AppsIngressPhase = Type.Union([Type.Literal("Pending"), Type.Literal("Ready"), Type.Literal("Degraded")]);

export const AppsIngressConfig = obj({
  enabled: opt(
    Type.Boolean({
      default: false,
      description: "Automate the hosted cluster's *.apps ingress (MetalLB VIP + SNI backends + DNS).",
    }),
  ),
  metallb: opt(
    obj({
      addressPoolName: opt(Type.String({ description: "MetalLB IPAddressPool in the hosted cluster." })),
      ipAddressPoolRange: opt(Type.String({ description: "Address range of that pool, on the VLAN." })),
      l2AdvertisementName: opt(Type.String({ description: "Default: advertise-<addressPoolName>." })),
      installOperator: opt(
        Type.Boolean({
          default: true,
          description:
            "Install MetalLB through OLM (Subscription, MetalLB, IPAddressPool, L2Advertisement); false = use a MetalLB already running in the hosted cluster and install nothing.",
        }),
      ),
      channel: opt(
        Type.String({ default: "stable", description: "OLM channel of the metallb-operator Subscription." }),
      ),
      source: opt(
        Type.String({
          default: "redhat-operators",
          description: "OLM CatalogSource (in openshift-marketplace) of the Subscription.",
        }),
      ),
    }),
  ),
  service: section({
    name: opt(Type.String({ default: "oooi-ingress" })),
    namespace: opt(Type.String({ default: "openshift-ingress" })),
    labels: opt(stringMap("Labels of the ingress LoadBalancer Service.")),
    annotations: opt(stringMap("Annotations of the ingress LoadBalancer Service.")),
  }),
  ports: section({
    http: opt(Type.Integer({ minimum: 1, maximum: 65535, default: 80 })),
    https: opt(Type.Integer({ minimum: 1, maximum: 65535, default: 443 })),
  }),
});

/** The original's per-attachment public proxy Service (its docs' externalService on the attachment). */
export const AttachmentExternalService = obj({
  enabled: opt(
    Type.Boolean({
      default: false,
      description:
        "Create the LoadBalancer Service <attachment>-proxy-external on port 443 only, selecting the shared proxy pods.",
    }),
  ),
  addressPoolName: opt(
    Type.String({ description: "MetalLB address pool (annotation metallb.universe.tf/address-pool)." }),
  ),
  labels: opt(stringMap("Labels added to the Service (e.g. the one an ExternalDNS instance filters on).")),
  annotations: opt(
    stringMap("Annotations added to the Service (e.g. external-dns.alpha.kubernetes.io/hostname: oauth.<domain>)."),
  ),
});

export const InfraClusterAttachmentSpec = obj({
  infraRef: obj({ name: Type.String({ minLength: 1, description: "Infra in the same namespace." }) }),
  hostedClusterRef: obj({
    name: Type.String({ minLength: 1, description: "HyperShift HostedCluster name." }),
    namespace: opt(Type.String({ default: "clusters", description: "HostedCluster namespace." })),
  }),
  dns: Type.Object(
    {
      clusterName: Type.String({
        minLength: 1,
        maxLength: 63,
        pattern: DNS_LABEL,
        description: "Hosted cluster name in its DNS domain.",
      }),
      baseDomain: Type.String({
        minLength: 1,
        maxLength: 253,
        pattern: DNS_SUBDOMAIN,
        description: "Base domain; the cluster's domain is <clusterName>.<baseDomain>.",
      }),
    },
    {
      // The API server checks the whole domain; the model does too (src/model/attachments.ts).
      "x-kubernetes-validations": [
        {
          rule: `self.clusterName.size() + 1 + self.baseDomain.size() <= ${String(DOMAIN_MAX_LENGTH)}`,
          message: `<clusterName>.<baseDomain> must be at most ${String(DOMAIN_MAX_LENGTH)} characters, so that konnectivity.<domain> is a DNS name of at most 253`,
        },
      ],
    },
  ),
  controlPlaneNamespace: opt(
    Type.String({ description: "Default: <hostedClusterRef.namespace>-<hostedClusterRef.name>." }),
  ),
  apiServerService: opt(
    Type.String({
      default: "kube-apiserver",
      description: "Hosted API server Service in the control-plane namespace.",
    }),
  ),
  appsIngress: section(AppsIngressConfig.properties),
  externalService: section(AttachmentExternalService.properties),
});

export const AppsIngressStatus = obj({
  phase: opt(AppsIngressPhase),
  reason: opt(Type.String()),
  message: opt(Type.String()),
  externalIP: opt(Type.String()),
  externalHostname: opt(Type.String()),
  lastSyncTime: opt(Type.String({ format: "date-time" })),
  appliedServiceName: opt(Type.String({ description: "The hosted ingress Service oooi last applied." })),
  appliedServiceNamespace: opt(Type.String({ description: "Its namespace." })),
  appliedAddressPoolName: opt(Type.String({ description: "The MetalLB IPAddressPool oooi last applied." })),
  appliedL2AdvertisementName: opt(Type.String({ description: "The L2Advertisement oooi last applied." })),
});

export const PublishedEndpointStatus = obj({
  name: Type.String({ description: "api, oauth, ignition or konnectivity." }),
  hostname: Type.String({ description: "The name DNS answers with the proxy's address and Envoy matches by SNI." }),
  port: Type.Integer({ description: "The proxy's listener: 443 or 6443." }),
  source: Type.String({
    description:
      "Where the name came from: `HostedCluster <field path>` (its status or spec.services[]) or `convention` (<name>.<clusterName>.<baseDomain>).",
  }),
});

export const InfraClusterAttachmentStatus = obj({
  conditions: opt(Conditions),
  observedGeneration: opt(Type.Integer()),
  domain: opt(Type.String()),
  controlPlaneNamespace: opt(Type.String()),
  endpoints: opt(
    Type.Array(PublishedEndpointStatus, {
      description: "The names workers dial for the hosted control plane, and where each came from.",
    }),
  ),
  appsIngressStatus: opt(AppsIngressStatus),
});

// ---------------------------------------------------------------- children

const ChildNetwork = {
  networkAttachmentName: opt(Type.String()),
  networkAttachmentNamespace: opt(Type.String()),
};

export const DHCPServerSpec = obj({
  networkConfig: obj({
    cidr: Type.String({ pattern: IPV4_CIDR }),
    gateway: ipv4("Router option."),
    serverIP: ipv4("Static VLAN address of Kea."),
    dnsServers: opt(Type.Array(ipv4("Advertised resolver."))),
    ...ChildNetwork,
  }),
  leaseConfig: obj({
    rangeStart: opt(ipv4("First pool address.")),
    rangeEnd: opt(ipv4("Last pool address.")),
    leaseTime: opt(Type.String({ pattern: GO_DURATION, default: "1h" })),
  }),
  options: opt(Type.Array(DHCPOption())),
  image: opt(Type.String()),
  interface: opt(Type.String({ default: "net1" })),
  unknownClients: opt(UnknownClientPolicy),
});

/** One address held by one MAC; `releasedAt` set once its VMI is gone (kept for the lease time). */
export const DHCPAllocation = obj({
  mac: Type.String({ pattern: MAC }),
  ip: ipv4("Address allocated to the MAC."),
  vmi: Type.String({ description: "<namespace>/<name> of the VMI that last held it." }),
  releasedAt: opt(
    Type.String({
      format: "date-time",
      description: "When the VMI went away; the address is kept for the MAC until the lease time has passed.",
    }),
  ),
});
export type DHCPAllocation = Static<typeof DHCPAllocation>;

export const DHCPServerStatus = obj({
  conditions: opt(Conditions),
  observedGeneration: opt(Type.Integer()),
  activeLeases: opt(Type.Integer()),
  totalLeases: opt(Type.Integer()),
  ackedVersion: opt(Type.String({ description: "KeaConfig version the dhcp-agent last ACKed." })),
  lastNack: opt(Type.String({ description: "Kea's message for the last configuration it rejected." })),
  allocations: opt(
    Type.Array(DHCPAllocation, {
      description:
        "The durable address table: which MAC holds which address. Read back at start, so addresses survive operator restarts and leader changes.",
    }),
  ),
});

export const DNSRecordView = Type.Union([Type.Literal("vlan"), Type.Literal("default")]);

export const DNSServerSpec = obj({
  networkConfig: obj({
    serverIP: ipv4("Static VLAN address of CoreDNS."),
    proxyIP: opt(ipv4("The proxy's VLAN address (VLAN view answers); absent when the proxy is disabled.")),
    internalProxyIP: opt(ipv4("The proxy's ClusterIP (default view answers).")),
    secondaryNetworkCIDR: opt(
      Type.String({
        pattern: IPV4_CIDR,
        description: "Clients inside it get the VLAN view (the original's DNSServer may omit it).",
      }),
    ),
    ...ChildNetwork,
    dnsPort: opt(
      Type.Integer({
        minimum: 1,
        maximum: 65535,
        description: "Accepted for compatibility with the original operator; ignored: CoreDNS listens on 53.",
      }),
    ),
  }),
  staticEntries: opt(
    Type.Array(
      obj({
        hostname: Type.String({ minLength: 1 }),
        ip: ipv4("A record value."),
        view: opt(
          Type.Union([Type.Literal("vlan"), Type.Literal("default")], {
            description: "View the record is published in; the original's entries have none.",
          }),
        ),
      }),
    ),
  ),
  hostedClusterDomain: opt(
    Type.String({
      description:
        "Accepted for compatibility with the original operator; ignored: domains come from the Infra's attachments.",
    }),
  ),
  upstreamDNS: opt(Type.Array(Type.String())),
  image: opt(Type.String()),
  reloadInterval: opt(Type.String({ pattern: SIMPLE_DURATION, default: "5s" })),
  cacheTTL: opt(Type.String({ pattern: SIMPLE_DURATION, default: "30s" })),
});

export const DNSServerStatus = obj({
  conditions: opt(Conditions),
  observedGeneration: opt(Type.Integer()),
  configMapName: opt(Type.String()),
});

export const ProxyBackend = obj({
  name: Type.String({ minLength: 1 }),
  hostname: opt(Type.String({ description: "Primary SNI name; absent for source-only backends." })),
  alternateHostnames: opt(Type.Array(Type.String())),
  sourcePrefixRanges: opt(Type.Array(Type.String({ pattern: IPV4_CIDR }))),
  port: Type.Integer({ minimum: 1, maximum: 65535, description: "Listener port." }),
  targetService: Type.String({ description: "Service name, or an IPv4 address." }),
  targetNamespace: opt(Type.String()),
  targetPort: Type.Integer({ minimum: 1, maximum: 65535 }),
  timeoutSeconds: opt(Type.Integer({ minimum: 1, default: 30 })),
  protocol: opt(
    Type.String({
      description:
        "Accepted for compatibility with the original operator; ignored: every backend is TCP (TLS passthrough or plain HTTP by port).",
    }),
  ),
});

export const ProxyServerSpec = obj({
  networkConfig: obj({ serverIP: ipv4("Static VLAN address of Envoy."), ...ChildNetwork }),
  xdsPort: opt(Type.Integer({ minimum: 1, maximum: 65535, default: 18000 })),
  port: opt(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: "Accepted for compatibility with the original operator; ignored: listeners are 443, 6443 and 80.",
    }),
  ),
  logLevel: opt(
    Type.String({
      description: "Accepted for compatibility with the original operator; ignored: Envoy logs at its default level.",
    }),
  ),
  backends: opt(Type.Array(ProxyBackend)),
  proxyImage: opt(Type.String()),
  managerImage: opt(Type.String()),
});

export const ProxyServerStatus = obj({
  conditions: opt(Conditions),
  observedGeneration: opt(Type.Integer()),
  ackedVersion: opt(Type.String()),
  lastNack: opt(Type.String()),
});

// ---------------------------------------------------------------- object names

/**
 * The names oooi derives from an Infra's (src/model/children.ts, src/operator/desired/, the
 * client certificate Secrets of src/pki/mount.ts), with the longest each may be: a Service's name
 * is an RFC 1035 label (at most 63), other objects' RFC 1123 subdomains (253), and the Infra's name
 * is itself the value of labels (63) on everything it owns.
 */
export const INFRA_DERIVED_NAMES: readonly { readonly suffix: string; readonly what: string; readonly max: number }[] =
  [
    { suffix: "", what: "label value", max: 63 },
    { suffix: "-proxy", what: "Service", max: 63 },
    { suffix: "-dns", what: "Service", max: 63 },
    { suffix: "-proxy-external", what: "Service", max: 63 },
    { suffix: "-dhcp", what: "DHCPServer, Deployment, NetworkAttachmentDefinition", max: 253 },
    { suffix: "-proxy-bootstrap", what: "ConfigMap", max: 253 },
    { suffix: "-dhcp-bootstrap", what: "ConfigMap", max: 253 },
    { suffix: "-dhcp-leases", what: "PersistentVolumeClaim", max: 253 },
    { suffix: "-dhcp-xds-tls", what: "Secret", max: 253 },
    { suffix: "-proxy-xds-tls", what: "Secret", max: 253 },
  ];

/** 48: <infra>-proxy-external is a Service's name. */
export const INFRA_NAME_MAX_LENGTH = Math.min(...INFRA_DERIVED_NAMES.map((d) => d.max - d.suffix.length));

/**
 * An Infra's metadata.name: its Services' names begin with it, so an RFC 1035 label (a letter
 * first, no dot), short enough for the longest of them.
 */
const INFRA_NAME = Type.String({
  minLength: 1,
  maxLength: INFRA_NAME_MAX_LENGTH,
  pattern: SERVICE_NAME,
  [WHY]: "the Service <name>-proxy-external must fit in 63",
});

/** metadata.name of the other kinds: what the API server requires of any custom resource's. */
const OBJECT_NAME_SCHEMA = Type.String({ minLength: 1, maxLength: 253, pattern: OBJECT_NAME });

/** metadata.namespace: a Namespace's name is an RFC 1123 label. */
export const NAMESPACE_SCHEMA = Type.String({ minLength: 1, maxLength: 63, pattern: DNS_LABEL });

// ---------------------------------------------------------------- kinds

export interface KindDefinition {
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly description: string;
  /** What metadata.name must be (checked by src/api/validate.ts, the CRD and the model). */
  readonly name: TString;
  readonly spec: TObject;
  readonly status: TObject;
  readonly printerColumns: readonly PrinterColumn[];
}

/** One additionalPrinterColumn; priority 1 columns show only under `kubectl get -o wide`. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: string;
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

const READY_COLUMN = { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type=='Ready')].status" };
const REASON_COLUMN = { name: "Reason", type: "string", jsonPath: ".status.conditions[?(@.type=='Ready')].reason" };
const AGE_COLUMN = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };
const conditionColumn = (name: string, type: string): PrinterColumn => ({
  name,
  type: "string",
  jsonPath: `.status.conditions[?(@.type=='${type}')].status`,
});

export const KINDS: readonly KindDefinition[] = [
  {
    kind: "Infra",
    plural: "infras",
    singular: "infra",
    shortNames: ["infra"],
    description: "One shared VLAN stack (DHCP, split-horizon DNS, SNI proxy) for KubeVirt hosted-cluster workers.",
    name: INFRA_NAME,
    spec: InfraSpec,
    status: InfraStatus,
    printerColumns: [
      READY_COLUMN,
      { name: "Attachments", type: "integer", jsonPath: ".status.attachments.total" },
      conditionColumn("DHCP", "DHCPReady"),
      conditionColumn("DNS", "DNSReady"),
      conditionColumn("Proxy", "ProxyReady"),
      AGE_COLUMN,
      { ...REASON_COLUMN, priority: 1 },
      { name: "Message", type: "string", jsonPath: ".status.conditions[?(@.type=='Ready')].message", priority: 1 },
    ],
  },
  {
    kind: "InfraClusterAttachment",
    plural: "infraclusterattachments",
    singular: "infraclusterattachment",
    shortNames: ["ica", "infraattachment"],
    description: "Attaches one HyperShift HostedCluster to an Infra in the same namespace.",
    name: OBJECT_NAME_SCHEMA,
    spec: InfraClusterAttachmentSpec,
    status: InfraClusterAttachmentStatus,
    printerColumns: [
      { name: "Infra", type: "string", jsonPath: ".spec.infraRef.name" },
      { name: "HostedCluster", type: "string", jsonPath: ".spec.hostedClusterRef.name" },
      { name: "Domain", type: "string", jsonPath: ".status.domain" },
      READY_COLUMN,
      REASON_COLUMN,
      AGE_COLUMN,
    ],
  },
  {
    kind: "DHCPServer",
    plural: "dhcpservers",
    singular: "dhcpserver",
    shortNames: ["dhcp"],
    description: "Kea DHCPv4 server of an Infra (generated).",
    name: OBJECT_NAME_SCHEMA,
    spec: DHCPServerSpec,
    status: DHCPServerStatus,
    printerColumns: [
      { name: "CIDR", type: "string", jsonPath: ".spec.networkConfig.cidr" },
      { name: "ServerIP", type: "string", jsonPath: ".spec.networkConfig.serverIP" },
      { name: "Leases", type: "integer", jsonPath: ".status.activeLeases" },
      READY_COLUMN,
      AGE_COLUMN,
    ],
  },
  {
    kind: "DNSServer",
    plural: "dnsservers",
    singular: "dnsserver",
    // Not "dns": kubectl would be ambiguous with OpenShift's dns.config.openshift.io.
    shortNames: [],
    description: "Split-horizon CoreDNS server of an Infra (generated).",
    name: OBJECT_NAME_SCHEMA,
    spec: DNSServerSpec,
    status: DNSServerStatus,
    printerColumns: [
      { name: "ServerIP", type: "string", jsonPath: ".spec.networkConfig.serverIP" },
      { name: "ProxyIP", type: "string", jsonPath: ".spec.networkConfig.proxyIP" },
      READY_COLUMN,
      AGE_COLUMN,
    ],
  },
  {
    kind: "ProxyServer",
    plural: "proxyservers",
    singular: "proxyserver",
    // Not "proxy": kubectl would be ambiguous with OpenShift's proxy.config.openshift.io.
    shortNames: [],
    description: "Envoy SNI proxy of an Infra, configured over xDS (generated).",
    name: OBJECT_NAME_SCHEMA,
    spec: ProxyServerSpec,
    status: ProxyServerStatus,
    printerColumns: [
      { name: "ServerIP", type: "string", jsonPath: ".spec.networkConfig.serverIP" },
      { name: "Acked", type: "string", jsonPath: ".status.ackedVersion" },
      READY_COLUMN,
      AGE_COLUMN,
    ],
  },
];

export const MAC_PATTERN = new RegExp(MAC);

// ---------------------------------------------------------------- object types

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export interface Resource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

export type InfraSpec = Static<typeof InfraSpec>;
export type InfraStatus = Static<typeof InfraStatus>;
export type Infra = Resource<InfraSpec, InfraStatus>;
export type InfraClusterAttachmentSpec = Static<typeof InfraClusterAttachmentSpec>;
export type InfraClusterAttachmentStatus = Static<typeof InfraClusterAttachmentStatus>;
export type AppsIngressStatus = Static<typeof AppsIngressStatus>;
export type InfraClusterAttachment = Resource<InfraClusterAttachmentSpec, InfraClusterAttachmentStatus>;
export type DHCPServerSpec = Static<typeof DHCPServerSpec>;
export type DHCPServer = Resource<DHCPServerSpec, Static<typeof DHCPServerStatus>>;
export type DNSServerSpec = Static<typeof DNSServerSpec>;
export type DNSServer = Resource<DNSServerSpec, Static<typeof DNSServerStatus>>;
export type ProxyBackend = Static<typeof ProxyBackend>;
export type ProxyServerSpec = Static<typeof ProxyServerSpec>;
export type ProxyServer = Resource<ProxyServerSpec, Static<typeof ProxyServerStatus>>;
export type UnknownClientPolicy = Static<typeof UnknownClientPolicy>;
export type NetworkConfig = Static<typeof NetworkConfig>;
export type AttachmentKind = Static<typeof AttachmentKind>;
export type NetworkTopology = Static<typeof NetworkTopology>;
export type NetworkRole = Static<typeof NetworkRole>;
export type NetworkExposure = Static<typeof NetworkExposure>;
export type NetworkIpam = Static<typeof NetworkIpam>;
