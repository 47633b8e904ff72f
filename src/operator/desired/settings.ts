// What the operator's deployment decides rather than the Infra: where the xDS Service is, which
// images the workloads run, and the field manager. Pure: the CLI reads flags/env and calls these.
import { DEFAULT_HOOKS_DIRECTORY } from "../../dhcp/render/index.js";

/** Container images of the generated workloads. */
export interface WorkloadImages {
  /** Envoy (TLS-passthrough SNI proxy, configured over ADS). */
  readonly envoy: string;
  /** CoreDNS >= 1.10.0: the Corefile uses the `view` plugin. */
  readonly coredns: string;
  /** Debian-based Kea 2.2 (kea-dhcp4 with the lease_cmds hook under keaHooksDirectory). */
  readonly kea: string;
  /** oooi itself (the dhcp-agent sidecar). */
  readonly oooi: string;
}

/** Operator-wide inputs of the desired state. */
export interface OperatorSettings {
  /** Namespace the operator (and its xDS Service) runs in. */
  readonly namespace: string;
  /** host:port of the operator's xDS Service, as data planes dial it. */
  readonly xdsAddress: string;
  readonly images: WorkloadImages;
  /** Server-side-apply field manager of every write. */
  readonly fieldManager: string;
  /** Directory of libdhcp_lease_cmds.so in the Kea image; the pipeline must render Kea with the same. */
  readonly keaHooksDirectory: string;
  /** Size requested for each Infra's Kea lease PVC. */
  readonly leaseStorage: string;
  /** StorageClass of the lease PVC; undefined = the cluster default. */
  readonly leaseStorageClass: string | undefined;
  /**
   * Pin runAsUser/runAsGroup of non-root containers to the image's user. Kubernetes needs it
   * (the images name their user, so runAsNonRoot alone cannot be verified); OpenShift's
   * restricted SCC assigns a namespace UID instead and rejects pinned ones: false there (discovered).
   */
  readonly pinUserIds: boolean;
  /**
   * The data planes dial xDS with mTLS, using the client certificate Secret mounted into their pod
   * (the operator's own CA; `oooi operator` sets it unless --xds-plaintext or --xds-tls-* files).
   */
  readonly xdsTls: boolean;
  /**
   * Kea's ServiceAccount and OpenShift's SCC (src/operator/desired/scc.ts): "none" off OpenShift;
   * "report" on it, each Infra with DHCP saying which RoleBinding to create; "bind" when the
   * operator may bind the SCC's role itself (deploy/openshift; asked once at start).
   */
  readonly keaScc: KeaSccMode;
}

export type KeaSccMode = "none" | "report" | "bind";

/** Field manager of every server-side apply the operator makes. */
export const FIELD_MANAGER = "oooi";
/** Port of the operator's xDS (ADS) gRPC Service. */
export const XDS_PORT = 18000;
/** Name of the operator's xDS Service. */
export const XDS_SERVICE = "oooi-xds";
/** Name of the Service in front of the operator's HTTP port (deploy/operator/services.yaml). */
export const METRICS_SERVICE = "oooi-metrics";
/** Namespace the deploy/ manifests install the operator into. */
export const DEFAULT_OPERATOR_NAMESPACE = "oooi-system";

/** Images used when neither the Infra nor the operator's configuration names one. */
export const DEFAULT_IMAGES: WorkloadImages = {
  envoy: "envoyproxy/envoy:v1.36.4",
  coredns: "registry.k8s.io/coredns/coredns:v1.12.0",
  // Built from the Containerfile's `kea` stage (Debian bookworm's kea-dhcp4-server 2.2.0).
  kea: "ghcr.io/oooi-project/oooi-kea:0.1.0",
  oooi: "ghcr.io/oooi-project/oooi:0.1.0",
};

/** The xDS address data planes dial by default: the operator's Service in its namespace. */
export function defaultXdsAddress(namespace: string): string {
  return `${XDS_SERVICE}.${namespace}.svc:${XDS_PORT}`;
}

/** Settings with every unset field defaulted. */
export function operatorSettings(
  partial: Partial<Omit<OperatorSettings, "images">> & { images?: Partial<WorkloadImages> } = {},
): OperatorSettings {
  const namespace = partial.namespace ?? DEFAULT_OPERATOR_NAMESPACE;
  return {
    namespace,
    xdsAddress: partial.xdsAddress ?? defaultXdsAddress(namespace),
    images: { ...DEFAULT_IMAGES, ...partial.images },
    fieldManager: partial.fieldManager ?? FIELD_MANAGER,
    keaHooksDirectory: partial.keaHooksDirectory ?? DEFAULT_HOOKS_DIRECTORY,
    leaseStorage: partial.leaseStorage ?? "128Mi",
    leaseStorageClass: partial.leaseStorageClass,
    xdsTls: partial.xdsTls ?? false,
    pinUserIds: partial.pinUserIds ?? true,
    keaScc: partial.keaScc ?? "none",
  };
}

