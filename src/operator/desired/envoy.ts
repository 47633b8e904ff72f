// The Envoy workload of a ProxyServer: its bootstrap (ADS to the operator), Deployment and
// Services. Envoy receives listeners and clusters only over xDS; the bootstrap never changes with
// attachments. Pure.
import { contentHash, CONFIG_HASH_ANNOTATION, type DesiredObject, type OwnerReference } from "./objects.js";
import { NETWORKS_ANNOTATION } from "./network.js";
import {
  deployment,
  nonRootContainer,
  podSecurity,
  POD_IDENTITY_ENV,
  POD_IP_ENV,
  resources,
  type WorkloadInput,
} from "./pod.js";

/** ConfigMap key of the bootstrap. */
export const BOOTSTRAP_KEY = "bootstrap.json";
/** Where the bootstrap ConfigMap is mounted. */
export const BOOTSTRAP_DIR = "/etc/envoy";
/** Envoy's admin interface: loopback only, so nothing outside the pod reaches it. */
export const ADMIN_PORT = 9901;
/**
 * Readiness listener: on all addresses, but serving exactly one route, GET /ready, proxied to the
 * admin /ready (LIVE only once the initial xDS fetch is done; 503 while draining).
 */
export const READY_PORT = 8081;
/** Ports the xDS-delivered listeners bind (docs/reference.md#backends). */
export const PROXY_PORTS = [
  { name: "https", port: 443 },
  { name: "kube-apiserver", port: 6443 },
  { name: "http", port: 80 },
] as const;
/** Envoy images run as user envoy (uid 101). */
export const ENVOY_UID = 101;
/** Name of the bootstrap's static cluster reaching the operator's xDS Service. */
export const XDS_CLUSTER = "oooi-xds";
const ADMIN_CLUSTER = "envoy-admin";

const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
const HTTP_OPTIONS = "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/** Splits "host:port"; undefined when the port is not 1-65535. */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const colon = address.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const portText = address.slice(colon + 1);
  const port = Number(portText);
  if (!/^[0-9]{1,5}$/.test(portText) || port < 1 || port > 65535 || host === "") return undefined;
  return { host, port };
}

function socketAddress(address: string, port: number): Record<string, unknown> {
  return { socket_address: { address, port_value: port } };
}

function loadAssignment(cluster: string, address: string, port: number): Record<string, unknown> {
  return {
    cluster_name: cluster,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(address, port) } }] }],
  };
}

/**
 * The readiness listener (admin /ready through its cluster) on `address`. Not in the bootstrap file:
 * Envoy does not expand variables there, so it is given with --config-yaml, which Envoy merges into
 * the bootstrap (repeated fields append), as `$(POD_IP)` — Kubernetes expands that in args from the
 * downward API — so the port listens on the pod network only, never on the VLAN interface.
 */
export function readinessListener(address: string): Record<string, unknown> {
  return {
    name: "readiness",
    address: socketAddress(address, READY_PORT),
    filter_chains: [
      {
        filters: [
          {
            name: "envoy.filters.network.http_connection_manager",
            typed_config: {
              "@type": HCM,
              stat_prefix: "readiness",
              route_config: {
                name: "readiness",
                virtual_hosts: [
                  {
                    name: "readiness",
                    domains: ["*"],
                    routes: [{ match: { path: "/ready" }, route: { cluster: ADMIN_CLUSTER } }],
                  },
                ],
              },
              http_filters: [{ name: "envoy.filters.http.router", typed_config: { "@type": ROUTER } }],
            },
          },
        ],
      },
    ],
  };
}

/**
 * envoy.config.bootstrap.v3.Bootstrap as proto3 JSON. `node.cluster` selects the snapshot
 * ("<namespace>/<ProxyServer>"); `node.id` comes from --service-node (the pod), so replicas and
 * restarts need no per-pod file.
 */
export function envoyBootstrap(nodeCluster: string, xds: { host: string; port: number }): Record<string, unknown> {
  return {
    node: { cluster: nodeCluster },
    admin: { address: socketAddress("127.0.0.1", ADMIN_PORT) },
    dynamic_resources: {
      ads_config: {
        api_type: "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: XDS_CLUSTER } }],
      },
      cds_config: { ads: {}, resource_api_version: "V3" },
      lds_config: { ads: {}, resource_api_version: "V3" },
    },
    static_resources: {
      clusters: [
        {
          name: XDS_CLUSTER,
          type: "STRICT_DNS",
          dns_lookup_family: "V4_ONLY",
          connect_timeout: "5s",
          load_assignment: loadAssignment(XDS_CLUSTER, xds.host, xds.port),
          typed_extension_protocol_options: {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
              "@type": HTTP_OPTIONS,
              // gRPC needs HTTP/2; keepalive pings notice a vanished operator replica quickly.
              explicit_http_config: {
                http2_protocol_options: { connection_keepalive: { interval: "30s", timeout: "10s" } },
              },
            },
          },
        },
        {
          name: ADMIN_CLUSTER,
          type: "STATIC",
          connect_timeout: "1s",
          load_assignment: loadAssignment(ADMIN_CLUSTER, "127.0.0.1", ADMIN_PORT),
        },
      ],
    },
  };
}

