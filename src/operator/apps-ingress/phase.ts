// What one pass found in the hosted cluster → the attachment's appsIngressStatus. A Degraded
// status keeps the last known VIP (its routes and record stay: last good); lastSyncTime moves only
// when the status changes. Pure.
import type { AppsIngressStatus } from "../../api/schema.js";
import type { AppsIngressReason } from "../../model/types.js";
import { parseIPv4 } from "../../model/ipv4.js";
import { metaTime } from "../../util/clock.js";
import type { AppliedNames } from "./objects.js";

/** The reasons are declared once, in the model's ProblemReason union (model/types.ts). */
export type PendingReason = Extract<AppsIngressReason, `WaitingFor${string}`>;
export type DegradedReason = Exclude<AppsIngressReason, PendingReason>;

/** The outcome of one pass. */
export type Observation =
  | {
      readonly phase: "Pending";
      readonly reason: PendingReason;
      readonly message: string;
      /** What this pass applied, once it got that far. */
      readonly applied?: AppliedNames;
    }
  | { readonly phase: "Degraded"; readonly reason: DegradedReason; readonly message: string }
  | {
      readonly phase: "Ready";
      readonly ingress: LoadBalancerIngress;
      readonly service: string;
      readonly applied?: AppliedNames;
    };

const APPLIED_KEYS = [
  "appliedServiceName",
  "appliedServiceNamespace",
  "appliedAddressPoolName",
  "appliedL2AdvertisementName",
] as const;

/** status.loadBalancer.ingress[0] of the Service. */
export interface LoadBalancerIngress {
  readonly ip?: string;
  readonly hostname?: string;
}

/** The first ingress entry with an IPv4 address or a hostname; undefined while MetalLB assigned nothing. */
export function vipOf(service: Record<string, unknown> | undefined): LoadBalancerIngress | undefined {
  const status = (service?.["status"] ?? {}) as { loadBalancer?: { ingress?: LoadBalancerIngress[] } };
  const first = status.loadBalancer?.ingress?.[0];
  if (first === undefined) return undefined;
  if (typeof first.ip === "string" && parseIPv4(first.ip) !== undefined) return { ip: first.ip };
  if (typeof first.hostname === "string" && first.hostname !== "") return { hostname: first.hostname };
  return undefined;
}

/** The status to write after `observation`, given the one the attachment has. */
export function nextAppsIngressStatus(
  previous: AppsIngressStatus | undefined,
  observation: Observation,
  now: number,
): AppsIngressStatus {
  // applied*: what this pass applied, else what was recorded before (a failed pass applied nothing new).
  const recorded = ("applied" in observation ? observation.applied : undefined) ?? previous;
  const applied = Object.fromEntries(
    APPLIED_KEYS.flatMap((k) => (recorded?.[k] === undefined ? [] : [[k, recorded[k]]])),
  ) as Partial<AppliedNames>;
  const next = { ...statusOf(previous, observation), ...applied };
  const same =
    previous !== undefined &&
    previous.phase === next.phase &&
    previous.reason === next.reason &&
    previous.message === next.message &&
    previous.externalIP === next.externalIP &&
    previous.externalHostname === next.externalHostname;
  const lastSyncTime = same && previous.lastSyncTime !== undefined ? previous.lastSyncTime : metaTime(now);
  return { ...next, lastSyncTime };
}

/** The applied* fields of a status, for cleanup. */
export function appliedOf(status: AppsIngressStatus | undefined): Partial<AppliedNames> | undefined {
  if (status?.appliedServiceName === undefined) return undefined;
  return Object.fromEntries(APPLIED_KEYS.flatMap((k) => (status[k] === undefined ? [] : [[k, status[k]]])));
}

function statusOf(previous: AppsIngressStatus | undefined, o: Observation): Omit<AppsIngressStatus, "lastSyncTime"> {
  if (o.phase === "Pending") return { phase: "Pending", reason: o.reason, message: o.message };
  if (o.phase === "Degraded") {
    // Last good: the VIP of the last Ready stays published while the cause is fixed.
    const kept = {
      ...(previous?.externalIP === undefined ? {} : { externalIP: previous.externalIP }),
      ...(previous?.externalHostname === undefined ? {} : { externalHostname: previous.externalHostname }),
    };
    const still = Object.values(kept).length === 0 ? "" : `; *.apps keeps routing to ${Object.values(kept).join(", ")}`;
    return { phase: "Degraded", reason: o.reason, message: `${o.message}${still}`, ...kept };
  }
  if (o.ingress.ip !== undefined)
    return {
      phase: "Ready",
      reason: "IngressReady",
      message: `LoadBalancer Service ${o.service} has ${o.ingress.ip}`,
      externalIP: o.ingress.ip,
    };
  const hostname = o.ingress.hostname ?? "";
  return {
    phase: "Ready",
    reason: "ExternalHostnameOnly",
    message: `LoadBalancer Service ${o.service} reports only the hostname ${hostname}: Envoy routes *.apps to it, but no wildcard DNS record is published (an IP is needed for an A record)`,
    externalHostname: hostname,
  };
}
