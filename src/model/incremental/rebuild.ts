// The model, incrementally: the previous build + keyed changes + the inputs that are not watched
// objects → the next build, equal to build() of the whole new state
// (test/model/incremental/rebuild.property.test.ts). Pure; the previous build is left untouched.
//
// Only the Infras the changes feed (src/model/incremental/infras-read.ts) are built again, by build() itself on
// the part of the state they read. Cross-Infra rules widen that set: a HostedCluster and a domain
// go to the oldest of all their claimants on every Infra, so every Infra holding a claimant of a
// HostedCluster or domain claimed by a rebuilt attachment is rebuilt too, until no claim crosses
// the boundary.
import type { NodePool, VirtualMachineInstance } from "../../api/external.js";
import type { DHCPAllocation } from "../../api/schema.js";
import { sameAllocationTable } from "../allocations.js";
import { controlPlaneNamespaceOf, domainOf, hostedClusterOf } from "../attachments.js";
import { changedClaims, ClaimsView, DOMAIN_CLAIM, HC_CLAIM, isSharedClaim, LayeredClaims } from "./claims-view.js";
import { build, recordSchemaProblems } from "../build.js";
import {
  applyChanges,
  changesBetween,
  EMPTY_INDEX,
  infrasReading,
  infraKeyOf,
  members,
  nadKeyOf,
  objectKey,
  proxyServiceKey,
  vmiNadKeys,
  type FeedIndex,
  type Meta,
  type ObjectChange,
  type ObservedKind,
} from "./infras-read.js";
import { cmp, compareProblems, Problems } from "../problems.js";
import { changedKeys, patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import { patchSortedList } from "../../util/merge-sorted.js";
import { topologyKey } from "../topology-key.js";
import {
  EMPTY_STATE,
  type BuildResult,
  type ClusterState,
  type InvalidObject,
  type Problem,
  type Topology,
} from "../types.js";

/** What a ClusterState holds besides the watched objects. */
export type BuildInputs = {
  readonly [K in "invalid" | "unknownFields" | "incumbents" | "dhcpAllocations" | "now"]?: ClusterState[K] | undefined;
};

/** What one Infra ("<namespace>/<name>", existing or only referenced) contributes to the result. */
interface InfraPart {
  readonly topology: Topology | undefined;
  readonly problems: readonly Problem[];
  /** HostedCluster and domain claims in the base, worker claims in layers per attachment. */
  readonly claims: LayeredClaims;
  /** Its DHCP model reads `now`: an allocation is released (stamped now, or expiring later). */
  readonly timed: boolean;
  /**
   * Infras rebuilt with it whenever it is: a problem about an object several of them read (a VMI
   * on a NAD two Infras share) was kept here, but any of them may have reported it.
   */
  readonly linked: readonly string[];
}

export interface IncrementalBuild {
  readonly index: FeedIndex;
  readonly inputs: BuildInputs;
  readonly result: BuildResult;
  readonly parts: ReadonlyMap<string, InfraPart>;
  /** Problems of the schema: state.invalid and state.unknownFields. */
  readonly schemaProblems: readonly Problem[];
  /** result.claims, as the view that shares each unchanged Infra's claims. */
  readonly claims: ClaimsView;
  /** Infras built again by this step. */
  readonly rebuilt: ReadonlySet<string>;
  /** The part of the state this step built them from: the next step patches it when it rebuilds the same Infras. */
  readonly gathered: Gathered | undefined;
  /** Keys of the parts that are `timed`: a new `now` rebuilds those, found without a walk of every part. */
  readonly timed: ReadonlySet<string>;
}

const NO_VIEW = new ClaimsView(new Map(), new Map());
const NONE: IncrementalBuild = {
  index: EMPTY_INDEX,
  inputs: {},
  result: { topologies: [], problems: [], claims: NO_VIEW },
  claims: NO_VIEW,
  parts: new Map(),
  schemaProblems: [],
  rebuilt: new Set(),
  gathered: undefined,
  timed: new Set(),
};

/** The first build: every object of `state` is an addition. */
export function buildFrom(state: ClusterState): IncrementalBuild {
  return buildIncremental(undefined, changesBetween(EMPTY_STATE, state), inputsOf(state));
}

export function inputsOf(state: ClusterState): BuildInputs {
  const { invalid, unknownFields, incumbents, dhcpAllocations, now } = state;
  return { invalid, unknownFields, incumbents, dhcpAllocations, now };
}

export function buildIncremental(
  previous: IncrementalBuild | undefined,
  changes: readonly ObjectChange[],
  inputs: BuildInputs,
): IncrementalBuild {
  const prev = previous ?? NONE;
  const index = applyChanges(prev.index, changes);
  const affected = affectedInfras(prev, index, changes, inputs);
  widen(prev, index, affected);

  const gathered = patchGathered(prev.gathered, affected, changes, inputs) ?? gather(index, affected, inputs);
  const sub = build(gathered.state);
  const partChanges = new Map<string, InfraPart | Removed>();
  const dropped = new Set<Problem>();
  for (const key of affected) {
    const old = prev.parts.get(key);
    for (const p of old?.problems ?? []) dropped.add(p);
    partChanges.set(key, REMOVED);
  }
  const fresh = partsOf(sub, index, affected, inputs);
  for (const [key, part] of fresh) partChanges.set(key, part);
  const parts = patchMap(prev.parts, partChanges);
  const timed = timedAfter(prev.timed, affected, fresh);

  const schemaChanged = previous === undefined || prev.inputs.invalid !== inputs.invalid;
  const schemaProblems =
    schemaChanged || prev.inputs.unknownFields !== inputs.unknownFields
      ? schemaProblemsOf(inputs)
      : prev.schemaProblems;
  if (schemaProblems !== prev.schemaProblems) for (const p of prev.schemaProblems) dropped.add(p);

  // The kept problems are in order already: the new ones are sorted and merged in.
  const added: Problem[] = [];
  for (const part of fresh.values()) for (const p of part.problems) added.push(p);
  if (schemaProblems !== prev.schemaProblems) for (const p of schemaProblems) added.push(p);
  // (A step that rebuilt nothing keeps the very arrays: the rendering after it looks no further.)
  const problems = patchSortedList(prev.result.problems, dropped, added.sort(compareProblems), compareProblems);

  const claims = claimsOf(prev, affected, fresh);

  // The kept topologies are in order already: the rebuilt ones take their places.
  const gone = new Set<Topology>();
  for (const key of affected) {
    const t = prev.parts.get(key)?.topology;
    if (t !== undefined) gone.add(t);
  }
  const rebuiltTopologies: Topology[] = [];
  for (const part of fresh.values()) if (part.topology !== undefined) rebuiltTopologies.push(part.topology);
  const topologies = patchSortedList(
    prev.result.topologies,
    gone,
    rebuiltTopologies.sort(byTopologyKey),
    byTopologyKey,
  );

  return {
    index,
    inputs,
    result: { topologies, problems, claims },
    parts,
    schemaProblems,
    claims,
    rebuilt: affected,
    gathered,
    timed,
  };
}

/** The Infras the changes and the changed inputs feed, before and after. */
function affectedInfras(
  prev: IncrementalBuild,
  index: FeedIndex,
  changes: readonly ObjectChange[],
  inputs: BuildInputs,
): Set<string> {
  const out = new Set<string>();
  const addAll = (keys: Iterable<string>): void => {
    for (const k of keys) out.add(k);
  };
  for (const change of changes) {
    for (const o of [change.before, change.after]) {
      if (o === undefined) continue;
      addAll(infrasReading(prev.index, change.kind, o));
      addAll(infrasReading(index, change.kind, o));
    }
  }
  // An invalid Infra appearing or going changes what its attachments are told (InfraNotReady).
  const invalidInfras = (list: readonly InvalidObject[] | undefined): Set<string> =>
    new Set((list ?? []).filter((i) => i.ref.kind === "Infra").map((i) => `${i.ref.namespace}/${i.ref.name}`));
  if (prev.inputs.invalid !== inputs.invalid) {
    const [a, b] = [invalidInfras(prev.inputs.invalid), invalidInfras(inputs.invalid)];
    for (const k of a) if (!b.has(k)) out.add(k);
    for (const k of b) if (!a.has(k)) out.add(k);
  }
  if (prev.inputs.dhcpAllocations !== inputs.dhcpAllocations) {
    const none = new Map<string, readonly DHCPAllocation[]>();
    const [a, b] = [prev.inputs.dhcpAllocations ?? none, inputs.dhcpAllocations ?? none];
    for (const k of changedKeys(a, b))
      if (!sameAllocationTable(a.get(k), b.get(k)) && k.endsWith(DHCP_SUFFIX)) out.add(k.slice(0, -DHCP_SUFFIX.length));
  }
  for (const k of movedIncumbents(prev, inputs)) addAll(claimOwners(k, prev.index, index));
  if (prev.inputs.now !== inputs.now) addAll(prev.timed);
  return out;
}

/**
 * The claims whose new incumbent may pick another winner than the previous build did. An
 * incumbent that claims wins (byClaimAge), so a claim keeps its winner when its incumbent is
 * unchanged, or is the holder the previous build chose (which claims it). The pipeline feeds each
 * build's claims back as the next one's incumbents: none of them moves then — not on the first
 * change after start, whose previous build had no incumbents (test/model/incremental/rebuild.property.test.ts).
 */
function movedIncumbents(prev: IncrementalBuild, inputs: BuildInputs): Set<string> {
  const none = new Map<string, string>();
  const [before, after] = [prev.inputs.incumbents ?? none, inputs.incumbents ?? none];
  if (before === after || after === prev.claims) return new Set();
  const out = changedClaims(before, after);
  for (const k of out) if (after.get(k) === prev.claims.get(k)) out.delete(k);
  return out;
}

const DHCP_SUFFIX = "-dhcp";

/** The Infras whose build reads a claim's incumbent. */
function claimOwners(key: string, ...indexes: FeedIndex[]): Set<string> {
  const out = new Set<string>();
  if (key.startsWith(HC_CLAIM)) {
    const hc = key.slice(HC_CLAIM.length);
    for (const index of indexes) for (const a of members(index.attachmentsByHostedCluster, hc)) out.add(infraKeyOf(a));
  } else if (key.startsWith(DOMAIN_CLAIM)) {
    const domain = key.slice(DOMAIN_CLAIM.length);
    for (const index of indexes) for (const a of members(index.attachmentsByDomain, domain)) out.add(infraKeyOf(a));
  } else {
    // "worker:<infra>:…"; names and namespaces hold no ":".
    const infra = key.split(":")[1];
    if (infra !== undefined) out.add(infra);
  }
  return out;
}

/**
 * Adds, until none is missing, every Infra with an attachment claiming a HostedCluster or a domain
 * claimed in the set, and every Infra linked to one in the set.
 */
function widen(prev: IncrementalBuild, after: FeedIndex, affected: Set<string>): void {
  const queue = [...affected];
  const seen = new Set<string>();
  const seenDomains = new Set<string>();
  const add = (key: string): void => {
    if (affected.has(key)) return;
    affected.add(key);
    queue.push(key);
  };
  for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
    for (const k of prev.parts.get(key)?.linked ?? []) add(k);
    for (const index of [prev.index, after]) {
      for (const a of members(index.attachmentsByInfra, key)) {
        const hc = hostedClusterOf(a);
        const hcKey = `${hc.namespace}/${hc.name}`;
        if (!seen.has(hcKey)) {
          seen.add(hcKey);
          for (const i of [prev.index, after])
            for (const b of members(i.attachmentsByHostedCluster, hcKey)) add(infraKeyOf(b));
        }
        const domain = domainOf(a);
        if (!seenDomains.has(domain)) {
          seenDomains.add(domain);
          for (const i of [prev.index, after])
            for (const b of members(i.attachmentsByDomain, domain)) add(infraKeyOf(b));
        }
      }
    }
  }
}

