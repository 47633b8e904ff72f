// Problems → the Ready condition users read with `kubectl get` (and `oooi render`'s status.json).
import { refKey } from "./problems.js";
import type { BuildResult, ClusterState, ObjectRef, Problem } from "./types.js";

export interface ReadyCondition {
  readonly type: "Ready";
  readonly status: "True" | "False";
  readonly reason: string;
  readonly message: string;
}

export interface ObjectStatus {
  readonly object: ObjectRef;
  readonly ready: ReadyCondition;
  readonly problems: readonly Problem[];
}

const SEVERITY_RANK: Readonly<Record<Problem["severity"], number>> = { error: 0, pending: 1, warning: 2 };

/**
 * Ready is False when the object has an error (it is not served), is waiting on something
 * (pending), or carries a conflict warning; the first such problem gives the reason and every
 * problem is listed in the message. Otherwise True/ReconciliationSucceeded. An Infra's conflict
 * warnings name a newcomer it refused: the Infra serves what it served, so they leave it Ready
 * and are listed in the message.
 */
export function readyCondition(problems: readonly Problem[]): ReadyCondition {
  const blocking = problems
    .filter((p) => p.severity !== "warning" || (p.reason.startsWith("Duplicate") && p.object.kind !== "Infra"))
    .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
  const first = blocking[0];
  if (first === undefined) {
    const notes = problems.map(describe);
    return {
      type: "Ready",
      status: "True",
      reason: "ReconciliationSucceeded",
      message: notes.length === 0 ? "configuration rendered" : notes.join("; "),
    };
  }
  return { type: "Ready", status: "False", reason: first.reason, message: problems.map(describe).join("; ") };
}

function describe(p: Problem): string {
  return p.field === "" ? p.message : `${p.field}: ${p.message}`;
}

/** One status per Infra and attachment in the state (valid or not), sorted by kind/namespace/name. */
export function objectStatuses(state: ClusterState, result: BuildResult): ObjectStatus[] {
  const refs = new Map<string, ObjectRef>();
  const add = (r: ObjectRef) => refs.set(refKey(r), r);
  for (const i of state.infras) add({ kind: "Infra", namespace: i.metadata.namespace, name: i.metadata.name });
  for (const a of state.attachments)
    add({ kind: "InfraClusterAttachment", namespace: a.metadata.namespace, name: a.metadata.name });
  for (const inv of state.invalid ?? []) add(inv.ref);
  for (const p of result.problems) add(p.object);
  const byObject = new Map<string, Problem[]>();
  for (const p of result.problems) {
    const key = refKey(p.object);
    const mine = byObject.get(key);
    if (mine === undefined) byObject.set(key, [p]);
    else mine.push(p);
  }
  return [...refs.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, object]) => {
      const mine = byObject.get(key) ?? [];
      return { object, ready: readyCondition(mine), problems: mine };
    });
}
