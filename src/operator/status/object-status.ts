// The status the operator writes on Infras, attachments and children: conditions (src/operator/
// conditions.ts — Ready everywhere; Degraded, Progressing and <Component>Ready on Infras), Infra
// component readiness (workload available AND data plane on the current config), attachment counts
// and the data plane's ACK/NACK on children, plus the Events a change of them deserves. Only fields
// the CRD schema declares are written, so the API server never prunes what we compare against. Pure.
import { API_VERSION } from "../../api/schema.js";
import { kindDefinition } from "../../api/validate.js";
import { problemsByRef, refKey } from "../../model/problems.js";
import { readyCondition } from "../../model/status.js";
import type { ObjectRef, Topology } from "../../model/types.js";
import type { Outputs, StatusEntry } from "../../pipeline/outputs.js";
import type { Observed } from "../../watchers/kube/observed.js";
import type { ResourceName } from "../../watchers/kube/resources.js";
import type { KubeObject } from "../../kube/rest.js";
import { desiredHash, observedHash } from "../writing/applied.js";
import {
  COMPONENTS,
  conditionEvents,
  fit,
  infraConditions,
  MISSING_BINDING_REASON,
  missingBindingMessage,
  nackEvent,
  sortConditions,
  withTransitionTimes,
  type Component,
  type ComponentReadiness,
  type ComponentReason,
  type ConditionSpec,
  type StatusEvent,
} from "./conditions.js";
import type { DataPlaneView } from "./dataplane.js";
import type { DnsServingView } from "./dns-serving.js";
import { COMPONENT_LABEL, INFRA_LABEL, type DesiredObject } from "../desired/objects.js";
import { sameCanonicalJson, sameJson } from "../../pipeline/same-json.js";
import { desiredInfrasByKey, type DesiredState } from "../desired/index.js";
import { NETWORK_POLICY_ROLE, WORKLOADS_ROLE, type NamespaceRole } from "../desired/permissions.js";
import { NETWORK_POLICY_NAME } from "../desired/policy.js";
import type { MissingBinding } from "../writing/bindings.js";

/** The status one object should have, and whether it already has it. */
export interface StatusUpdate {
  readonly kind: string;
  readonly plural: string;
  readonly namespace: string;
  readonly name: string;
  /** Every field the operator owns; absent ones are removed by the apply. */
  readonly status: Readonly<Record<string, unknown>>;
  readonly upToDate: boolean;
  readonly resourceVersion: string | undefined;
  readonly uid: string | undefined;
  /** What changed compared with the observed status, for `kubectl describe` (sent with the write). */
  readonly events: readonly StatusEvent[];
}

/** Everything status is computed from. */
export interface StatusInput {
  readonly observed: Observed;
  readonly outputs: Outputs;
  readonly desired: DesiredState;
  readonly dataPlane: DataPlaneView;
  /** CoreDNS answers with the current zones (src/operator/status/dns-serving.ts); without it, the ConfigMap's content is enough. */
  readonly dnsServing?: DnsServingView;
  /** Namespaces that refused the operator's writes this pass for want of a RoleBinding. */
  readonly missingBindings?: readonly MissingBinding[];
  /** Clock time (ms) for new transitions. */
  readonly now: number;
  /**
   * The status this process last wrote on an object whose watch has not delivered that write yet
   * (the cache still holds the version the write replaced): compared with and announced against
   * instead of the stale copy, so a status that changes back within the watch's lag is still written.
   */
  readonly unobservedStatus?: (key: StatusKey) => Readonly<Record<string, unknown>> | undefined;
  /**
   * The entries whose objects' status is computed (src/operator/writing/status-scope.ts), each as
   * `outputs.status` holds it; the others have none in the answer. Default: `outputs.status`.
   */
  readonly entries?: readonly StatusEntry[];
}

/** An object with a status, and the resourceVersion the cache holds for it. */
export interface StatusKey {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string | undefined;
}