/**
 * Everything the Infras in `keys` read: themselves, their attachments, every object in those
 * attachments' control-plane namespaces (which also makes the namespaces exist, as in the whole
 * state), their HostedClusters, the NodePools of their HostedClusters, the VMIs on their NADs and their internal proxy
 * Services. Invalid Infras are passed without their errors: build() only asks whether one exists,
 * and the schema's problems are kept once, outside the parts.
 */
export function subState(index: FeedIndex, keys: ReadonlySet<string>, inputs: BuildInputs): ClusterState {
  return gather(index, keys, inputs).state;
}

/** A sub-state, the Infras it was gathered for, and what decides whether another object is in it. */
export interface Gathered {
  readonly keys: ReadonlySet<string>;
  readonly state: ClusterState;
  readonly scope: Scope;
}

/** What the Infras' own objects and attachments say they read; only an Infra or attachment change moves it. */
interface Scope {
  /** Their attachments' control-plane namespaces. */
  readonly namespaces: ReadonlySet<string>;
  /** Their attachments' HostedCluster names (a NodePool's spec.clusterName). */
  readonly clusterNames: ReadonlySet<string>;
  /** Their attachments' HostedClusters ("<namespace>/<name>"), whose endpoints they publish. */
  readonly hostedClusters: ReadonlySet<string>;
  /** Their NADs ("<namespace>/<name>"), which a VMI's Multus networks may name. */
  readonly nads: ReadonlySet<string>;
  /** Their internal proxy Services ("<namespace>/<name>"). */
  readonly proxyServices: ReadonlySet<string>;
}

