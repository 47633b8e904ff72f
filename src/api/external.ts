// The slices of other projects' objects the model reads. Only fields oooi uses are typed;
// everything else passes through untouched.
import type { ObjectMeta } from "./schema.js";

interface Observed<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Status;
}

/** HyperShift's ServicePublishingStrategy: how one control-plane service is published. */
export interface ServicePublishingStrategy {
  type?: string;
  route?: { hostname?: string };
  loadBalancer?: { hostname?: string };
}

/**
 * hypershift.openshift.io/v1beta1 HostedCluster: the endpoints it publishes (src/model/endpoints.ts)
 * and, for apps ingress, its kubeconfig Secret.
 */
export type HostedCluster = Observed<
  { services?: { service?: string; servicePublishingStrategy?: ServicePublishingStrategy }[] },
  {
    kubeconfig?: { name?: string };
    controlPlaneEndpoint?: { host?: string; port?: number };
    oauthCallbackURLTemplate?: string;
    ignitionEndpoint?: string;
  }
>;

/** hypershift.openshift.io/v1beta1 NodePool. */
export type NodePool = Observed<{ clusterName?: string; platform?: { type?: string } }>;

/** cluster.x-k8s.io/v1beta1 Machine. */
export type Machine = Observed<unknown, { addresses?: { type?: string; address?: string }[] }>;

export interface VmiInterfaceSpec {
  name?: string;
  macAddress?: string;
}
export interface VmiNetworkSpec {
  name?: string;
  multus?: { networkName?: string };
  pod?: object;
}
export interface VmiInterfaceStatus {
  name?: string;
  mac?: string;
  ipAddress?: string;
  ipAddresses?: string[];
  interfaceName?: string;
}
/** kubevirt.io/v1 VirtualMachineInstance. */
export type VirtualMachineInstance = Observed<
  { domain?: { devices?: { interfaces?: VmiInterfaceSpec[] } }; networks?: VmiNetworkSpec[] },
  { interfaces?: VmiInterfaceStatus[]; migrationState?: object }
>;

export interface ServicePort {
  name?: string;
  port?: number;
  targetPort?: number | string;
  protocol?: string;
}
/** v1 Service. */
export type Service = Observed<{ type?: string; clusterIP?: string; ports?: ServicePort[] }>;

/** v1 Namespace. */
export type Namespace = Observed;

/** Annotation HyperShift puts on CAPI Machines: the owning NodePool as "<namespace>/<name>". */
export const NODEPOOL_ANNOTATION = "hypershift.openshift.io/nodePool";
