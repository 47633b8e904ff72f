// Client configuration for the fake: a kubeconfig file for kubectl and a KubeConfig for client-node.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

/**
 * Kubeconfig YAML pointing at a plain-HTTP server. `insecure-skip-tls-verify: true` is required:
 * client-node 1.4 refuses an http:// server without it ("HTTP protocol is not allowed when
 * skipTLSVerify is not set or false"); kubectl accepts it with or without.
 */
export function kubeconfigYaml(server: string, namespace = "default"): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: fake",
    "  cluster:",
    `    server: ${server}`,
    "    insecure-skip-tls-verify: true",
    "users:",
    "- name: fake",
    "  user:",
    "    token: fake-token",
    "contexts:",
    "- name: fake",
    "  context:",
    "    cluster: fake",
    "    user: fake",
    `    namespace: ${namespace}`,
    "current-context: fake",
    "",
  ].join("\n");
}

/** Writes the kubeconfig into `dir` (as `kubeconfig`) and returns its path. */
export async function writeKubeconfig(server: string, dir: string, namespace = "default"): Promise<string> {
  const path = join(dir, "kubeconfig");
  await writeFile(path, kubeconfigYaml(server, namespace), { mode: 0o600 });
  return path;
}

/** A client-node KubeConfig for the server (same settings as the file). */
export function kubeConfigFor(server: string, namespace = "default"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(server, namespace));
  return kc;
}