const KINDS: Readonly<Record<string, { resource: ResourceName; plural: string; owned: readonly string[] }>> = {
  Infra: {
    resource: "infras",
    plural: "infras",
    owned: ["conditions", "observedGeneration", "componentStatus", "attachments"],
  },
  InfraClusterAttachment: {
    resource: "attachments",
    plural: "infraclusterattachments",
    owned: ["conditions", "observedGeneration", "domain", "controlPlaneNamespace", "endpoints"],
  },
  DHCPServer: {
    resource: "dhcpservers",
    plural: "dhcpservers",
    owned: ["conditions", "observedGeneration", "ackedVersion", "lastNack", "allocations"],
  },
  DNSServer: {
    resource: "dnsservers",
    plural: "dnsservers",
    owned: ["conditions", "observedGeneration", "configMapName"],
  },
  ProxyServer: {
    resource: "proxyservers",
    plural: "proxyservers",
    owned: ["conditions", "observedGeneration", "ackedVersion", "lastNack"],
  },
};

const ownedByKind = new Map<string, readonly string[]>();

/** Status fields the operator writes on `kind`: its own fields that the CRD schema declares. */
export function ownedStatusFields(kind: string): readonly string[] {
  let fields = ownedByKind.get(kind);
  if (fields === undefined) {
    const declared = Object.keys(kindDefinition(kind)?.status.properties ?? {});
    fields = (KINDS[kind]?.owned ?? []).filter((f) => declared.includes(f));
    ownedByKind.set(kind, fields);
  }
  return fields;
}

/**
 * The address table of the DHCP node group `node` in this rendering: found through the Infra its
 * DHCPServer's label names, else (a label someone changed) among every topology.
 */
export function dhcpAllocations(outputs: Pick<Outputs, "byInfra" | "model">, node: string, raw: KubeObject): unknown {
  const slash = node.indexOf("/");
  const infra = raw.metadata?.labels?.[INFRA_LABEL];
  const dhcp = infra === undefined ? undefined : outputs.byInfra.get(`${node.slice(0, slash)}/${infra}`)?.topology.dhcp;
  if (dhcp?.name === node) return dhcp.allocations;
  return outputs.model.topologies.find((t) => t.dhcp?.name === node)?.dhcp?.allocations;
}

