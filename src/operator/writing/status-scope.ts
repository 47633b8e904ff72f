// Which objects' status a reconcile pass computes again (issue 30, target 4). An object's status
// comes from its cached copy, its Infra's rendering, the desired objects and their live copies,
// the problems found on it, its data planes' answers and CoreDNS's: when none of those moved since
// the last pass, computing it again gives what that pass computed (and wrote). Each object's
// status depends on its own Infra's facts only, so a change costs the Infras it reaches. Pure: the
// reconciler keeps the memory (src/operator/writing/reconcile.ts).
import { INFRA_LABEL } from "../../model/children.js";
import { topologyKey } from "../../model/topology-key.js";
import { problemsByRef, refKey } from "../../model/problems.js";
import type { ObjectRef, Problem, Topology } from "../../model/types.js";
import {
  modelStatusEntry,
  sortedStatusEntries,
  type Outputs,
  type RenderedInfra,
  type StatusEntry,
} from "../../pipeline/outputs.js";
import { sameJson } from "../../pipeline/same-json.js";
import { groupBy } from "../../util/group.js";
import { changedKeys, patchMap } from "../../util/overlay-map.js";
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
  /** The lists `problems` was grouped from (StatusFacts.problems). */
  readonly problemLists: readonly (readonly Problem[])[];
  /** Each node group's data-plane stamp (DataPlaneView.stamp): a persistent map, patched at the groups that moved. */
  readonly stamps: ReadonlyMap<string, unknown>;
  /** The Infras ("<namespace>/<name>") one of whose node groups' stamps is not the one in `stampsSince`. */
  readonly stampsMoved: ReadonlySet<string>;
  /** The stamps `stampsMoved` compares with: those of the memory this one was made after. */
  readonly stampsSince: ReadonlyMap<string, unknown> | undefined;
  /** DnsServingView.epoch. */
  readonly dnsEpoch: number | undefined;
}

/** The objects whose status a pass computes. */
export interface StatusScope {
  /** Every object of these Infras ("<namespace>/<name>"), as statusOwner names them. */
  readonly infras: ReadonlySet<string>;
  /** These objects (refKey), whatever Infra they belong to. */
  readonly objects: ReadonlySet<string>;
}

/** What a status step reads beyond the watch's objects, for statusScope and the next pass's memory. */
export interface StatusFacts {
  readonly renderings: ReadonlyMap<string, RenderedInfra>;
  readonly topologies: readonly Topology[];
  /** The problem lists: the model's, the desired state's, those found writing. */
  readonly problems: readonly (readonly Problem[])[];
  /** DataPlaneView.stamp of the pass's moment. */
  readonly stamp: (nodeGroup: string) => unknown;
  readonly dnsEpoch: number | undefined;
}

/**
 * This pass's memory: the facts above, indexed. The problems are grouped again only when one of
 * their lists is not the one `last` grouped (a pass after a watch event that moved no problem
 * keeps the very map, and statusScope compares none of them).
 */
export function statusMemory(facts: StatusFacts, last?: StatusMemory): StatusMemory {
  // Each stamp is asked (a stamp that did not move is the same object: a look-up, no text), and
  // only those that moved are kept anew, with their Infras.
  const before = last?.stamps ?? NO_STAMPS;
  const changes = new Map<string, unknown>();
  const moved = new Set<string>();
  const look = (t: Topology, group: string | undefined): void => {
    if (group === undefined) return;
    // Undefined (no stamp yet) kept as NO_STAMP: a persistent map holds no undefined value.
    const stamp = facts.stamp(group) ?? NO_STAMP;
    if (before.get(group) === stamp) return;
    changes.set(group, stamp);
    moved.add(topologyKey(t));
  };
  for (const t of facts.topologies) {
    look(t, t.proxy?.node);
    look(t, t.dhcp?.name);
  }
  const same =
    last !== undefined &&
    last.problemLists.length === facts.problems.length &&
    last.problemLists.every((list, i) => list === facts.problems[i]);
  return {
    renderings: facts.renderings,
    problems: same ? last.problems : groupBy(facts.problems.flat(), (p) => refKey(p.object)),
    problemLists: facts.problems,
    stamps: patchMap(before, changes),
    stampsMoved: moved,
    stampsSince: last?.stamps,
    dnsEpoch: facts.dnsEpoch,
  };
}

