// The Kea workload of a DHCPServer: kea-dhcp4 plus the `oooi dhcp-agent` sidecar that drives its
// control socket, the PVC holding leases and the live config, and the seed configuration. Pure.
//
// Why uid 0: kea-dhcp4 answers on raw sockets (clients have no address yet), which needs
// CAP_NET_RAW in the effective set; Kubernetes gives added capabilities to non-root processes
// only through file capabilities, which `allowPrivilegeEscalation: false` (no_new_privs) blocks.
// So Kea runs as root with every capability dropped but NET_RAW, no escalation and a read-only
// root filesystem. The agent runs as root with no capabilities at all: Kea creates its control
// socket owned by root and not writable by others. On OpenShift the pod's ServiceAccount
// `<infra>-dhcp` needs an SCC allowing uid 0 and NET_RAW.
import { XDS_TLS_DIR, xdsTlsVolume } from "../../pki/mount.js";
import { bootstrapKeaConfig } from "../../dhcp/kea/bootstrap.js";
import { DEFAULT_CONTROL_SOCKET, DEFAULT_LEASE_FILE } from "../../dhcp/render/index.js";
import { contentHash, CONFIG_HASH_ANNOTATION, type DesiredObject } from "./objects.js";
import { NETWORKS_ANNOTATION } from "./network.js";
import { deployment, podSecurity, POD_IDENTITY_ENV, resources, rootContainer, type WorkloadInput } from "./pod.js";

/** ConfigMap key (and file name) of the Kea configuration. */
export const KEA_CONFIG_KEY = "kea-dhcp4.json";
/** Where the seed ConfigMap is mounted for the init container. */
export const KEA_SEED_DIR = "/etc/kea-seed";
/** Directory of the control socket, an emptyDir shared by Kea and the agent. */
export const KEA_SOCKET_DIR = DEFAULT_CONTROL_SOCKET.slice(0, DEFAULT_CONTROL_SOCKET.lastIndexOf("/"));
/** Directory of the lease file, the lease PVC. */
export const KEA_LEASE_DIR = DEFAULT_LEASE_FILE.slice(0, DEFAULT_LEASE_FILE.lastIndexOf("/"));
/**
 * The live kea-dhcp4.json, on the lease PVC: config-write rewrites it after every applied
 * config, so a Kea restarted while the control plane is down serves every reservation from it.
 */
export const KEA_CONFIG_PATH = `${KEA_LEASE_DIR}/${KEA_CONFIG_KEY}`;

/** What the DHCP workload needs from the caller. */
export interface KeaWorkloadInput extends WorkloadInput {
  /** "<namespace>/<DHCPServer name>": the agent's xDS node group. */
  readonly node: string;
  readonly xdsAddress: string;
  /** The agent dials xDS with mTLS, with the client certificate Secret mounted into the pod. */
  readonly xdsTls: boolean;
  readonly keaImage: string;
  readonly agentImage: string;
  readonly hooksDirectory: string;
  /** Interface Kea serves on (the Multus attachment's name in the pod). */
  readonly interfaceName: string;
  readonly leaseStorage: string;
  readonly leaseStorageClass: string | undefined;
}