/** One update per observed object that renderAll reports on (of `entries`, when given). */
export function statusUpdates(input: StatusInput): StatusUpdate[] {
  const { observed, outputs, desired } = input;
  // Each index is kept per list or patched with its rendering: a pass over a few entries costs those.
  const desiredProblems = problemsByRef(desired.problems);
  const modelProblems = problemsByRef(outputs.model.problems);
  const desiredInfras = desiredInfrasByKey(desired);

  const out: StatusUpdate[] = [];
  for (const entry of input.entries ?? outputs.status) {
    const k = KINDS[entry.kind];
    if (k === undefined) continue;
    const cached = observed.raw[k.resource].get(`${entry.namespace}/${entry.name}`);
    if (cached === undefined) continue;
    const owned = ownedStatusFields(entry.kind);
    const written = input.unobservedStatus?.({
      kind: entry.kind,
      namespace: entry.namespace,
      name: entry.name,
      resourceVersion: cached.metadata?.resourceVersion,
    });
    const raw = withOwnWrite(cached, owned, written);
    const ref: ObjectRef = { kind: entry.kind, namespace: entry.namespace, name: entry.name };
    const generation = raw.metadata?.generation;
    const fields: Record<string, unknown> = {};
    const base = entry.status.conditions[0];
    let ready: ConditionSpec = {
      type: "Ready",
      status: base?.status ?? "False",
      reason: base?.reason ?? "Unknown",
      message: base?.message ?? "",
    };
    let conditions: ConditionSpec[] | undefined;
    const events: StatusEvent[] = [];

    if (entry.kind === "Infra") {
      const key = `${entry.namespace}/${entry.name}`;
      const problems = [...(modelProblems.get(refKey(ref)) ?? []), ...(desiredProblems.get(refKey(ref)) ?? [])];
      const t = outputs.byInfra.get(key)?.topology;
      let components: ComponentReadiness[] | undefined;
      if (t !== undefined) {
        fields["attachments"] = entry.status["attachments"];
        components = componentReadiness(
          t,
          desiredInfras.get(key)?.objects ?? [],
          observed,
          input.dataPlane,
          input.dnsServing,
        );
        fields["componentStatus"] = Object.fromEntries(
          components.map((c) => [`${c.component}Ready`, c.reason === "Serving"]),
        );
      }
      const hasError = problems.some((p) => p.severity === "error");
      const unbound = missing(input.missingBindings, WORKLOADS_ROLE, entry.namespace);
      conditions = infraConditions(
        readyCondition(problems),
        hasError,
        components,
        unbound === undefined
          ? undefined
          : missingBindingMessage(`its workloads in namespace ${entry.namespace}`, unbound),
      );
    } else if (entry.kind === "InfraClusterAttachment") {
      fields["domain"] = entry.status["domain"];
      fields["controlPlaneNamespace"] = entry.status["controlPlaneNamespace"];
      fields["endpoints"] = entry.status["endpoints"];
      const cp = entry.status["controlPlaneNamespace"];
      const unbound = typeof cp === "string" ? missing(input.missingBindings, NETWORK_POLICY_ROLE, cp) : undefined;
      if (unbound !== undefined) {
        ready = {
          type: "Ready",
          status: "False",
          reason: MISSING_BINDING_REASON,
          message: missingBindingMessage(`NetworkPolicy ${NETWORK_POLICY_NAME} in namespace ${String(cp)}`, unbound),
        };
      }
    } else if (entry.kind === "ProxyServer" || entry.kind === "DHCPServer") {
      const node = `${entry.namespace}/${entry.name}`;
      const nack = input.dataPlane.lastNack(node);
      fields["ackedVersion"] = input.dataPlane.ackedVersion(node);
      // The durable address table (src/model/allocations.ts), read back by the next leader.
      // Without a DHCP model this round (Infra invalid for a while) the table is kept as it was.
      if (entry.kind === "DHCPServer") {
        fields["allocations"] =
          dhcpAllocations(outputs, node, raw) ?? (raw["status"] as { allocations?: unknown } | undefined)?.allocations;
      }
      fields["lastNack"] = nack;
      const announced = nackEvent(nack, (raw["status"] as { lastNack?: unknown } | undefined)?.lastNack);
      if (announced !== undefined) events.push(announced);
      // The health view's words (src/xds/health.ts): which client, which type, what it NACKed or why it is behind.
      const health = input.dataPlane.health(node);
      if (nack !== undefined && ready.status === "True") {
        ready = {
          type: "Ready",
          status: "False",
          reason: "ConfigurationRejected",
          message: `the data plane rejected the configuration: ${health ?? nack}`,
        };
      } else if (health !== undefined && ready.status === "True" && !input.dataPlane.serving(node)) {
        ready = {
          type: "Ready",
          status: "False",
          reason: "NotAcknowledged",
          message: `the data plane is behind its current configuration: ${health}`,
        };
      }
    } else {
      const infra = (raw.metadata?.labels ?? {})["hostedcluster.densityops.com/infra"];
      const cm = (desiredInfras.get(`${entry.namespace}/${infra ?? ""}`)?.objects ?? []).find(
        (o) => o.kind === "ConfigMap" && o.metadata.labels[COMPONENT_LABEL] === "dns",
      );
      fields["configMapName"] = cm?.metadata.name;
    }

    const specs = conditions ?? [{ ...ready, message: fit(ready.message) }];
    // An object whose status already held what the same facts gave last pass holds it still.
    const known = finished.get(cached);
    if (
      known !== undefined &&
      known.update.upToDate &&
      known.written === written &&
      sameJson(known.specs, specs) &&
      sameJson(known.fields, fields)
    ) {
      out.push(known.update);
      continue;
    }
    const previous = observedConditions(raw);
    const all: Record<string, unknown> = {
      ...fields,
      conditions: withTransitionTimes(specs, previous, generation, input.now),
      observedGeneration: generation,
    };
    events.unshift(...conditionEvents(specs, previous));
    const status: Record<string, unknown> = {};
    for (const f of owned) if (all[f] !== undefined) status[f] = all[f];
    const update: StatusUpdate = {
      kind: entry.kind,
      plural: k.plural,
      namespace: entry.namespace,
      name: entry.name,
      status,
      upToDate: sameCanonicalJson(status, ownedOf(raw, owned, previous)),
      resourceVersion: raw.metadata?.resourceVersion,
      uid: raw.metadata?.uid,
      events,
    };
    finished.set(cached, { written, specs, fields, update });
    out.push(update);
  }
  return out;
}

