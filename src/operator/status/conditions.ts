// Readiness facts → the metav1.Conditions an Infra carries (Ready, Degraded, Progressing and one
// <Component>Ready per enabled component), their transition times, and the Events a change of them
// deserves. Conventions from the Kubernetes API conventions ("Typical status properties",
// github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md):
// lastTransitionTime moves only when status changes; Degraded/Progressing read like Deployments'.
// Pure.
import type { ReadyCondition } from "../../model/status.js";
import { metaTime } from "../../util/clock.js";

/** A condition before it gets observedGeneration and lastTransitionTime. */
export interface ConditionSpec {
  readonly type: ConditionType;
  readonly status: "True" | "False";
  readonly reason: string;
  readonly message: string;
}

/** Every condition type the operator writes, in the order it writes them. */
export const CONDITION_TYPES = ["Ready", "Degraded", "Progressing", "DHCPReady", "DNSReady", "ProxyReady"] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export type Component = "dhcp" | "dns" | "proxy";
export const COMPONENTS: readonly Component[] = ["dhcp", "dns", "proxy"];
const COMPONENT_CONDITION: Readonly<Record<Component, ConditionType>> = {
  dhcp: "DHCPReady",
  dns: "DNSReady",
  proxy: "ProxyReady",
};

/** Why a component is (not) ready; "Serving" is the only ready one. */
export type ComponentReason =
  | "Serving"
  | "NotDeployed"
  | "DeploymentMissing"
  | "DeploymentOutdated"
  | "DeploymentUnavailable"
  | "ConfigMapOutdated"
  | "ServiceMissing"
  | "NotServingCurrentZones"
  | "NoConfiguration"
  | "NotAcknowledged"
  | "ConfigurationRejected";

/** Reasons that resolve by themselves as rollouts and ACKs arrive: the component is Progressing. */
const PROGRESSING: ReadonlySet<ComponentReason> = new Set([
  "DeploymentMissing",
  "DeploymentOutdated",
  "DeploymentUnavailable",
  "ConfigMapOutdated",
  "ServiceMissing",
  "NotServingCurrentZones",
  "NotAcknowledged",
]);

/** One component's readiness and, when not ready, why. */
export interface ComponentReadiness {
  readonly component: Component;
  readonly reason: ComponentReason;
  /** Empty when ready. */
  readonly why: string;
}

/** A message fits metav1.Condition's 32 KiB limit. */
export const fit = (message: string, max = 32_000): string =>
  message.length > max ? `${message.slice(0, max)}…` : message;

/**
 * The API server refused the operator's writes in the object's namespace: the RoleBinding a
 * platform engineer creates is missing (src/operator/desired/permissions.ts NAMESPACE_ROLES).
 */
export const MISSING_BINDING_REASON = "MissingNamespaceBinding";

/** Ready=False/Degraded=True text for missing RoleBindings, each with the command that creates it. */
export function missingBindingMessage(what: string, commands: readonly string[]): string {
  return fit(
    `the operator may not write ${what} (its RoleBinding is missing; nothing there is changed until it exists): ${commands.join("; ")}`,
  );
}

/**
 * An Infra's conditions. `model` is Ready from its problems; `hasError` says one of them is an
 * error (the Infra is not served as written); `components` is undefined when it has no topology;
 * `missingBinding` is a missingBindingMessage when the Infra's namespace refused the operator's writes.
 */
