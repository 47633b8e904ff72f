// The watched objects at one moment → ClusterState (what the model reads) plus the raw objects the
// operator compares its writes against. Our own kinds pass through the API schema: invalid ones
// become ClusterState.invalid, undeclared fields ClusterState.unknownFields. Pure.
import type {
  HostedCluster,
  Machine,
  Namespace,
  NodePool,
  Service,
  VirtualMachineInstance,
} from "../../api/external.js";
import type { Infra, InfraClusterAttachment } from "../../api/schema.js";
import { decodeResource, type Decoded } from "../../api/validate.js";
import { objectKey, type ObjectChange, type ObservedKind } from "../../model/incremental/infras-read.js";
import type { ClusterState, InvalidObject } from "../../model/types.js";
import { keyOf } from "./reflector.js";
import { changedKeys, patchMap, REMOVED, type Removed } from "../../util/overlay-map.js";
import type { ResourceName } from "./resources.js";
import type { KubeObject } from "../../kube/rest.js";
import { ChunkedList, type KeyedChange, type ListView } from "../../util/chunked-list.js";

/** Raw objects per watched resource, keyed "<namespace>/<name>". */
export type RawObjects = Readonly<Record<ResourceName, ReadonlyMap<string, KubeObject>>>;

/** One consistent view of the cluster, emitted after every (coalesced) change. */
export interface Observed {
  /** Increases with every snapshot. */
  readonly seq: number;
  readonly state: ClusterState;
  /**
   * The keyed changes of `state` since the snapshot it was built after (none: since the empty
   * cluster): objects the schema refuses are absent, as they are from `state`.
   */
  readonly changes: readonly ObjectChange[];
  readonly raw: RawObjects;
  /** spec.config of every observed NetworkAttachmentDefinition by "<namespace>/<name>". */
  readonly networkAttachments: ReadonlyMap<string, string>;
  /**
   * The keyed changes of `state` since the snapshot numbered `seq` (an earlier one of the same
   * watcher), as `changes` would be had this snapshot been built right after it; undefined when
   * that history is no longer kept (ChangeHistory).
   */
  readonly changesSince?: (seq: number) => readonly ObjectChange[] | undefined;
}

/**
 * The keyed changes of the last snapshots, so that a consumer that skipped some (a rendering
 * that took the latest of several) still learns what changed since the one it saw, instead of
 * comparing every list. Bounded: the last `maxBatches` snapshots, none of more than `maxChanges`
 * changes (a first list, a relist: the history starts again after it).
 */
export class ChangeHistory {
  readonly #batches = new Map<number, readonly ObjectChange[]>();

  constructor(
    readonly maxBatches = 64,
    readonly maxChanges = 10_000,
  ) {}

