// A node group's Envoy bootstrap (envoy.config.bootstrap.v3.Bootstrap as proto3 JSON): ADS to an
// oooi xDS server, admin on loopback. The operator mounts it into the proxy pod and adds the
// readiness listener on the pod IP; `oooi render` and `oooi serve` write it beside envoy.json. It never changes with attachments:
// listeners and clusters arrive over xDS. Pure.
import { stringify } from "yaml";

/** Envoy's admin interface: loopback only, so nothing outside the pod reaches it. */
export const ADMIN_PORT = 9901;
/**
 * Readiness listener: on the pod IP, serving exactly one route, GET /ready, proxied to the admin
 * /ready (LIVE only once the initial xDS fetch is done; 503 while draining).
 */
export const READY_PORT = 8081;
/** Name of the bootstrap's static cluster reaching the operator's xDS Service. */
export const XDS_CLUSTER = "oooi-xds";
const ADMIN_CLUSTER = "envoy-admin";

const UPSTREAM_TLS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext";
const SECRET = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";
const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
const HTTP_OPTIONS = "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

function socketAddress(address: string, port: number): Record<string, unknown> {
  return { socket_address: { address, port_value: port } };
}

function loadAssignment(cluster: string, address: string, port: number): Record<string, unknown> {
  return {
    cluster_name: cluster,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(address, port) } }] }],
  };
}

/** mTLS to the xDS server with the certificate files of a mounted Secret (kubernetes.io/tls). */
export interface BootstrapTls {
  /** The mounted Secret: tls.crt, tls.key and ca.crt, swapped by the kubelet through `..data`. */
  readonly certDir: string;
  /** Where the two SDS files (sdsFiles) are, beside the bootstrap. */
  readonly sdsDir: string;
}

/** The SDS files the bootstrap names, by file name: one Secret resource each, in DiscoveryResponse form. */
export const SDS_CERT_FILE = "sds-client-certificate.json";
export const SDS_CA_FILE = "sds-xds-ca.json";
const CLIENT_SECRET = "oooi-xds-client";
const CA_SECRET = "oooi-xds-ca";

/**
 * The contents of the SDS files: the client certificate and the CA the server is checked with,
 * both read from `certDir`. Envoy reads a path_config_source file as a DiscoveryResponse.
 */
export function sdsFiles(tls: BootstrapTls): Record<string, Record<string, unknown>> {
  const file = (name: string): Record<string, unknown> => ({ filename: `${tls.certDir}/${name}` });
  return {
    [SDS_CERT_FILE]: {
      resources: [
        {
          "@type": SECRET,
          name: CLIENT_SECRET,
          tls_certificate: { certificate_chain: file("tls.crt"), private_key: file("tls.key") },
        },
      ],
    },
    [SDS_CA_FILE]: {
      resources: [{ "@type": SECRET, name: CA_SECRET, validation_context: { trusted_ca: file("ca.crt") } }],
    },
  };
}

/**
 * The ADS cluster's envoy.transport_sockets.tls: certificates by SDS from local files, reloaded
 * when the kubelet swaps the Secret volume's `..data` symlink — a move inside the watched
 * directory (envoyproxy.io api-v3 config/core/v3/config_source.proto PathConfigSource
 * watched_directory; the file path alone would not see a symlink swap). The server must present
 * the xDS host's name, signed by the CA.
 */
function adsTransportSocket(tls: BootstrapTls, serverName: string): Record<string, unknown> {
  const sds = (name: string, file: string): Record<string, unknown> => ({
    name,
    sds_config: {
      path_config_source: { path: `${tls.sdsDir}/${file}`, watched_directory: { path: tls.certDir } },
      resource_api_version: "V3",
    },
  });
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: {
      "@type": UPSTREAM_TLS,
      sni: serverName,
      common_tls_context: {
        alpn_protocols: ["h2"],
        tls_certificate_sds_secret_configs: [sds(CLIENT_SECRET, SDS_CERT_FILE)],
        combined_validation_context: {
          default_validation_context: {
            match_typed_subject_alt_names: [{ san_type: "DNS", matcher: { exact: serverName } }],
          },
          validation_context_sds_secret_config: sds(CA_SECRET, SDS_CA_FILE),
        },
      },
    },
  };
}

/**
 * envoy.config.bootstrap.v3.Bootstrap as proto3 JSON. `node.cluster` selects the snapshot
 * ("<namespace>/<ProxyServer>"); `node.id` comes from --service-node (the pod), so replicas and
 * restarts need no per-pod file. With `tls`, ADS is mTLS (adsTransportSocket).
 */
export function envoyBootstrap(
  nodeCluster: string,
  xds: { host: string; port: number },
  tls?: BootstrapTls,
): Record<string, unknown> {
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
          ...(tls === undefined ? {} : { transport_socket: adsTransportSocket(tls, xds.host) }),
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

/**
 * The readiness listener (admin /ready through its cluster) on `address`. Not in the bootstrap file:
 * Envoy does not expand variables there, so the operator gives it with --config-yaml, which Envoy
 * merges into the bootstrap (repeated fields append), as `$(POD_IP)` — Kubernetes expands that in
 * args from the downward API — so the port listens on the pod network only, never on the VLAN.
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
 * The address a client on this host dials for a server listening on `listen`: an unspecified
 * listen address (all interfaces) is reached through loopback.
 */
export function dialAddress(listen: { host: string; port: number }): { host: string; port: number } {
  const unspecified = listen.host === "" || listen.host === "0.0.0.0" || listen.host === "::";
  return { host: unspecified ? "127.0.0.1" : listen.host, port: listen.port };
}

/** The bootstrap as the YAML file `envoy -c bootstrap.yaml` reads (Envoy accepts YAML or JSON). */
export function envoyBootstrapYaml(nodeCluster: string, xds: { host: string; port: number }): string {
  return stringify(envoyBootstrap(nodeCluster, xds), { lineWidth: 0 });
}