/**
 * The last update computed for each cached object (the watch cache replaces an object that changes),
 * with the facts it came from: the conditions before their transition times and the other fields.
 * Reused only while it was up to date — the object held that status, so no transition time, event
 * or clock reading is new — and the facts are the same: a converged pass does not compare again every
 * object's status with what it holds (issue 30, target 4).
 */
const finished = new WeakMap<
  KubeObject,
  {
    readonly written: Readonly<Record<string, unknown>> | undefined;
    readonly specs: readonly ConditionSpec[];
    readonly fields: Readonly<Record<string, unknown>>;
    readonly update: StatusUpdate;
  }
>();

/** The commands creating `role`'s missing binding in `namespace`, or undefined when it is not missing. */
function missing(
  bindings: readonly MissingBinding[] | undefined,
  role: NamespaceRole,
  namespace: string,
): string[] | undefined {
  const commands = (bindings ?? []).filter((b) => b.role === role && b.namespace === namespace).map((b) => b.command);
  return commands.length === 0 ? undefined : commands;
}

/** The status apply configuration for one update. */
export function statusBody(u: StatusUpdate): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: u.kind,
    metadata: { name: u.name, namespace: u.namespace },
    status: u.status,
  };
}

/**
 * Per enabled component: its Deployment exists with the current spec and is available, and its data
 * plane is on the current config — Envoy and the dhcp-agent ACKed their snapshot over xDS; CoreDNS
 * (which speaks no xDS) has its ConfigMap at the current content and, with `dnsServing`, answers
 * through its Service with the current zones.
 */
export function componentReadiness(
  t: Topology,
  objects: readonly DesiredObject[],
  observed: Observed,
  dataPlane: DataPlaneView,
  dnsServing?: DnsServingView,
): ComponentReadiness[] {
  const out: ComponentReadiness[] = [];
  for (const component of COMPONENTS) {
    if (t.children[component] === undefined) continue;
    const mine = objects.filter((o) => o.metadata.labels[COMPONENT_LABEL] === component);
    const not = whyNotReady(component, t, mine, observed, dataPlane, dnsServing);
    out.push({ component, reason: not?.[0] ?? "Serving", why: not?.[1] ?? "" });
  }
  return out;
}