function gather(index: FeedIndex, keys: ReadonlySet<string>, inputs: BuildInputs): Gathered {
  const o = index.objects;
  const infras = [];
  const attachments = [];
  const namespaces = new Set<string>();
  const clusterNames = new Set<string>();
  const hostedClusterKeys = new Set<string>();
  for (const key of keys) {
    const slash = key.indexOf("/");
    const infra = o.Infra.get(key.slice(0, slash))?.get(key);
    if (infra !== undefined) infras.push(infra);
    for (const a of members(index.attachmentsByInfra, key)) {
      attachments.push(a);
      namespaces.add(controlPlaneNamespaceOf(a));
      const hc = hostedClusterOf(a);
      clusterNames.add(hc.name);
      hostedClusterKeys.add(`${hc.namespace}/${hc.name}`);
    }
  }
  const inNamespaces = <T>(m: ReadonlyMap<string, ReadonlyMap<string, T>>): Set<T> => {
    const out = new Set<T>();
    for (const ns of namespaces) for (const x of members(m, ns)) out.add(x);
    return out;
  };
  const hostedClusters = inNamespaces(o.HostedCluster);
  for (const key of hostedClusterKeys) {
    const hc = o.HostedCluster.get(key.slice(0, key.indexOf("/")))?.get(key);
    if (hc !== undefined) hostedClusters.add(hc);
  }
  const nodePools = inNamespaces(o.NodePool);
  for (const name of clusterNames) for (const p of members(index.nodePoolsByClusterName, name)) nodePools.add(p);
  const vmis = inNamespaces(o.VirtualMachineInstance);
  const services = inNamespaces(o.Service);
  const nads = new Set<string>();
  const proxyServices = new Set<string>();
  for (const infra of infras) {
    nads.add(nadKeyOf(infra));
    for (const v of members(index.vmisByNad, nadKeyOf(infra))) vmis.add(v);
    const svc = proxyServiceKey(infra);
    if (svc !== undefined) proxyServices.add(svc);
    const found = svc === undefined ? undefined : o.Service.get(svc.slice(0, svc.indexOf("/")))?.get(svc);
    if (found !== undefined) services.add(found);
  }
  const state: ClusterState = {
    infras,
    attachments,
    hostedClusters: [...hostedClusters],
    nodePools: [...nodePools],
    machines: [...inNamespaces(o.Machine)],
    vmis: [...vmis],
    services: [...services],
    namespaces: [...inNamespaces(o.Namespace)],
    ...gatheredInputs(inputs),
  };
  return { keys, state, scope: { namespaces, clusterNames, hostedClusters: hostedClusterKeys, nads, proxyServices } };
}