/** What the proxy workload needs from the caller. */
export interface EnvoyWorkloadInput extends WorkloadInput {
  /** "<namespace>/<ProxyServer name>". */
  readonly nodeCluster: string;
  readonly xds: { readonly host: string; readonly port: number };
  readonly image: string;
  readonly pinUserIds: boolean;
}

/** The bootstrap ConfigMap `<infra>-proxy-bootstrap` and the Deployment `<infra>-proxy`. */
export function envoyWorkload(input: EnvoyWorkloadInput): DesiredObject[] {
  const configMapName = `${input.infraName}-proxy-bootstrap`;
  const data = { [BOOTSTRAP_KEY]: `${JSON.stringify(envoyBootstrap(input.nodeCluster, input.xds), null, 2)}\n` };
  const configMap: DesiredObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: configMapName, namespace: input.namespace, labels: input.labels, ownerReferences: [input.owner] },
    data,
  };
  const envoy = {
    name: "envoy",
    image: input.image,
    // The image's entrypoint script switches users; run Envoy itself, already non-root.
    command: ["/usr/local/bin/envoy"],
    args: [
      "--config-path",
      `${BOOTSTRAP_DIR}/${BOOTSTRAP_KEY}`,
      "--service-node",
      "$(POD_NAMESPACE)/$(POD_NAME)",
      // No shared memory for hot restart: Kubernetes replaces pods instead, and the root FS stays read-only.
      "--disable-hot-restart",
      "--log-level",
      "info",
      "--config-yaml",
      JSON.stringify({ static_resources: { listeners: [readinessListener(`$(${POD_IP_ENV.name})`)] } }),
    ],
    env: [...POD_IDENTITY_ENV, POD_IP_ENV],
    ports: [
      ...PROXY_PORTS.map((p) => ({ name: p.name, containerPort: p.port, protocol: "TCP" })),
      { name: "ready", containerPort: READY_PORT, protocol: "TCP" },
    ],
    readinessProbe: { httpGet: { path: "/ready", port: READY_PORT }, periodSeconds: 5, failureThreshold: 3 },
    // Listeners (the readiness one included) open once the initial xDS fetch ends or times out (15 s).
    livenessProbe: { tcpSocket: { port: READY_PORT }, initialDelaySeconds: 30, periodSeconds: 10, failureThreshold: 6 },
    resources: resources("100m", "128Mi", "512Mi"),
    securityContext: nonRootContainer(input.pinUserIds ? ENVOY_UID : undefined),
    volumeMounts: [{ name: "bootstrap", mountPath: BOOTSTRAP_DIR, readOnly: true }],
  };
  const workload = deployment({
    name: `${input.infraName}-proxy`,
    namespace: input.namespace,
    labels: input.labels,
    owner: input.owner,
    podLabels: input.podLabels,
    // Envoy reads its bootstrap only at start: a new bootstrap must roll the pod.
    podAnnotations: { [CONFIG_HASH_ANNOTATION]: contentHash(data), [NETWORKS_ANNOTATION]: input.networksAnnotation },
    podSpec: {
      securityContext: podSecurity(),
      terminationGracePeriodSeconds: 30,
      containers: [envoy],
      volumes: [{ name: "bootstrap", configMap: { name: configMapName } }],
    },
  });
  return [configMap, workload];
}

/** What the proxy Services need. */
export interface ProxyServicesInput {
  readonly infraName: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly podLabels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
}

/** `<infra>-proxy`: the pod-network entry point (what internalProxyService usually names). */
export function proxyService(input: ProxyServicesInput): DesiredObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: `${input.infraName}-proxy`,
      namespace: input.namespace,
      labels: input.labels,
      ownerReferences: [input.owner],
    },
    spec: {
      type: "ClusterIP",
      selector: { ...input.podLabels },
      ports: PROXY_PORTS.map((p) => ({ name: p.name, port: p.port, targetPort: p.port, protocol: "TCP" })),
    },
  };
}
