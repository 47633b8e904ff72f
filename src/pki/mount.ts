// How a data-plane child's pod holds its client certificate: the Secret's name and where it is
// mounted. Pure; shared by the pod templates (src/operator/desired), the Envoy bootstrap and the
// Secret's writer (store.ts).

/** The client Secret of the data-plane child `name` (a ProxyServer's Envoy, a DHCPServer's dhcp-agent). */
export function clientSecretName(child: string): string {
  return `${child}-xds-tls`;
}

/** Where a child's pod mounts its client Secret: tls.crt, tls.key and ca.crt, as the kubelet keeps them. */
export const XDS_TLS_DIR = "/etc/oooi/xds-tls";

/**
 * The pod volume and mount of the child's client Secret. Optional: with xDS in plaintext (a
 * development operator) no Secret exists and the pod still starts. The template names the Secret,
 * never its content, so a rotation changes files in the running pod and restarts nothing.
 */
export function xdsTlsVolume(nodeGroup: string): {
  volume: Record<string, unknown>;
  mount: { name: string; mountPath: string; readOnly: true };
} {
  const child = nodeGroup.slice(nodeGroup.indexOf("/") + 1);
  return {
    volume: { name: "xds-tls", secret: { secretName: clientSecretName(child), optional: true } },
    mount: { name: "xds-tls", mountPath: XDS_TLS_DIR, readOnly: true },
  };
}
