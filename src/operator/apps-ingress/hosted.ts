// The hosted cluster's API, reached without cluster DNS: the kubeconfig HyperShift publishes in the
// HostedCluster's status.kubeconfig Secret, dialled at the address the management API reports for
// the control plane's API-server Service (ClusterIP and port). TLS is still verified against the
// kubeconfig's own host name (tls-server-name), so the address change weakens nothing.
import { KubeConfig } from "@kubernetes/client-node";
import { isIP } from "node:net";

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
 * A KubeConfig for `kubeconfigText`'s current context that dials `address` and verifies the serving
 * certificate against the kubeconfig's host (an IP host is verified as the dialled address: Node
 * cannot send an IP as TLS server name). Throws with a readable message on an unusable kubeconfig.
 */
export function hostedKubeConfig(kubeconfigText: string, address: { host: string; port: number }): KubeConfig {
  const source = new KubeConfig();
  try {
    source.loadFromString(kubeconfigText);
  } catch (e) {
    throw new Error(`not a kubeconfig: ${(e as Error).message}`);
  }
  const cluster = source.getCurrentCluster();
  const user = source.getCurrentUser();
  if (cluster === null || user === null)
    throw new Error("the kubeconfig has no current context with a cluster and user");
  if (cluster.skipTLSVerify) throw new Error("the kubeconfig disables TLS verification; refusing to use it");
  let host: string;
  try {
    host = new URL(cluster.server).hostname.replace(/^\[|\]$/g, "");
  } catch {
    throw new Error(`the kubeconfig's server ${JSON.stringify(cluster.server)} is not a URL`);
  }
  const dial = isIP(address.host) === 6 ? `[${address.host}]` : address.host;
  const tlsServerName = cluster.tlsServerName ?? (isIP(host) === 0 ? host : undefined);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        ...cluster,
        name: "hosted",
        server: `https://${dial}:${String(address.port)}`,
        ...(tlsServerName === undefined ? {} : { tlsServerName }),
      },
    ],
    users: [{ ...user, name: "hosted" }],
    contexts: [{ name: "hosted", cluster: "hosted", user: "hosted" }],
    currentContext: "hosted",
  });
  return kc;
}