/** The inputs a sub-state carries besides the objects. */
function gatheredInputs(inputs: BuildInputs): Omit<ClusterState, ListName> {
  return {
    invalid: (inputs.invalid ?? []).filter((i) => i.ref.kind === "Infra").map((i) => ({ ref: i.ref, errors: [] })),
    ...(inputs.incumbents === undefined ? {} : { incumbents: inputs.incumbents }),
    ...(inputs.dhcpAllocations === undefined ? {} : { dhcpAllocations: inputs.dhcpAllocations }),
    ...(inputs.now === undefined ? {} : { now: inputs.now }),
  };
}

/** The ClusterState list each kind is in. */
const LISTS = {
  Infra: "infras",
  InfraClusterAttachment: "attachments",
  HostedCluster: "hostedClusters",
  NodePool: "nodePools",
  Machine: "machines",
  VirtualMachineInstance: "vmis",
  Service: "services",
  Namespace: "namespaces",
} as const satisfies Record<ObservedKind, keyof ClusterState>;
type ListName = (typeof LISTS)[ObservedKind];

/** More changed objects of one kind than this: gathering again is as cheap as the patch's comparisons. */
const MAX_PATCHED = 64;

/**
 * The sub-state `gather` would make for the same Infras after `changes`, made from the previous
 * one: one moved worker of a 50,000-worker VLAN costs a copy of the lists it changed, not a walk
 * of every object the Infra reads. The same objects (in another order: build() reads them as
 * sets; test/model/incremental/rebuild.property.test.ts). Undefined when it cannot be patched: other Infras
 * rebuilt, or an Infra or attachment changed (what the Infras read moves with them).
 */