export function infraConditions(
  model: ReadyCondition,
  hasError: boolean,
  components: readonly ComponentReadiness[] | undefined,
  missingBinding?: string,
): ConditionSpec[] {
  const all = components ?? [];
  const waiting = all.filter((c) => c.reason !== "Serving");
  const listed = (cs: readonly ComponentReadiness[]) => cs.map((c) => `${c.component}: ${c.why}`).join("; ");
  const ready: ConditionSpec =
    model.status === "True" && missingBinding !== undefined
      ? { type: "Ready", status: "False", reason: MISSING_BINDING_REASON, message: missingBinding }
      : model.status === "True" && waiting.length > 0
        ? { type: "Ready", status: "False", reason: "ComponentsNotReady", message: listed(waiting) }
        : { ...model, message: fit(model.message) };
  const rejected = all.filter((c) => c.reason === "ConfigurationRejected");
  const degraded: ConditionSpec =
    missingBinding !== undefined
      ? { type: "Degraded", status: "True", reason: MISSING_BINDING_REASON, message: missingBinding }
      : hasError
        ? { type: "Degraded", status: "True", reason: model.reason, message: fit(model.message) }
        : rejected.length > 0
          ? { type: "Degraded", status: "True", reason: "ConfigurationRejected", message: fit(listed(rejected)) }
          : { type: "Degraded", status: "False", reason: "AsExpected", message: "" };
  const moving = all.filter((c) => PROGRESSING.has(c.reason));
  const progressing: ConditionSpec =
    moving.length > 0
      ? { type: "Progressing", status: "True", reason: "RollingOut", message: fit(listed(moving)) }
      : ready.status === "True"
        ? {
            type: "Progressing",
            status: "False",
            reason: "Converged",
            message: "every component serves the current configuration",
          }
        : { type: "Progressing", status: "False", reason: "Blocked", message: "nothing is rolling out; see Ready" };
  const perComponent = all.map((c): ConditionSpec =>
    c.reason === "Serving"
      ? {
          type: COMPONENT_CONDITION[c.component],
          status: "True",
          reason: "Serving",
          message: "serving the current configuration",
        }
      : { type: COMPONENT_CONDITION[c.component], status: "False", reason: c.reason, message: fit(c.why) },
  );
  return [ready, degraded, progressing, ...perComponent];
}

/** A written condition: the spec with observedGeneration and lastTransitionTime. */
export type WrittenCondition = ConditionSpec & {
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
};

/**
 * Conditions as written: lastTransitionTime kept from the previous condition of the same type
 * while its status is unchanged, `now` otherwise; sorted in CONDITION_TYPES order.
 */
export function withTransitionTimes(
  specs: readonly ConditionSpec[],
  previous: readonly Record<string, unknown>[],
  generation: number | undefined,
  now: number,
): WrittenCondition[] {
  return sortConditions(specs).map((c) => {
    const before = previous.find((p) => p["type"] === c.type);
    const kept = before?.["status"] === c.status && typeof before["lastTransitionTime"] === "string";
    return {
      ...c,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: kept ? (before["lastTransitionTime"] as string) : metaTime(now),
    };
  });
}

/** The conditions of the types the operator writes, in CONDITION_TYPES order. */
export function sortConditions<T extends { readonly type?: unknown }>(conditions: readonly T[]): T[] {
  const rank = (c: T) => CONDITION_TYPES.indexOf(c.type as ConditionType);
  return conditions.filter((c) => rank(c) >= 0).sort((a, b) => rank(a) - rank(b));
}

/** What `kubectl describe` shows for a status change. */
export interface StatusEvent {
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/** A condition's healthy status: Degraded wants False, the others True; Progressing is neither. */
const healthy = (type: ConditionType): "True" | "False" | undefined =>
  type === "Degraded" ? "False" : type === "Progressing" ? undefined : "True";

/**
 * One Event per condition whose status changed. A condition seen for the first time is news only
 * when it is unhealthy (a new object becoming Ready at once says nothing kubectl get does not).
 * Progressing changes are not announced: every rollout would be two Events.
 */
export function conditionEvents(
  next: readonly ConditionSpec[],
  previous: readonly Record<string, unknown>[],
): StatusEvent[] {
  const out: StatusEvent[] = [];
  for (const c of sortConditions(next)) {
    const want = healthy(c.type);
    if (want === undefined) continue;
    const before = previous.find((p) => p["type"] === c.type)?.["status"];
    if (before === c.status || (before === undefined && c.status === want)) continue;
    out.push({
      type: c.status === want ? "Normal" : "Warning",
      reason: c.reason,
      message: `${c.type} is ${c.status}${c.message === "" ? "" : `: ${c.message}`}`,
    });
  }
  return out;
}

/** The Event for a data plane's NACK that differs from the one the status already reports. */
export function nackEvent(nack: string | undefined, reported: unknown): StatusEvent | undefined {
  if (nack === undefined || nack === reported) return undefined;
  return {
    type: "Warning",
    reason: "ConfigurationRejected",
    message: `the data plane rejected the configuration: ${nack}`,
  };
}
