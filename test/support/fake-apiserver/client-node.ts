// A client-node KubeConfig for the fake, for the tests that use client-node's own API clients and
// informers against it (the operator's KubeConfig comes from src/kube/kubeconfig.ts instead).
import { KubeConfig } from "@kubernetes/client-node";
import { kubeconfigYaml } from "./kubeconfig.js";

/** A client-node KubeConfig for the server (same settings as the kubeconfig file). */
export function clientNodeConfigFor(server: string, namespace = "default"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(server, namespace));
  return kc;
}