export function patchGathered(
  previous: Gathered | undefined,
  keys: ReadonlySet<string>,
  changes: readonly ObjectChange[],
  inputs: BuildInputs,
): Gathered | undefined {
  if (previous === undefined || previous.keys.size !== keys.size) return undefined;
  for (const k of keys) if (!previous.keys.has(k)) return undefined;
  // Per list and changed object ("<namespace>/<name>"): the versions it had, and its last one (undefined: gone).
  const edits = new Map<ListName, Map<string, Edit>>();
  for (const change of changes) {
    if (change.kind === "Infra" || change.kind === "InfraClusterAttachment") return undefined;
    const list = LISTS[change.kind];
    const edit = edits.get(list) ?? new Map<string, Edit>();
    edits.set(list, edit);
    if (change.before !== undefined) {
      const key = objectKey(change.before);
      const e = edit.get(key) ?? { versions: [], last: undefined };
      edit.set(key, { versions: [...e.versions, change.before], last: undefined });
    }
    if (change.after !== undefined) {
      const key = objectKey(change.after);
      edit.set(key, { versions: [...(edit.get(key)?.versions ?? []), change.after], last: change.after });
    }
    if (edit.size > MAX_PATCHED) return undefined;
  }
  const lists: Partial<Record<ListName, readonly Meta[]>> = {};
  for (const [list, edit] of edits) {
    const kept = [...(previous.state[list] as readonly Meta[])];
    // The list holds one object per key, the previous index's: normally a version the change
    // reported (watchers report the object they reported before), found by identity. Else by key.
    const unfound = new Set<string>();
    for (const [key, e] of edit) {
      const at = e.versions.reduce((found, v) => (found >= 0 ? found : kept.indexOf(v)), -1);
      if (at >= 0) kept.splice(at, 1);
      else unfound.add(key);
    }
    const names = new Set([...unfound].map((k) => k.slice(k.indexOf("/") + 1)));
    // A name first: the key is made only for the few objects that share a changed one's name.
    const out =
      unfound.size === 0 ? kept : kept.filter((o) => !names.has(o.metadata.name) || !unfound.has(objectKey(o)));
    for (const { last } of edit.values()) if (last !== undefined && inScope(previous.scope, list, last)) out.push(last);
    lists[list] = out;
  }
  const was = previous.state;
  // The lists only, not the previous inputs: an input absent now (incumbents, tables) is absent.
  const objects = Object.fromEntries(Object.values(LISTS).map((l) => [l, lists[l] ?? was[l]]));
  const state = { ...objects, ...gatheredInputs(inputs) } as unknown as ClusterState;
  return { keys, state, scope: previous.scope };
}