/** ServiceAccount, seed ConfigMap, lease PVC and Deployment, all named `<infra>-dhcp…`. */
export function keaWorkload(input: KeaWorkloadInput): DesiredObject[] {
  const name = `${input.infraName}-dhcp`;
  const seedName = `${name}-bootstrap`;
  const pvcName = `${name}-leases`;
  const meta = (n: string) => ({
    name: n,
    namespace: input.namespace,
    labels: input.labels,
    ownerReferences: [input.owner],
  });

  const seed = bootstrapKeaConfig({
    controlSocket: DEFAULT_CONTROL_SOCKET,
    leaseFile: DEFAULT_LEASE_FILE,
    hooksDirectory: input.hooksDirectory,
    interfaces: [input.interfaceName],
  });
  const data = { [KEA_CONFIG_KEY]: `${JSON.stringify(seed, null, 2)}\n` };
  const serviceAccount: DesiredObject = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(name),
    automountServiceAccountToken: false,
  };
  const configMap: DesiredObject = { apiVersion: "v1", kind: "ConfigMap", metadata: meta(seedName), data };
  const pvc: DesiredObject = {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: meta(pvcName),
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: input.leaseStorage } },
      ...(input.leaseStorageClass === undefined ? {} : { storageClassName: input.leaseStorageClass }),
    },
  };

  const configPath = KEA_CONFIG_PATH;
  // The seed only fills an empty volume: a config Kea persisted (config-write) is never replaced
  // by the seed's `subnet4: []`, so Kea comes back serving what it served before.
  const seedContainer = {
    name: "seed-config",
    image: input.keaImage,
    command: ["sh", "-c", `[ -s ${configPath} ] || cp ${KEA_SEED_DIR}/${KEA_CONFIG_KEY} ${configPath}`],
    resources: resources("10m", "16Mi", "64Mi"),
    securityContext: rootContainer([]),
    volumeMounts: [
      { name: "seed", mountPath: KEA_SEED_DIR, readOnly: true },
      { name: "leases", mountPath: KEA_LEASE_DIR },
    ],
  };
  const kea = {
    name: "kea-dhcp4",
    image: input.keaImage,
    command: ["kea-dhcp4", "-c", configPath],
    env: [
      { name: "KEA_LOCKFILE_DIR", value: KEA_SOCKET_DIR },
      { name: "KEA_PIDFILE_DIR", value: KEA_SOCKET_DIR },
    ],
    ports: [{ name: "dhcp", containerPort: 67, protocol: "UDP" }],
    // The control socket is Kea's only liveness signal that needs no extra tooling.
    livenessProbe: {
      exec: { command: ["test", "-S", DEFAULT_CONTROL_SOCKET] },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      failureThreshold: 3,
    },
    resources: resources("50m", "64Mi", "256Mi"),
    securityContext: rootContainer(["NET_RAW"]),
    volumeMounts: [
      { name: "run", mountPath: KEA_SOCKET_DIR },
      { name: "leases", mountPath: KEA_LEASE_DIR },
    ],
  };
  const tls = xdsTlsVolume(input.node);
  const agent = {
    name: "dhcp-agent",
    image: input.agentImage,
    args: [
      "dhcp-agent",
      "--kea-socket",
      DEFAULT_CONTROL_SOCKET,
      "--xds",
      input.xdsAddress,
      "--node",
      input.node,
      // Read again at every connection: the kubelet's `..data` swap on rotation needs no restart.
      ...(input.xdsTls
        ? [
            "--tls-cert",
            `${XDS_TLS_DIR}/tls.crt`,
            "--tls-key",
            `${XDS_TLS_DIR}/tls.key`,
            "--tls-ca",
            `${XDS_TLS_DIR}/ca.crt`,
          ]
        : []),
    ],
    env: POD_IDENTITY_ENV,
    resources: resources("20m", "64Mi", "256Mi"),
    securityContext: rootContainer([]),
    volumeMounts: [{ name: "run", mountPath: KEA_SOCKET_DIR }, tls.mount],
  };
  const workload = deployment({
    name,
    namespace: input.namespace,
    labels: input.labels,
    owner: input.owner,
    podLabels: input.podLabels,
    podAnnotations: { [CONFIG_HASH_ANNOTATION]: contentHash(data), [NETWORKS_ANNOTATION]: input.networksAnnotation },
    podSpec: {
      serviceAccountName: name,
      securityContext: podSecurity(),
      terminationGracePeriodSeconds: 30,
      initContainers: [seedContainer],
      containers: [kea, agent],
      volumes: [
        { name: "seed", configMap: { name: seedName } },
        { name: "run", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
        { name: "leases", persistentVolumeClaim: { claimName: pvcName } },
        tls.volume,
      ],
    },
  });
  return [serviceAccount, configMap, pvc, workload];
}
