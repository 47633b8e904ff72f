// The observed objects indexed by what they feed: keyed changes → the next index, and for any
// object the Infras ("<namespace>/<name>") whose model reads it. Pure and persistent: a change
// copies only the groups it touches, so the previous index stays valid (src/model/incremental/rebuild.ts
// keeps both to compare).
//
// Which Infras an object feeds (the model's reads, src/model/build.ts and its helpers):
// - Infra: itself. Attachment: its spec.infraRef, and (cross-Infra: oldest claim wins for a
//   HostedCluster and a domain, src/model/attachments.ts) every Infra with an attachment claiming
//   the same one (src/model/incremental/rebuild.ts widen).
// - Namespace, HostedCluster, Machine (and any object in a namespace, which makes it exist): the
//   Infras of the attachments whose control-plane namespace it is in.
// - HostedCluster: as above, and the Infras of the attachments naming it (its endpoints).
// - NodePool: as above, and the attachments of every HostedCluster of its spec.clusterName.
// - VMI: as above, and every Infra whose NAD one of its Multus networks names (DHCP).
// - Service: as above, and every Infra whose internalProxyService names it.
import { CUDN, networkAttachment } from "../network.js";
import type { Infra, InfraClusterAttachment } from "../../api/schema.js";
import type {
  HostedCluster,
  Machine,
  Namespace,
  NodePool,
  Service,
  VirtualMachineInstance,
} from "../../api/external.js";
import { controlPlaneNamespaceOf, domainOf, hostedClusterOf } from "../attachments.js";
import { parseIPv4 } from "../ipv4.js";
import type { ClusterState } from "../types.js";
import { OverlayMap, patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import { unsharedElements, type ListView } from "../../util/chunked-list.js";

export interface ObservedKinds {
  Infra: Infra;
  InfraClusterAttachment: InfraClusterAttachment;
  HostedCluster: HostedCluster;
  NodePool: NodePool;
  Machine: Machine;
  VirtualMachineInstance: VirtualMachineInstance;
  Service: Service;
  Namespace: Namespace;
}
export type ObservedKind = keyof ObservedKinds;

/** One keyed watch event: the object before and after (undefined = absent), as informers report them. */
export type ObjectChange = {
  [K in ObservedKind]: {
    readonly kind: K;
    readonly before: ObservedKinds[K] | undefined;
    readonly after: ObservedKinds[K] | undefined;
  };
}[ObservedKind];

/** Group → "<namespace>/<name>" → object. */
export type Multi<T> = ReadonlyMap<string, ReadonlyMap<string, T>>;

/** Every observed object, by namespace (a Namespace under its own name), plus the reverse indexes. */
export interface FeedIndex {
  readonly objects: { readonly [K in ObservedKind]: Multi<ObservedKinds[K]> };
  /** By "<namespace>/<spec.infraRef.name>". */
  readonly attachmentsByInfra: Multi<InfraClusterAttachment>;
  readonly attachmentsByControlPlane: Multi<InfraClusterAttachment>;
  /** By HostedCluster "<namespace>/<name>". */
  readonly attachmentsByHostedCluster: Multi<InfraClusterAttachment>;
  /** By domain (<clusterName>.<baseDomain>, lower case). */
  readonly attachmentsByDomain: Multi<InfraClusterAttachment>;
  /** By HostedCluster name alone (a NodePool's spec.clusterName). */
  readonly attachmentsByClusterName: Multi<InfraClusterAttachment>;
  readonly nodePoolsByClusterName: Multi<NodePool>;
  /** By NAD "<namespace>/<name>". */
  readonly vmisByNad: Multi<VirtualMachineInstance>;
  readonly infrasByNad: Multi<Infra>;
  /** By the Service "<namespace>/<name>" spec.infraComponents.proxy.internalProxyService names. */
  readonly infrasByProxyService: Multi<Infra>;
}

export interface Meta {
  readonly metadata: { readonly namespace: string; readonly name: string };
}

export function objectKey(o: Meta): string {
  return `${o.metadata.namespace}/${o.metadata.name}`;
}

export function infraKeyOf(a: InfraClusterAttachment): string {
  return `${a.metadata.namespace}/${a.spec.infraRef.name}`;
}

/**
 * "<namespace>/<name>" of an Infra's NAD; "~/<name>" for a CUDN, whose NAD has its name in every
 * namespace it selects (model/dhcp.ts onNetwork). A spec naming no network gets a key nobody has.
 */
export function nadKeyOf(infra: Infra): string {
  const a = networkAttachment(infra.spec.networkConfig, infra.metadata.namespace);
  if (a === undefined) return "";
  return a.kind === CUDN ? `~/${a.name}` : `${a.namespace}/${a.name}`;
}

/** Multus networkName is "name" (the VMI's namespace) or "namespace/name"; each also as a CUDN's "~/name" (~ is in no namespace name). */
export function vmiNadKeys(vmi: VirtualMachineInstance): string[] {
  const out: string[] = [];
  for (const net of vmi.spec?.networks ?? []) {
    const ref = net.multus?.networkName;
    if (ref === undefined) continue;
    const key = ref.includes("/") ? ref : `${vmi.metadata.namespace}/${ref}`;
    for (const k of [key, `~/${key.slice(key.indexOf("/") + 1)}`]) if (!out.includes(k)) out.push(k);
  }
  return out;
}

/**
 * The Service an internalProxyService names ("svc[.ns[.svc[.cluster.local]]]", default namespace
 * the Infra's), or none for a literal IP. A malformed value names some key nobody has: harmless.
 */
export function proxyServiceKey(infra: Infra): string | undefined {
  const raw = infra.spec.infraComponents?.proxy?.internalProxyService;
  if (raw === undefined || raw === "") return undefined;
  const value = raw.endsWith(".") ? raw.slice(0, -1) : raw;
  if (parseIPv4(value) !== undefined) return undefined;
  const [name = "", namespace = infra.metadata.namespace] = value.split(".");
  return `${namespace}/${name}`;
}

/** Where one kind of object is filed in each index it belongs to: index → groups. */
type Filing = Partial<Record<Exclude<keyof FeedIndex, "objects">, readonly string[]>>;

function filing(kind: ObservedKind, o: Meta): Filing {
  switch (kind) {
    case "InfraClusterAttachment": {
      const a = o as InfraClusterAttachment;
      const hc = hostedClusterOf(a);
      return {
        attachmentsByInfra: [infraKeyOf(a)],
        attachmentsByControlPlane: [controlPlaneNamespaceOf(a)],
        attachmentsByHostedCluster: [`${hc.namespace}/${hc.name}`],
        attachmentsByDomain: [domainOf(a)],
        attachmentsByClusterName: [hc.name],
      };
    }
    case "Infra": {
      const i = o as Infra;
      const svc = proxyServiceKey(i);
      return { infrasByNad: [nadKeyOf(i)], infrasByProxyService: svc === undefined ? [] : [svc] };
    }
    case "NodePool":
      return { nodePoolsByClusterName: [(o as NodePool).spec?.clusterName ?? ""] };
    case "VirtualMachineInstance":
      return { vmisByNad: vmiNadKeys(o as VirtualMachineInstance) };
    default:
      return {};
  }
}

function namespaceOf(kind: ObservedKind, o: Meta): string {
  return kind === "Namespace" ? o.metadata.name : o.metadata.namespace;
}

/**
 * One batch's changes, applied per group: the groups are a persistent map (util/overlay-map.ts), so
 * a change to one of 1,500 groups (the Machines of one control-plane namespace) does not copy the
 * other 1,499, and a large group is one too, so a change to one member (of every attachment of a
 * namespace) does not copy the group.
 */
class Draft<T> {
  /** Per touched group, its members' changes (the last one per member wins). */
  readonly #changes = new Map<string, Map<string, T | Removed>>();
  constructor(readonly base: Multi<T>) {}

  #of(group: string): Map<string, T | Removed> {
    let changes = this.#changes.get(group);
    if (changes === undefined) {
      changes = new Map();
      this.#changes.set(group, changes);
    }
    return changes;
  }

  put(group: string, id: string, value: T): void {
    this.#of(group).set(id, value);
  }

  delete(group: string, id: string): void {
    this.#of(group).set(id, REMOVED);
  }

  done(): Multi<T> {
    const groups = new Map<string, ReadonlyMap<string, T> | Removed>();
    for (const [group, changes] of this.#changes) {
      const was = this.base.get(group) ?? NO_MEMBERS;
      const next = patchGroup(was, changes);
      // Unchanged, or empty before and after (deletes of members that were not there).
      if (next === was || (next.size === 0 && was.size === 0)) continue;
      groups.set(group, next.size === 0 ? REMOVED : next);
    }
    return patchMap<string, ReadonlyMap<string, T>>(this.base, groups);
  }
}