/** One changed object in a patch: every version the changes named, and the one it has now. */
interface Edit {
  readonly versions: readonly Meta[];
  readonly last: Meta | undefined;
}

/** Whether `gather` takes the object (of a kind other than Infra and attachment) for Infras of this scope. */
function inScope(scope: Scope, list: ListName, o: Meta): boolean {
  switch (list) {
    case "namespaces":
      return scope.namespaces.has(o.metadata.name);
    case "nodePools":
      return (
        scope.namespaces.has(o.metadata.namespace) || scope.clusterNames.has((o as NodePool).spec?.clusterName ?? "")
      );
    case "vmis":
      return (
        scope.namespaces.has(o.metadata.namespace) ||
        vmiNadKeys(o as VirtualMachineInstance).some((k) => scope.nads.has(k))
      );
    case "services":
      return scope.namespaces.has(o.metadata.namespace) || scope.proxyServices.has(objectKey(o));
    case "hostedClusters":
      return scope.namespaces.has(o.metadata.namespace) || scope.hostedClusters.has(objectKey(o));
    default:
      return scope.namespaces.has(o.metadata.namespace);
  }
}

/** The sub-build split per Infra: problems and claims go to the Infra their object feeds. */
function partsOf(
  sub: BuildResult,
  index: FeedIndex,
  keys: ReadonlySet<string>,
  inputs: BuildInputs,
): Map<string, InfraPart> {
  const attachmentInfra = (namespace: string, name: string): string | undefined => {
    const a = index.objects.InfraClusterAttachment.get(namespace)?.get(`${namespace}/${name}`);
    return a === undefined ? undefined : infraKeyOf(a);
  };
  // A problem about an Infra or an attachment belongs to that Infra. One about another object (a
  // VMI's address conflict, reported by DHCP) goes to the first rebuilt Infra that object feeds,
  // linked with the others it feeds: any of them may have reported it.
  const first = [...keys][0] ?? "";
  // One Infra rebuilt (a big VLAN's change): everything is its own, its claims the sub-build's map.
  if (keys.size === 1) return new Map(single(first, sub, inputs));
  const problems = new Map<string, Problem[]>();
  const links = new Map<string, Set<string>>();
  for (const p of sub.problems) {
    const { kind, namespace, name } = p.object;
    if (kind === "Infra" || kind === "InfraClusterAttachment") {
      const key = kind === "Infra" ? `${namespace}/${name}` : attachmentInfra(namespace, name);
      push(problems, key !== undefined && keys.has(key) ? key : first, p);
      continue;
    }
    const o = isObservedKind(kind) ? index.objects[kind].get(namespace)?.get(`${namespace}/${name}`) : undefined;
    const owners = [...(o === undefined ? keys : infrasReading(index, kind as ObservedKind, o))].filter((k) =>
      keys.has(k),
    );
    const owner = owners.sort(cmp)[0] ?? first;
    push(problems, owner, p);
    for (const k of owners) {
      const set = links.get(k) ?? new Set<string>();
      for (const other of owners) if (other !== k) set.add(other);
      links.set(k, set);
    }
  }
  const claims = new Map<string, Map<string, string>>();
  for (const [k, holder] of sub.claims) {
    const owner = isSharedClaim(k)
      ? attachmentInfra(holder.slice(0, holder.indexOf("/")), holder.slice(holder.indexOf("/") + 1))
      : k.split(":")[1];
    const key = owner !== undefined && keys.has(owner) ? owner : first;
    const mine = claims.get(key) ?? new Map<string, string>();
    claims.set(key, mine.set(k, holder));
  }
  const none = new Map<string, ReadonlyMap<string, string>>();
  const topologies = new Map(sub.topologies.map((t) => [`${t.infra.namespace}/${t.infra.name}`, t]));
  const out = new Map<string, InfraPart>();
  for (const key of keys) {
    const topology = topologies.get(key);
    const part: InfraPart = {
      topology,
      problems: problems.get(key) ?? [],
      claims: new LayeredClaims(claims.get(key) ?? NO_CLAIMS, none),
      timed: isTimed(key, topology, inputs),
      linked: [...(links.get(key) ?? [])],
    };
    const empty = part.problems.length === 0 && isEmpty(part.claims) && part.linked.length === 0;
    if (part.topology !== undefined || part.timed || !empty) out.set(key, part);
  }
  return out;
}

