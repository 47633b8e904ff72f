// What kube-controller-manager's Deployment controller writes once a Deployment's Pods are up: the
// fake runs no controllers, so the tests and the operator bench write it in its place.
import type { JsonObject } from "./types.js";

/** The status the Deployment controller would give `d` with every replica available, or undefined when it has it. */
export function availableStatus(d: JsonObject): JsonObject | undefined {
  const m = (d["metadata"] ?? {}) as { generation?: number };
  const replicas = ((d["spec"] ?? {}) as { replicas?: number }).replicas ?? 1;
  const status = {
    observedGeneration: m.generation ?? 1,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    conditions: [{ type: "Available", status: "True" }],
  };
  return JSON.stringify(d["status"]) === JSON.stringify(status) ? undefined : status;
}
