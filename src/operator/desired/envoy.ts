// The Envoy workload of a ProxyServer: its bootstrap (ADS to the operator), Deployment and
// Services. Envoy receives listeners and clusters only over xDS; the bootstrap never changes with
// attachments. Pure.
import { contentHash, CONFIG_HASH_ANNOTATION, type DesiredObject, type OwnerReference } from "./objects.js";
import { NETWORKS_ANNOTATION } from "./network.js";
import { envoyBootstrap, readinessListener, READY_PORT, sdsFiles, type BootstrapTls } from "../../envoy/bootstrap.js";
import { XDS_TLS_DIR, xdsTlsVolume } from "../../pki/mount.js";
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
/** Ports the xDS-delivered listeners bind (docs/reference.md#backends). */
export const PROXY_PORTS = [
  { name: "https", port: 443 },
  { name: "kube-apiserver", port: 6443 },
  { name: "http", port: 80 },
] as const;
/** Envoy images run as user envoy (uid 101). */
export const ENVOY_UID = 101;

/** What the proxy workload needs from the caller. */
export interface EnvoyWorkloadInput extends WorkloadInput {
  /** "<namespace>/<ProxyServer name>". */
  readonly nodeCluster: string;
  readonly xds: { readonly host: string; readonly port: number };
  readonly image: string;
  readonly pinUserIds: boolean;
  /** ADS over mTLS with the pod's client certificate Secret. */
  readonly xdsTls: boolean;
}

/** The bootstrap ConfigMap `<infra>-proxy-bootstrap` and the Deployment `<infra>-proxy`. */
export function envoyWorkload(input: EnvoyWorkloadInput): DesiredObject[] {
  const tls = xdsTlsVolume(input.nodeCluster);
  const configMapName = `${input.infraName}-proxy-bootstrap`;
  const tlsFiles: BootstrapTls | undefined = input.xdsTls ? { certDir: XDS_TLS_DIR, sdsDir: BOOTSTRAP_DIR } : undefined;
  const text = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  const data: Record<string, string> = {
    [BOOTSTRAP_KEY]: text(envoyBootstrap(input.nodeCluster, input.xds, tlsFiles)),
    // The SDS files name the certificate files; their content is never in the ConfigMap or the template.
    ...(tlsFiles === undefined
      ? {}
      : Object.fromEntries(Object.entries(sdsFiles(tlsFiles)).map(([k, v]) => [k, text(v)]))),
  };
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
    volumeMounts: [{ name: "bootstrap", mountPath: BOOTSTRAP_DIR, readOnly: true }, tls.mount],
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
      volumes: [{ name: "bootstrap", configMap: { name: configMapName } }, tls.volume],
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
