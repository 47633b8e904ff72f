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
} from "./kinds.js";
export { crdProblems, kindsFromCrd, loadCrdKinds, OOOI_CRD_DIR } from "./crds.js";
export type { CrdProblem } from "./crds.js";
export { kubeConfigFor, kubeconfigYaml, writeKubeconfig } from "./kubeconfig.js";
export type { KubeObject, ResourceKind, ListType, ManagedFieldsEntry, PrinterColumn } from "./types.js";
export { ApiError, statusBody } from "./errors.js";
export { eventually } from "./eventually.js";