const NO_STAMPS: ReadonlyMap<string, unknown> = new Map();
const NO_STAMP = Symbol("no stamp");

/**
 * The objects whose status may differ from what the pass that left `last` computed: those whose
 * cached copy changed, whose problems changed, whose data plane's stamp changed, and every object
 * of an Infra looked at by the pass (`infras`: its desired or live objects moved), whose rendering
 * changed or one of whose node groups' stamps changed (`now` is statusMemory(…, last)). Undefined
 * (every object) when CoreDNS's answers moved: a probe's answer does not say whose it is.
 */
export function statusScope(
  last: StatusMemory,
  lastRaw: RawObjects,
  now: StatusMemory,
  raw: RawObjects,
  infras: ReadonlySet<string>,
): StatusScope | undefined {
  if (now.dnsEpoch !== last.dnsEpoch) return undefined;
  // `now` made after another memory than `last`: its moved stamps say nothing here.
  if (now.stampsSince !== last.stamps) return undefined;
  const scope = { infras: new Set([...infras, ...now.stampsMoved]), objects: new Set<string>() };
  for (const key of changedKeys(last.renderings, now.renderings)) scope.infras.add(key);
  for (const [kind, resource] of STATUS_RESOURCES)
    for (const key of changedKeys(lastRaw[resource], raw[resource])) scope.objects.add(`${kind}/${key}`);
  if (last.problems !== now.problems)
    for (const key of new Set([...last.problems.keys(), ...now.problems.keys()]))
      if (!sameJson(last.problems.get(key) ?? [], now.problems.get(key) ?? [])) scope.objects.add(key);
  return scope;
}

/**
 * The status entries (as Outputs.status holds them) of the objects in `scope`, built for those
 * alone: each Infra in scope, the attachments of its topology now and at the last pass (`last`),
 * its children; and each object in scope itself. An object no longer in the state has none.
 * Sorted as Outputs.status is.
 */
export function statusEntriesIn(
  scope: StatusScope,
  outputs: Pick<Outputs, "byInfra" | "model">,
  last: Pick<StatusMemory, "renderings">,
  raw: RawObjects,
): StatusEntry[] {
  const problems = problemsByRef(outputs.model.problems);
  const out = new Map<string, StatusEntry>();
  const model = (ref: ObjectRef): void => {
    const key = refKey(ref);
    const cached = raw[ref.kind === "Infra" ? "infras" : "attachments"].get(`${ref.namespace}/${ref.name}`);
    if (out.has(key) || cached === undefined) return;
    const owner = statusOwner(ref, cached);
    const topology = owner === undefined ? undefined : outputs.byInfra.get(owner)?.topology;
    out.set(key, modelStatusEntry(ref, problems.get(key) ?? [], topology));
  };
  /** The children's entries of `owner`'s rendering (of `only`): whether there were any. */
  const children = (owner: string, only?: ObjectRef): boolean => {
    let found = false;
    for (const e of outputs.byInfra.get(owner)?.childStatus ?? []) {
      if (only !== undefined && (e.kind !== only.kind || e.namespace !== only.namespace || e.name !== only.name))
        continue;
      out.set(refKey(e), e);
      found = true;
    }
    return found;
  };
  for (const owner of scope.infras) {
    const [namespace = "", name = ""] = owner.split("/");
    model({ kind: "Infra", namespace, name });
    for (const r of [outputs.byInfra.get(owner), last.renderings.get(owner)])
      for (const a of r?.topology.attachments ?? [])
        model({ kind: "InfraClusterAttachment", namespace: a.ref.namespace, name: a.ref.name });
    children(owner);
  }
  for (const key of scope.objects) {
    const [kind = "", namespace = "", name = ""] = key.split("/");
    const ref = { kind, namespace, name };
    const resource = STATUS_RESOURCES.find(([k]) => k === kind)?.[1];
    const cached = resource === undefined ? undefined : raw[resource].get(`${namespace}/${name}`);
    if (cached === undefined) continue;
    if (kind === "Infra" || kind === "InfraClusterAttachment") {
      model(ref);
      continue;
    }
    // A child whose Infra label someone removed or changed: whichever rendering has it.
    const owner = statusOwner(ref, cached);
    if (owner === undefined || !children(owner, ref)) for (const infra of outputs.byInfra.keys()) children(infra, ref);
  }
  // In Outputs.status's order, so writes go out in the order a pass over every object makes them.
  return sortedStatusEntries(out.values());
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