  add(seq: number, changes: readonly ObjectChange[]): void {
    if (changes.length > this.maxChanges) {
      this.#batches.clear();
      return;
    }
    this.#batches.set(seq, changes);
    for (const old of this.#batches.keys()) {
      if (this.#batches.size <= this.maxBatches) break;
      this.#batches.delete(old);
    }
  }

  /** The net changes from snapshot `from` to snapshot `to`; undefined if one between is not kept. */
  since(from: number, to: number): ObjectChange[] | undefined {
    if (from > to) return undefined;
    const batches: (readonly ObjectChange[])[] = [];
    for (let seq = from + 1; seq <= to; seq++) {
      const batch = this.#batches.get(seq);
      if (batch === undefined) return undefined;
      batches.push(batch);
    }
    return netChanges(batches);
  }
}

/**
 * Consecutive batches of keyed changes as one: per object, its state before the first and after
 * the last (dropped when that is the same object), as comparing the first and the last state by
 * identity would give.
 */
export function netChanges(batches: readonly (readonly ObjectChange[])[]): ObjectChange[] {
  if (batches.length === 1) return [...(batches[0] ?? [])];
  const net = new Map<string, ObjectChange>();
  for (const batch of batches) {
    for (const c of batch) {
      const o = c.after ?? c.before;
      if (o === undefined) continue;
      const key = `${c.kind}/${objectKey(o)}`;
      const was = net.get(key);
      net.set(key, was === undefined ? c : ({ kind: c.kind, before: was.before, after: c.after } as ObjectChange));
    }
  }
  return [...net.values()].filter((c) => c.before !== c.after);
}

/** Memo of schema decoding, keyed by object identity (watch events replace objects, never mutate them). */
export type DecodeCache = WeakMap<KubeObject, Decoded<unknown>>;

/** The snapshot built before, and per resource the keys changed since (undefined: any of them). */
export interface PreviousObserved {
  readonly observed: Observed;
  readonly dirty: ReadonlyMap<ResourceName, ReadonlySet<string> | undefined>;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sorted(m: ReadonlyMap<string, KubeObject>): KubeObject[] {
  return [...m.entries()].sort(([a], [b]) => cmp(a, b)).map(([, o]) => o);
}

/** A watched kind's list of an earlier snapshot as chunks (one built elsewhere may be an array). */
function chunked(list: ListView<KubeObject>): ChunkedList<KubeObject> {
  return list instanceof ChunkedList ? (list as ChunkedList<KubeObject>) : ChunkedList.of([...list], keyOf);
}

/** The resources the model reads, and the kind of their keyed changes. */
const MODEL_RESOURCES = [
  ["infras", "Infra", "infras"],
  ["attachments", "InfraClusterAttachment", "attachments"],
  ["hostedclusters", "HostedCluster", "hostedClusters"],
  ["nodepools", "NodePool", "nodePools"],
  ["machines", "Machine", "machines"],
  ["vmis", "VirtualMachineInstance", "vmis"],
  ["services", "Service", "services"],
  ["namespaces", "Namespace", "namespaces"],
] as const satisfies readonly (readonly [ResourceName, ObservedKind, keyof ClusterState])[];

/**
 * Builds the snapshot; `cache` spares re-validating unchanged Infras and attachments. After
 * `previous`, only the changed resources are patched and only their changed keys compared: a
 * Machine's watch event copies the chunk of the list that holds it (ChunkedList), not the list of
 * every Machine.
 */
export function buildObserved(
  raw: RawObjects,
  seq: number,
  cache: DecodeCache = new WeakMap(),
  previous?: PreviousObserved,
): Observed {
  const decoded = (o: KubeObject | undefined, kind: ObservedKind): unknown => {
    if (o === undefined) return undefined;
    if (kind !== "Infra" && kind !== "InfraClusterAttachment") return o;
    let d = cache.get(o);
    if (d === undefined) {
      d = decodeResource(o, kind);
      cache.set(o, d);
    }
    return d.ok ? d.value : undefined;
  };
  const before = previous?.observed;
  const changes: ObjectChange[] = [];
  /** Per kind of ours compared key by key: the raw keys looked at and the decoded changes. */
  const oursChanged = new Map<OurKind, { readonly keys: Iterable<string>; readonly changes: ObjectChange[] }>();
  let oursWhole = before === undefined;
  const lists: Partial<Record<keyof ClusterState, unknown>> = {};
  for (const [resource, kind, field] of MODEL_RESOURCES) {
    const now = raw[resource];
    const was = before?.raw[resource];
    if (before !== undefined && was === now) {
      lists[field] = before.state[field];
      continue;
    }
    const keys: Iterable<string> =
      was === undefined ? now.keys() : (previous?.dirty.get(resource) ?? new Set([...was.keys(), ...now.keys()]));
    const mine: ObjectChange[] = [];
    const keyed: KeyedChange<KubeObject>[] = [];
    for (const key of keys) {
      const [a, b] = [decoded(was?.get(key), kind), decoded(now.get(key), kind)];
      if (a === b) continue;
      mine.push({ kind, before: a, after: b } as ObjectChange);
      keyed.push([key, b as KubeObject | undefined]);
    }
    // One at a time: a first snapshot holds every Machine, more than a call can take as arguments.
    for (const c of mine) changes.push(c);
    if (kind === "Infra" || kind === "InfraClusterAttachment") {
      if (was === undefined) oursWhole = true;
      else oursChanged.set(kind, { keys, changes: mine });
      continue;
    }
    lists[field] =
      before === undefined
        ? ChunkedList.of(sorted(now), keyOf)
        : chunked(before.state[field] as unknown as ListView<KubeObject>).patch(keyed);
  }
  const invalid: InvalidObject[] = [];
  const unknown: InvalidObject[] = [];
  const decode = <T>(objects: ReadonlyMap<string, KubeObject>, kind: string): T[] => {
    const out: T[] = [];
    for (const o of sorted(objects)) {
      let d = cache.get(o);
      if (d === undefined) {
        d = decodeResource(o, kind);
        cache.set(o, d);
      }
      const ref = { kind, namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" };
      if (d.ok) out.push(d.value as T);
      else invalid.push({ ref, errors: d.errors });
      if (d.unknown.length > 0) unknown.push({ ref, errors: d.unknown });
    }
    return out;
  };
  // After a snapshot, our kinds' lists are patched where keys changed (each attachment's status
  // write is a watch event: 15,000 attachments sorted again per event would cost the whole list).
  const ours =
    oursWhole || before === undefined
      ? {
          infras: decode<Infra>(raw.infras, "Infra"),
          attachments: decode<InfraClusterAttachment>(raw.attachments, "InfraClusterAttachment"),
          invalid,
          unknownFields: unknown,
        }
      : patchOurs(before.state, raw, oursChanged, cache);
  const state: ClusterState = {
    infras: ours.infras,
    attachments: ours.attachments,
    hostedClusters: lists.hostedClusters as ListView<HostedCluster>,
    nodePools: lists.nodePools as ListView<NodePool>,
    machines: lists.machines as ListView<Machine>,
    vmis: lists.vmis as ListView<VirtualMachineInstance>,
    services: lists.services as ListView<Service>,
    namespaces: lists.namespaces as ListView<Namespace>,
    invalid: ours.invalid ?? [],
    unknownFields: ours.unknownFields ?? [],
  };
  const networkAttachments =
    before === undefined
      ? nadConfigs(raw.networkattachments, raw.networkattachments.keys(), new Map())
      : nadConfigs(
          raw.networkattachments,
          changedKeys(before.raw.networkattachments, raw.networkattachments),
          before.networkAttachments,
        );
  return { seq, state, changes, raw, networkAttachments };
}

/** Each NAD's spec.config by "<namespace>/<name>": `before` patched at the keys that changed (each NAD the operator writes is an event). */
function nadConfigs(
  nads: ReadonlyMap<string, KubeObject>,
  keys: Iterable<string>,
  before: ReadonlyMap<string, string>,
): ReadonlyMap<string, string> {
  const changes = new Map<string, string | Removed>();
  for (const key of keys) {
    const config = (nads.get(key)?.["spec"] as { config?: unknown } | undefined)?.config;
    if (typeof config === "string") {
      if (before.get(key) !== config) changes.set(key, config);
    } else if (before.has(key)) changes.set(key, REMOVED);
  }
  return patchMap(before, changes);
}

type OurKind = "Infra" | "InfraClusterAttachment";

const OUR_RESOURCES: readonly (readonly [OurKind, ResourceName])[] = [
  ["Infra", "infras"],
  ["InfraClusterAttachment", "attachments"],
];

/**
 * Our kinds' decoded lists, refused and unknown-field entries after `changed` keys, from the state
 * before: valid objects patched into their sorted lists, the entries of the changed keys made again
 * (the same lists and order as decoding every object).
 */
function patchOurs(
  before: ClusterState,
  raw: RawObjects,
  changed: ReadonlyMap<OurKind, { readonly keys: Iterable<string>; readonly changes: readonly ObjectChange[] }>,
  cache: DecodeCache,
): Pick<ClusterState, "infras" | "attachments" | "invalid" | "unknownFields"> {
  if (changed.size === 0) return before;
  const touched = new Set<string>();
  for (const [kind] of OUR_RESOURCES) for (const key of changed.get(kind)?.keys ?? []) touched.add(`${kind} ${key}`);
  const refKeyOf = (i: InvalidObject): string => `${i.ref.kind} ${i.ref.namespace}/${i.ref.name}`;
  const invalid = (before.invalid ?? []).filter((i) => !touched.has(refKeyOf(i)));
  const unknown = (before.unknownFields ?? []).filter((i) => !touched.has(refKeyOf(i)));
  for (const [kind, resource] of OUR_RESOURCES) {
    for (const key of changed.get(kind)?.keys ?? []) {
      const o = raw[resource].get(key);
      const d = o === undefined ? undefined : cache.get(o);
      if (o === undefined || d === undefined) continue;
      const ref = { kind, namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" };
      if (!d.ok) invalid.push({ ref, errors: d.errors });
      if (d.unknown.length > 0) unknown.push({ ref, errors: d.unknown });
    }
  }
  // A full decode lists Infras before attachments, each by "<namespace>/<name>".
  const order = (a: InvalidObject, b: InvalidObject): number =>
    cmp(a.ref.kind, b.ref.kind) || cmp(`${a.ref.namespace}/${a.ref.name}`, `${b.ref.namespace}/${b.ref.name}`);
  const patch = <T>(list: readonly T[], kind: OurKind): T[] =>
    patchSorted(list as unknown as KubeObject[], changed.get(kind)?.changes ?? []) as unknown as T[];
  return {
    infras: changed.has("Infra") ? patch(before.infras, "Infra") : before.infras,
    attachments: changed.has("InfraClusterAttachment")
      ? patch(before.attachments, "InfraClusterAttachment")
      : before.attachments,
    invalid: invalid.sort(order),
    unknownFields: unknown.sort(order),
  };
}

/** A list sorted by "<namespace>/<name>" with the changes applied (a copy; each change a binary search). */
export function patchSorted<T extends KubeObject>(list: readonly T[], changes: readonly ObjectChange[]): T[] {
  const out = list.slice();
  const keyAt = (i: number): string => keyOf(out[i] as KubeObject);
  for (const change of changes) {
    const o = (change.after ?? change.before) as KubeObject | undefined;
    if (o === undefined) continue;
    const key = keyOf(o);
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(keyAt(mid), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    const found = lo < out.length && keyAt(lo) === key;
    if (change.after === undefined) {
      if (found) out.splice(lo, 1);
    } else if (found) out[lo] = change.after as unknown as T;
    else out.splice(lo, 0, change.after as unknown as T);
  }
  return out;
}
