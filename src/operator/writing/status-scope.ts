// Which objects' status a reconcile pass computes again (issue 30, target 4). An object's status
// comes from its cached copy, its Infra's rendering, the desired objects and their live copies,
// the problems found on it, its data planes' answers and CoreDNS's: when none of those moved since
// the last pass, computing it again gives what that pass computed (and wrote). Each object's
// status depends on its own Infra's facts only, so a change costs the Infras it reaches. Pure: the
// reconciler keeps the memory (src/operator/writing/reconcile.ts).
import { INFRA_LABEL } from "../../model/children.js";
import { refKey } from "../../model/problems.js";
import type { ObjectRef, Problem, Topology } from "../../model/types.js";
import type { RenderedInfra } from "../../pipeline/outputs.js";
import { sameJson } from "../../pipeline/same-json.js";
import { groupBy } from "../../util/group.js";
import { changedKeys } from "../../util/overlay-map.js";
import type { KubeObject } from "../../kube/rest.js";
import type { RawObjects } from "../../watchers/kube/observed.js";
import type { ResourceName } from "../../watchers/kube/resources.js";

/** The kinds the operator writes a status on, and the resource each is watched under. */
const STATUS_RESOURCES: readonly (readonly [kind: string, resource: ResourceName])[] = [
  ["Infra", "infras"],
  ["InfraClusterAttachment", "attachments"],
  ["DHCPServer", "dhcpservers"],
  ["DNSServer", "dnsservers"],
  ["ProxyServer", "proxyservers"],
];

/** What one status step was computed from, beyond the watch's objects (kept in the pass memory). */
export interface StatusMemory {
  /** The rendering of each Infra ("<namespace>/<name>"): Outputs.byInfra. */
  readonly renderings: ReadonlyMap<string, RenderedInfra>;
  /** The problems on each object (refKey): the model's, the desired state's and those found writing. */
  readonly problems: ReadonlyMap<string, readonly Problem[]>;
  /** Each node group's data-plane stamp (DataPlaneView.stamp). */
  readonly stamps: ReadonlyMap<string, unknown>;
  /** DnsServingView.epoch. */
  readonly dnsEpoch: number | undefined;
}

/** The objects whose status a pass computes. */
export interface StatusScope {
  /** Every object of these Infras ("<namespace>/<name>"), as statusOwner names them. */
  readonly infras: ReadonlySet<string>;
  /** These objects (refKey), whatever Infra they belong to. */
  readonly objects: ReadonlySet<string>;
  /** Node groups whose data-plane answers may have moved: their ProxyServer or DHCPServer. */
  readonly groups: ReadonlySet<string>;
}

/** What a status step reads beyond the watch's objects, for statusScope and the next pass's memory. */
export interface StatusFacts {
  readonly renderings: ReadonlyMap<string, RenderedInfra>;
  readonly topologies: readonly Topology[];
  readonly problems: readonly Problem[];
  /** DataPlaneView.stamp of the pass's moment. */
  readonly stamp: (nodeGroup: string) => unknown;
  readonly dnsEpoch: number | undefined;
}

/** This pass's memory: the facts above, indexed. */
export function statusMemory(facts: StatusFacts): StatusMemory {
  const stamps = new Map<string, unknown>();
  for (const t of facts.topologies)
    for (const group of nodeGroups(t)) if (!stamps.has(group)) stamps.set(group, facts.stamp(group));
  return {
    renderings: facts.renderings,
    problems: groupBy(facts.problems, (p) => refKey(p.object)),
    stamps,
    dnsEpoch: facts.dnsEpoch,
  };
}

/**
 * The objects whose status may differ from what the pass that left `last` computed: those whose
 * cached copy changed, whose problems changed, whose data plane's stamp changed, and every object
 * of an Infra looked at by the pass (`infras`: its desired or live objects moved), whose rendering
 * changed or one of whose node groups' stamps changed. Undefined (every object) when CoreDNS's
 * answers moved: a probe's answer does not say whose it is.
 */
export function statusScope(
  last: StatusMemory,
  lastRaw: RawObjects,
  now: StatusMemory,
  raw: RawObjects,
  infras: ReadonlySet<string>,
  topologies: readonly Topology[],
): StatusScope | undefined {
  if (now.dnsEpoch !== last.dnsEpoch) return undefined;
  const scope = { infras: new Set(infras), objects: new Set<string>(), groups: new Set<string>() };
  for (const key of changedKeys(last.renderings, now.renderings)) scope.infras.add(key);
  for (const [group, stamp] of now.stamps) if (last.stamps.get(group) !== stamp) scope.groups.add(group);
  for (const t of topologies)
    if (nodeGroups(t).some((g) => scope.groups.has(g))) scope.infras.add(`${t.infra.namespace}/${t.infra.name}`);
  for (const [kind, resource] of STATUS_RESOURCES)
    for (const key of changedKeys(lastRaw[resource], raw[resource])) scope.objects.add(`${kind}/${key}`);
  for (const key of new Set([...last.problems.keys(), ...now.problems.keys()]))
    if (!sameJson(last.problems.get(key) ?? [], now.problems.get(key) ?? [])) scope.objects.add(key);
  return scope;
}

/**
 * Whether the pass computes the status of `ref` (cached as `raw`): the object is in scope itself,
 * belongs to an Infra in scope, or is the data plane of a group in scope — or of a group the last
 * pass did not know (`known`).
 */
export function inStatusScope(
  scope: StatusScope,
  known: ReadonlyMap<string, unknown>,
  ref: ObjectRef,
  raw: KubeObject,
): boolean {
  if (scope.objects.has(refKey(ref))) return true;
  const owner = statusOwner(ref, raw);
  if (owner === undefined || scope.infras.has(owner)) return true;
  if (ref.kind !== "ProxyServer" && ref.kind !== "DHCPServer") return false;
  const group = `${ref.namespace}/${ref.name}`;
  return scope.groups.has(group) || !known.has(group);
}

/**
 * The Infra ("<namespace>/<name>") an object's status is computed from: an Infra its own, an
 * attachment the one its spec names (always in its namespace), a child the one its label names.
 * Undefined when the object does not say: such an object is always computed.
 */
export function statusOwner(ref: ObjectRef, raw: KubeObject): string | undefined {
  if (ref.kind === "Infra") return `${ref.namespace}/${ref.name}`;
  if (ref.kind === "InfraClusterAttachment") {
    const name = ((raw["spec"] ?? {}) as { infraRef?: { name?: unknown } }).infraRef?.name;
    return typeof name === "string" ? `${ref.namespace}/${name}` : undefined;
  }
  const label = raw.metadata?.labels?.[INFRA_LABEL];
  return label === undefined ? undefined : `${ref.namespace}/${label}`;
}

/** The xDS node groups of an Infra's data planes. */
function nodeGroups(t: Topology): string[] {
  return [t.proxy?.node, t.dhcp?.name].filter((g): g is string => g !== undefined);
}
