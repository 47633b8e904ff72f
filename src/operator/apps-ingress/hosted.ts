// The hosted cluster's API, reached without cluster DNS: the kubeconfig HyperShift publishes in the
// HostedCluster's status.kubeconfig Secret, dialled at the address the management API reports for
// the control plane's API-server Service (ClusterIP and port). TLS is still verified against the
// kubeconfig's own host name (tls-server-name), so the address change weakens nothing.
import { isIP } from "node:net";
import { clientConfig, resolveKubeconfigText, type KubeClientConfig } from "../../kube/kubeconfig.js";

/** ClusterIP:port of the API-server Service, or why there is none yet. */
export function serviceAddress(service: Record<string, unknown> | undefined): { host: string; port: number } | string {
  if (service === undefined) return "not found";
  const spec = (service["spec"] ?? {}) as { clusterIP?: string; ports?: { port?: number; name?: string }[] };
  const ip = spec.clusterIP;
  if (ip === undefined || ip === "None" || isIP(ip) === 0) return "has no ClusterIP";
  const ports = spec.ports ?? [];
  const port = (ports.find((p) => p.port === 6443) ?? ports[0])?.port;
  if (port === undefined) return "has no port";
  return { host: ip, port };
}

/**
 * The client configuration of `kubeconfigText`'s current context, dialling `address` and verifying the
 * serving certificate against the kubeconfig's host (an IP host is verified as the dialled address:
 * Node cannot send an IP as TLS server name). A Secret's kubeconfig may not name files, run an exec
 * plugin or use an auth-provider: refused before client-node reads it. `source` names the Secret's key
 * for messages. Throws with a readable message on an unusable kubeconfig.
 */
export function hostedKubeConfig(
  kubeconfigText: string,
  address: { host: string; port: number },
  source = "the kubeconfig",
): KubeClientConfig {
  // Throws a KubeconfigError naming the field (YAML errors included).
  const resolved = resolveKubeconfigText(kubeconfigText, source, { dir: undefined });
  const cluster = resolved.cluster;
  if (cluster.skipTLSVerify) throw new Error(`${source} disables TLS verification; refusing to use it`);
  const host = new URL(cluster.server).hostname.replace(/^\[|\]$/g, "");
  const dial = isIP(address.host) === 6 ? `[${address.host}]` : address.host;
  const tlsServerName = cluster.tlsServerName ?? (isIP(host) === 0 ? host : undefined);
  return clientConfig({
    ...resolved,
    cluster: {
      ...cluster,
      server: `https://${dial}:${String(address.port)}`,
      ...(tlsServerName === undefined ? {} : { tlsServerName }),
    },
    origin: `${resolved.origin}, dialled at ${dial}:${String(address.port)}`,
  });
}