const NO_MEMBERS: ReadonlyMap<string, never> = new Map<string, never>();

/** Below this many members a group is copied: a plain map reads faster than an overlay. */
const SHARED_GROUP = 64;

function patchGroup<T>(was: ReadonlyMap<string, T>, changes: ReadonlyMap<string, T | Removed>): ReadonlyMap<string, T> {
  const next = patchMap(was, changes);
  return was.size < SHARED_GROUP && next instanceof OverlayMap ? new Map(next) : next;
}

const DERIVED = [
  "attachmentsByInfra",
  "attachmentsByControlPlane",
  "attachmentsByHostedCluster",
  "attachmentsByDomain",
  "attachmentsByClusterName",
  "nodePoolsByClusterName",
  "vmisByNad",
  "infrasByNad",
  "infrasByProxyService",
] as const;

const KINDS: readonly ObservedKind[] = [
  "Infra",
  "InfraClusterAttachment",
  "HostedCluster",
  "NodePool",
  "Machine",
  "VirtualMachineInstance",
  "Service",
  "Namespace",
];

const EMPTY: Multi<never> = new Map();

export const EMPTY_INDEX: FeedIndex = {
  objects: Object.fromEntries(KINDS.map((k) => [k, EMPTY])) as unknown as FeedIndex["objects"],
  ...(Object.fromEntries(DERIVED.map((d) => [d, EMPTY])) as Record<(typeof DERIVED)[number], Multi<never>>),
};

