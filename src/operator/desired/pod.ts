// Pod-spec fragments shared by the three workloads. Pure.
import { POD_IP_ENV as POD_IP_ENV_NAME } from "../../dns/render/corefile.js";
import type { DesiredObject, OwnerReference } from "./objects.js";

/** What every component's workload is built from: where it lives, how it is labelled and attached. */
export interface WorkloadInput {
  readonly infraName: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly podLabels: Readonly<Record<string, string>>;
  /** Multus networks annotation giving the pod its static VLAN address. */
  readonly networksAnnotation: string;
  readonly owner: OwnerReference;
}

/** Downward-API environment: the pod's own name and namespace (data-plane node ids derive from them). */
export const POD_IDENTITY_ENV = [
  { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
  { name: "POD_NAMESPACE", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } } },
] as const;

/**
 * Downward-API environment: the pod's own address, where health, readiness and admin-side ports
 * bind — the pod network, never the VLAN interface (Multus adds that one beside it).
 */
export const POD_IP_ENV = {
  name: POD_IP_ENV_NAME,
  valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } },
} as const;

/**
 * Pod-level security shared by every workload: the runtime's default seccomp profile, and ports
 * below 1024 (53, 67, 80, 443) bindable without CAP_NET_BIND_SERVICE — a non-root process cannot
 * use an added capability (Kubernetes sets no ambient capabilities). The sysctl is namespaced and
 * on the kubelet's safe list, so no policy exception is needed.
 */
export function podSecurity(): Record<string, unknown> {
  return {
    seccompProfile: { type: "RuntimeDefault" },
    sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }],
  };
}

/** A non-root container with nothing extra: no capabilities, no escalation, read-only root. */
export function nonRootContainer(uid: number | undefined): Record<string, unknown> {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    ...(uid === undefined ? {} : { runAsUser: uid, runAsGroup: uid }),
  };
}

/**
 * A container that must be uid 0 (see the Kea workload for why), holding only `add` of all
 * capabilities, never escalating, with a read-only root filesystem.
 */
export function rootContainer(add: readonly string[]): Record<string, unknown> {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"], ...(add.length === 0 ? {} : { add: [...add] }) },
    readOnlyRootFilesystem: true,
    runAsNonRoot: false,
    runAsUser: 0,
  };
}

/** Resource requests (and a memory limit) of a container. */
export function resources(cpu: string, memory: string, memoryLimit: string): Record<string, unknown> {
  return { requests: { cpu, memory }, limits: { memory: memoryLimit } };
}

/** What every generated Deployment shares: identity, owner, pod labels and annotations. */
export interface DeploymentInput {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owner: OwnerReference;
  /** Selector and pod labels; never change once applied (a Deployment's selector is immutable). */
  readonly podLabels: Readonly<Record<string, string>>;
  readonly podAnnotations: Readonly<Record<string, string>>;
  readonly podSpec: Readonly<Record<string, unknown>>;
}

/**
 * One replica, replaced with Recreate: every workload holds a static VLAN address, and two pods
 * with one address on one L2 segment fight over ARP. Recreate waits until the old pod is gone
 * before starting the new one (a RollingUpdate, even with maxSurge 0, starts the new pod while
 * the old one is still terminating).
 */
export function deployment(input: DeploymentInput): DesiredObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: input.name, namespace: input.namespace, labels: input.labels, ownerReferences: [input.owner] },
    spec: {
      replicas: 1,
      strategy: { type: "Recreate" },
      revisionHistoryLimit: 3,
      selector: { matchLabels: { ...input.podLabels } },
      template: {
        metadata: { labels: { ...input.podLabels }, annotations: { ...input.podAnnotations } },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...input.podSpec,
        },
      },
    },
  };
}