function whyNotReady(
  component: Component,
  t: Topology,
  objects: readonly DesiredObject[],
  observed: Observed,
  dataPlane: DataPlaneView,
  dnsServing: DnsServingView | undefined,
): [ComponentReason, string] | undefined {
  const deployment = objects.find((o) => o.kind === "Deployment");
  if (deployment === undefined) return ["NotDeployed", "no workload is deployed (see the Infra's problems)"];
  const name = `${deployment.metadata.namespace ?? ""}/${deployment.metadata.name}`;
  const live = observed.raw.deployments.get(name);
  if (live === undefined) return ["DeploymentMissing", `Deployment ${deployment.metadata.name} does not exist yet`];
  if (observedHash(live) !== desiredHash(deployment))
    return ["DeploymentOutdated", `Deployment ${deployment.metadata.name} is not updated yet`];
  const unavailable = deploymentUnavailable(live);
  if (unavailable !== undefined)
    return ["DeploymentUnavailable", `Deployment ${deployment.metadata.name} ${unavailable}`];
  if (component === "dns") {
    const cm = objects.find((o) => o.kind === "ConfigMap");
    const liveCm =
      cm === undefined ? undefined : observed.raw.configmaps.get(`${cm.metadata.namespace ?? ""}/${cm.metadata.name}`);
    if (cm !== undefined && observedHash(liveCm) !== desiredHash(cm))
      return ["ConfigMapOutdated", `ConfigMap ${cm.metadata.name} is not at the current configuration yet`];
    if (dnsServing === undefined || cm === undefined) return undefined;
    const service = objects.find((o) => o.kind === "Service");
    const liveService =
      service === undefined
        ? undefined
        : observed.raw.services.get(`${service.metadata.namespace ?? ""}/${service.metadata.name}`);
    if (liveService === undefined)
      return ["ServiceMissing", `Service ${service?.metadata.name ?? cm.metadata.name} does not exist yet`];
    const notServing = dnsServing.why(liveService, (cm["data"] ?? {}) as Record<string, string>);
    return notServing === undefined ? undefined : ["NotServingCurrentZones", notServing];
  }
  const node = component === "proxy" ? t.proxy?.node : t.dhcp?.name;
  if (node === undefined) return ["NoConfiguration", "no data plane configuration"];
  if (dataPlane.serving(node)) return undefined;
  const nack = dataPlane.lastNack(node);
  const health = dataPlane.health(node);
  return nack === undefined
    ? [
        "NotAcknowledged",
        `data plane ${node} has not acknowledged the current configuration${health === undefined ? "" : `: ${health}`}`,
      ]
    : ["ConfigurationRejected", `data plane ${node} rejected the configuration: ${health ?? nack}`];
}

/** Why a Deployment is not available at its current generation, or undefined when it is. */
export function deploymentUnavailable(d: KubeObject): string | undefined {
  const spec = (d["spec"] ?? {}) as { replicas?: number };
  const status = (d["status"] ?? {}) as {
    observedGeneration?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type?: string; status?: string }[];
  };
  const want = spec.replicas ?? 1;
  if ((status.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) return "has not observed its current spec";
  if ((status.updatedReplicas ?? 0) < want) return `is rolling out (${status.updatedReplicas ?? 0}/${want} updated)`;
  if (want < 1 || (status.availableReplicas ?? 0) < 1)
    return `has no available replica (${status.availableReplicas ?? 0}/${want})`;
  const available = status.conditions?.find((c) => c.type === "Available");
  if (available !== undefined && available.status !== "True") return "is not Available";
  return undefined;
}

/** The cached object with its owned status fields replaced by those of our unobserved write. */
function withOwnWrite(
  cached: KubeObject,
  owned: readonly string[],
  written: Readonly<Record<string, unknown>> | undefined,
): KubeObject {
  if (written === undefined) return cached;
  const others = Object.entries((cached["status"] ?? {}) as Record<string, unknown>).filter(
    ([f]) => !owned.includes(f),
  );
  return { ...cached, status: { ...Object.fromEntries(others), ...written } };
}

/** The observed conditions of the types the operator writes (others belong to someone else), sorted. */
function observedConditions(raw: KubeObject): readonly Record<string, unknown>[] {
  const conditions = ((raw["status"] ?? {}) as { conditions?: unknown }).conditions;
  if (!Array.isArray(conditions)) return [];
  // The watch cache keeps an unchanged object (and so its conditions array) from pass to pass.
  let sorted = sortedConditions.get(conditions);
  if (sorted === undefined) {
    sorted = sortConditions(conditions as Record<string, unknown>[]);
    sortedConditions.set(conditions, sorted);
  }
  return sorted;
}
const sortedConditions = new WeakMap<readonly unknown[], readonly Record<string, unknown>[]>();

/**
 * The observed status restricted to the owned fields, conditions (`conditions`, observedConditions'
 * answer) to the types the operator writes.
 */
function ownedOf(
  raw: KubeObject,
  owned: readonly string[],
  conditions: readonly Record<string, unknown>[],
): Record<string, unknown> {
  const status = (raw["status"] ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of owned) {
    if (f === "conditions") {
      if (conditions.length > 0) out[f] = conditions;
    } else if (status[f] !== undefined) out[f] = status[f];
  }
  return out;
}