/** The index after a batch of changes; `index` itself is left as it was. */
export function applyChanges(index: FeedIndex, changes: readonly ObjectChange[]): FeedIndex {
  const objects = new Map(KINDS.map((k) => [k, new Draft<Meta>(index.objects[k])]));
  const derived = new Map(DERIVED.map((d) => [d, new Draft<Meta>(index[d] as Multi<Meta>)]));
  for (const change of changes) {
    const drafts = objects.get(change.kind);
    if (change.before !== undefined) {
      const id = objectKey(change.before);
      drafts?.delete(namespaceOf(change.kind, change.before), id);
      for (const [d, groups] of Object.entries(filing(change.kind, change.before)))
        for (const g of groups) derived.get(d as (typeof DERIVED)[number])?.delete(g, id);
    }
    if (change.after !== undefined) {
      const id = objectKey(change.after);
      drafts?.put(namespaceOf(change.kind, change.after), id, change.after);
      for (const [d, groups] of Object.entries(filing(change.kind, change.after)))
        for (const g of groups) derived.get(d as (typeof DERIVED)[number])?.put(g, id, change.after);
    }
  }
  const done = <K extends string>(m: Map<K, Draft<Meta>>): Record<K, Multi<Meta>> =>
    Object.fromEntries([...m].map(([k, d]) => [k, d.done()])) as Record<K, Multi<Meta>>;
  return { objects: done(objects), ...done(derived) } as unknown as FeedIndex;
}

/** Keyed changes between two states, by object identity (an unchanged object is the same object). */
export function changesBetween(before: ClusterState, after: ClusterState): ObjectChange[] {
  const out: ObjectChange[] = [];
  const diff = (kind: ObservedKind, whole: ListView<Meta>, now: ListView<Meta>): void => {
    if (whole === now) return; // one list: the same objects
    // A chunk both lists share holds the same objects in both; only the others are compared.
    const { a, b } = unsharedElements(whole, now);
    const old = new Map(Array.from(a, (x) => [objectKey(x), x]));
    for (const x of b) {
      const was = old.get(objectKey(x));
      old.delete(objectKey(x));
      if (was !== x) out.push({ kind, before: was, after: x } as ObjectChange);
    }
    for (const was of old.values()) out.push({ kind, before: was, after: undefined } as ObjectChange);
  };
  diff("Infra", before.infras, after.infras);
  diff("InfraClusterAttachment", before.attachments, after.attachments);
  diff("HostedCluster", before.hostedClusters, after.hostedClusters);
  diff("NodePool", before.nodePools, after.nodePools);
  diff("Machine", before.machines, after.machines);
  diff("VirtualMachineInstance", before.vmis, after.vmis);
  diff("Service", before.services, after.services);
  diff("Namespace", before.namespaces, after.namespaces);
  return out;
}

/** Values of one group, or none. */
export function members<T>(m: Multi<T>, group: string): Iterable<T> {
  return m.get(group)?.values() ?? [];
}

/** The Infras whose model reads one object, looked up in `index` (call with the index before and after). */
export function infrasReading(index: FeedIndex, kind: ObservedKind, o: Meta): Set<string> {
  const out = new Set<string>();
  const byControlPlane = (ns: string): void => {
    for (const a of members(index.attachmentsByControlPlane, ns)) out.add(infraKeyOf(a));
  };
  switch (kind) {
    case "Infra":
      out.add(objectKey(o));
      break;
    case "InfraClusterAttachment":
      out.add(infraKeyOf(o as InfraClusterAttachment));
      break;
    case "Namespace":
      byControlPlane(o.metadata.name);
      break;
    case "HostedCluster":
      byControlPlane(o.metadata.namespace);
      // Its endpoints name its attachments' published hosts (src/model/endpoints.ts).
      for (const a of members(index.attachmentsByHostedCluster, objectKey(o))) out.add(infraKeyOf(a));
      break;
    case "NodePool":
      byControlPlane(o.metadata.namespace);
      for (const a of members(index.attachmentsByClusterName, (o as NodePool).spec?.clusterName ?? ""))
        out.add(infraKeyOf(a));
      break;
    case "VirtualMachineInstance":
      byControlPlane(o.metadata.namespace);
      for (const nad of vmiNadKeys(o as VirtualMachineInstance))
        for (const i of members(index.infrasByNad, nad)) out.add(objectKey(i));
      break;
    case "Service":
      byControlPlane(o.metadata.namespace);
      for (const i of members(index.infrasByProxyService, objectKey(o))) out.add(objectKey(i));
      break;
    default:
      byControlPlane(o.metadata.namespace);
  }
  return out;
}