/** partsOf for one rebuilt Infra: every problem and claim of the sub-build is its own. */
function single(key: string, sub: BuildResult, inputs: BuildInputs): [string, InfraPart][] {
  const topology = sub.topologies.find((t) => `${t.infra.namespace}/${t.infra.name}` === key);
  const part: InfraPart = {
    topology,
    problems: sub.problems,
    claims: sub.claims instanceof LayeredClaims ? sub.claims : new LayeredClaims(sub.claims, new Map()),
    timed: isTimed(key, topology, inputs),
    linked: [],
  };
  const keep = part.topology !== undefined || part.timed || part.problems.length > 0 || !isEmpty(part.claims);
  return keep ? [[key, part]] : [];
}

/** The timed parts' keys after a build replaced the parts of `affected` with `fresh`; the same set when none moved. */
function timedAfter(
  before: ReadonlySet<string>,
  affected: ReadonlySet<string>,
  fresh: ReadonlyMap<string, InfraPart>,
): ReadonlySet<string> {
  const timedNow = (key: string): boolean => fresh.get(key)?.timed === true;
  let moved = false;
  for (const key of affected) if (before.has(key) !== timedNow(key)) moved = true;
  for (const [key, part] of fresh) if (before.has(key) !== part.timed) moved = true;
  if (!moved) return before;
  const out = new Set(before);
  for (const key of affected) out.delete(key);
  for (const [key, part] of fresh) {
    if (part.timed) out.add(key);
    else out.delete(key);
  }
  return out;
}

/** Its DHCP model reads `now`: an allocation is released (stamped now, or expiring later). */
function isTimed(key: string, topology: Topology | undefined, inputs: BuildInputs): boolean {
  return (
    (inputs.dhcpAllocations?.get(`${key}${DHCP_SUFFIX}`) ?? []).some((a) => a.releasedAt !== undefined) ||
    (topology?.dhcp?.allocations ?? []).some((a) => a.releasedAt !== undefined)
  );
}

const NO_CLAIMS: ReadonlyMap<string, string> = new Map();

function isEmpty(claims: LayeredClaims): boolean {
  return claims.base.size === 0 && claims.layers.size === 0;
}

/** The claims of the unchanged Infras, shared, and those of the rebuilt ones. */
function claimsOf(
  prev: IncrementalBuild,
  affected: ReadonlySet<string>,
  fresh: ReadonlyMap<string, InfraPart>,
): ClaimsView {
  const before = prev.claims;
  const infras = new Map<string, LayeredClaims | Removed>();
  const owners = new Map<string, string | Removed>();
  // Shared claims are in the bases; the worker layers are shared as they are.
  for (const key of affected) {
    for (const k of prev.parts.get(key)?.claims.base.keys() ?? [])
      if (before.sharedOwners.get(k) === key) owners.set(k, REMOVED);
    infras.set(key, REMOVED);
  }
  for (const [key, part] of fresh) {
    if (isEmpty(part.claims)) continue;
    infras.set(key, part.claims);
    for (const k of part.claims.base.keys()) if (isSharedClaim(k)) owners.set(k, key);
  }
  return new ClaimsView(patchMap(before.byInfra, infras), patchMap(before.sharedOwners, owners));
}

const byTopologyKey = (a: Topology, b: Topology): number => cmp(topologyKey(a), topologyKey(b));

function isObservedKind(kind: string): kind is ObservedKind {
  return Object.hasOwn(EMPTY_INDEX.objects, kind);
}

function push<T>(m: Map<string, T[]>, key: string, value: T): void {
  const list = m.get(key);
  if (list === undefined) m.set(key, [value]);
  else list.push(value);
}

/** The schema's problems, as build() reports them. */
function schemaProblemsOf(inputs: BuildInputs): Problem[] {
  const problems = new Problems();
  recordSchemaProblems(inputs, problems);
  return problems.sorted();
}
