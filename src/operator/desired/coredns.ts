// The CoreDNS workload of a DNSServer: the rendered ConfigMap, the Deployment mounting it whole,
// and the pod-network Service. Pure.
import { COREFILE_KEY, DEFAULT_MOUNT_DIR } from "../../dns/render/index.js";
import { DNS_PORT, HEALTH_ADDRESS, METRICS_ADDRESS, READY_ADDRESS } from "../../dns/render/corefile.js";
import { contentHash, CONFIG_HASH_ANNOTATION, type DesiredObject } from "./objects.js";
import { NETWORKS_ANNOTATION } from "./network.js";
import { deployment, nonRootContainer, POD_IP_ENV, podSecurity, resources, type WorkloadInput } from "./pod.js";

/** CoreDNS images run as user nonroot (uid 65532). */
export const COREDNS_UID = 65532;
/** Port of the health plugin (liveness). */
export const HEALTH_PORT = portOf(HEALTH_ADDRESS);
/** Port of the ready plugin (readiness). */
export const READY_PORT = portOf(READY_ADDRESS);
/** Port of the prometheus plugin (`/metrics`, deploy/monitoring's PodMonitor scrapes it by name). */
export const METRICS_PORT = portOf(METRICS_ADDRESS);
/** The container port's name for METRICS_PORT. */
export const METRICS_PORT_NAME = "metrics";

function portOf(address: string): number {
  return Number(address.slice(address.lastIndexOf(":") + 1));
}

// Corefile directives CoreDNS binds or schedules once per process: a live reload may fail to
// re-bind a changed health/ready address (reload plugin, "Bugs"), and the metrics listener is bound
// the same way, so they roll the pod instead. Every block repeats the prometheus line; the set keeps
// it once.
const PROCESS_DIRECTIVES = new Set(["health", "prometheus", "ready", "reload"]);

/**
 * The part of a Corefile that a live reload cannot apply: process-wide directives and the set of
 * listen ports. Zones, views, forwarders and zone files are left out on purpose — the `reload`
 * plugin re-reads the Corefile and the `file` plugin the zone files (on a serial increase) while
 * serving, and the ConfigMap is mounted as a directory (no subPath), so kubelet swaps every key at
 * once. Adding an attachment therefore never restarts CoreDNS.
 */
export function corefileStructure(corefile: string): string {
  const lines = new Set<string>();
  for (const raw of corefile.split("\n")) {
    const line = raw.trim();
    const block = /^\S+:(\d+)\s*\{$/.exec(line);
    if (block?.[1] !== undefined) lines.add(`port ${block[1]}`);
    const directive = line.split(/\s+/)[0] ?? "";
    if (PROCESS_DIRECTIVES.has(directive)) lines.add(line);
  }
  return [...lines].sort().join("\n");
}

/** What the DNS workload needs from the caller. */
export interface CoreDnsWorkloadInput extends WorkloadInput {
  /** The renderer's ConfigMap data: Corefile plus zone files. */
  readonly files: Readonly<Record<string, string>>;
  readonly image: string;
  readonly pinUserIds: boolean;
}

/** The ConfigMap `<infra>-dns`, the Deployment `<infra>-dns` and the Service `<infra>-dns`. */
export function coreDnsWorkload(input: CoreDnsWorkloadInput): DesiredObject[] {
  const name = `${input.infraName}-dns`;
  const meta = { name, namespace: input.namespace, labels: input.labels, ownerReferences: [input.owner] };
  const configMap: DesiredObject = { apiVersion: "v1", kind: "ConfigMap", metadata: meta, data: { ...input.files } };
  const coredns = {
    name: "coredns",
    image: input.image,
    args: ["-conf", `${DEFAULT_MOUNT_DIR}/${COREFILE_KEY}`],
    // The Corefile's health, ready and metrics addresses are {$POD_IP}: the pod network only.
    env: [POD_IP_ENV],
    ports: [
      { name: "dns", containerPort: DNS_PORT, protocol: "UDP" },
      { name: "dns-tcp", containerPort: DNS_PORT, protocol: "TCP" },
      { name: "health", containerPort: HEALTH_PORT, protocol: "TCP" },
      { name: "ready", containerPort: READY_PORT, protocol: "TCP" },
      { name: METRICS_PORT_NAME, containerPort: METRICS_PORT, protocol: "TCP" },
    ],
    livenessProbe: {
      httpGet: { path: "/health", port: HEALTH_PORT },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      failureThreshold: 5,
    },
    readinessProbe: { httpGet: { path: "/ready", port: READY_PORT }, periodSeconds: 5, failureThreshold: 3 },
    resources: resources("50m", "64Mi", "256Mi"),
    securityContext: nonRootContainer(input.pinUserIds ? COREDNS_UID : undefined),
    // The whole ConfigMap as a directory, never subPath: only then do updates reach the pod.
    volumeMounts: [{ name: "config", mountPath: DEFAULT_MOUNT_DIR, readOnly: true }],
  };
  const workload = deployment({
    name,
    namespace: input.namespace,
    labels: input.labels,
    owner: input.owner,
    podLabels: input.podLabels,
    podAnnotations: {
      [CONFIG_HASH_ANNOTATION]: contentHash(corefileStructure(input.files[COREFILE_KEY] ?? "")),
      [NETWORKS_ANNOTATION]: input.networksAnnotation,
    },
    podSpec: {
      securityContext: podSecurity(),
      // "resolv.conf" upstreams mean the node's resolvers (docs/reference.md#infra), not the cluster DNS.
      dnsPolicy: "Default",
      terminationGracePeriodSeconds: 30,
      containers: [coredns],
      volumes: [{ name: "config", configMap: { name } }],
    },
  });
  const service: DesiredObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta,
    spec: {
      type: "ClusterIP",
      selector: { ...input.podLabels },
      ports: [
        { name: "dns", port: DNS_PORT, targetPort: DNS_PORT, protocol: "UDP" },
        { name: "dns-tcp", port: DNS_PORT, targetPort: DNS_PORT, protocol: "TCP" },
      ],
    },
  };
  return [configMap, workload, service];
}
