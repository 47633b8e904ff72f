// Client configuration for the fake: a kubeconfig file for kubectl and the operator's client
// configuration read from it. (client-node's, for the fake's own tests: client-node.ts.)
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kubeconfigFromText, type KubeClientConfig } from "../../../src/kube/kubeconfig.js";

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

/** The operator's client configuration for the server, read from the same kubeconfig text. */
export function kubeConfigFor(server: string, namespace = "default"): KubeClientConfig {
  return kubeconfigFromText(kubeconfigYaml(server, namespace), "fake kubeconfig", { dir: undefined });
}
