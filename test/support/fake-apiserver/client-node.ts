// A client-node KubeConfig for the fake, for the tests that use client-node as an independent client.
// Not exported from index.ts: importing client-node costs a process ~50 MiB, which the operator bench
// (it imports the fake's support) must not count.
import { KubeConfig } from "@kubernetes/client-node";
import { kubeconfigYaml } from "./kubeconfig.js";

/** A client-node KubeConfig for the server (same settings as the kubeconfig file). */
export function clientNodeConfigFor(server: string, namespace = "default"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(server, namespace));
  return kc;
}
