// A faithful-enough kube-apiserver for tests: see server.ts (HTTP, hooks) and store.ts (semantics).
export { FakeApiServer } from "./server.js";
export type { FakeApiServerOptions } from "./server.js";
export { RequestLog, WRITE_VERBS } from "./faults.js";
export type { RequestMatch, RequestRecord, Verb } from "./faults.js";
export {
  BUILTIN_KINDS,
  EXTERNAL_KINDS,
  HOSTED_CLUSTER,
  MACHINE,
  NAMESPACE,
  NETWORK_ATTACHMENT_DEFINITION,
  NODE_POOL,
  OOOI_KINDS,
  VIRTUAL_MACHINE_INSTANCE,
  kindsFromCrd,
} from "./kinds.js";
export { kubeConfigFor, kubeconfigYaml, writeKubeconfig } from "./kubeconfig.js";
export type { KubeObject, ResourceKind, ListType, ManagedFieldsEntry } from "./types.js";
export { ApiError, statusBody } from "./errors.js";
export { eventually } from "./eventually.js";