/** Environment variables the operator Deployment sets (deploy/operator) → settings. */
export const SETTINGS_ENV = {
  namespace: "POD_NAMESPACE",
  xdsAddress: "OOOI_XDS_ADDRESS",
  envoy: "OOOI_ENVOY_IMAGE",
  coredns: "OOOI_COREDNS_IMAGE",
  kea: "OOOI_KEA_IMAGE",
  oooi: "OOOI_IMAGE",
  keaHooksDirectory: "OOOI_KEA_HOOKS_DIRECTORY",
  leaseStorage: "OOOI_LEASE_STORAGE",
  leaseStorageClass: "OOOI_LEASE_STORAGE_CLASS",
  pinUserIds: "OOOI_PIN_USER_IDS",
} as const;

/** The API group whose presence (by discovery) says the cluster is OpenShift, with its SCCs. */
export const OPENSHIFT_SECURITY_GROUP = "security.openshift.io";

/** Name of the operator's container in deploy/operator/deployment.yaml. */
export const OPERATOR_CONTAINER = "operator";

/** The part of a Pod ownImage reads. */
export interface PodContainers {
  readonly spec?: { readonly containers?: readonly { readonly name?: string; readonly image?: string }[] };
}

/**
 * The image the operator's own container runs, from its Pod: the container named `operator`, else
 * the Pod's only container. The dhcp-agent sidecars run it, so `images:` in a kustomization is the
 * one place an image is set. Pure.
 */
export function ownImage(pod: PodContainers): string | undefined {
  const containers = pod.spec?.containers ?? [];
  const own =
    containers.find((c) => c.name === OPERATOR_CONTAINER) ?? (containers.length === 1 ? containers[0] : undefined);
  const image = own?.image?.trim();
  return image === undefined || image === "" ? undefined : image;
}

/**
 * Settings from the process environment (empty values count as unset) and, when given, the API
 * groups the cluster serves: on OpenShift (`security.openshift.io` discovered) uids are not
 * pinned, so restricted-v2 assigns the namespace's; `OOOI_PIN_USER_IDS` still decides when set.
 * The sidecars' image is `OOOI_IMAGE` when set, else `podImage` (the operator's own, ownImage).
 */
export function settingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  apiGroups?: ReadonlySet<string>,
  podImage?: string,
): OperatorSettings {
  const get = (k: string): string | undefined => {
    const v = env[k]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const images: Partial<Record<keyof WorkloadImages, string>> = podImage === undefined ? {} : { oooi: podImage };
  for (const k of ["envoy", "coredns", "kea", "oooi"] as const) {
    const v = get(SETTINGS_ENV[k]);
    if (v !== undefined) images[k] = v;
  }
  const pin = get(SETTINGS_ENV.pinUserIds);
  return operatorSettings({
    images,
    ...(apiGroups?.has(OPENSHIFT_SECURITY_GROUP) === true ? { keaScc: "report" as const } : {}),
    ...optional("namespace", get(SETTINGS_ENV.namespace)),
    ...optional("xdsAddress", get(SETTINGS_ENV.xdsAddress)),
    ...optional("keaHooksDirectory", get(SETTINGS_ENV.keaHooksDirectory)),
    ...optional("leaseStorage", get(SETTINGS_ENV.leaseStorage)),
    ...optional("leaseStorageClass", get(SETTINGS_ENV.leaseStorageClass)),
    ...(pin !== undefined
      ? { pinUserIds: pin !== "false" && pin !== "0" }
      : apiGroups?.has(OPENSHIFT_SECURITY_GROUP) === true
        ? { pinUserIds: false }
        : {}),
  });
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Partial<Record<K, string>>);
}

/**
 * The Infra's image field, unless it names the original operator's own image: that one ran the
 * original's built-in DHCP/DNS servers, not Kea or CoreDNS, so a manifest carried over from it
 * must fall back to our default instead of starting the wrong program.
 */
export function imageOverride(value: string | undefined): string | undefined {
  const v = value?.trim();
  if (v === undefined || v === "") return undefined;
  return /^quay\.io\/cldmnky\/oooi(?:[:@]|$)/.test(v) ? undefined : v;
}
