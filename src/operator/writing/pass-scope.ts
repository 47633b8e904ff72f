// What one reconcile pass must look at, given what the pass before it saw (issue 30, target 4). A
// pass decides from the desired objects, the live objects and its own records; when none of an
// Infra's changed since a pass that left it settled, a second look would decide the same, so only
// the Infras something changed for are looked at again — a Machine's change costs its Infra, not
// every object of every Infra. Pure: the reconciler keeps the memory (src/operator/writing/reconcile.ts).
import { changedBetween } from "../../util/merge-sorted.js";
import { changedKeys } from "../../util/overlay-map.js";
import type { RawObjects } from "../../watchers/kube/observed.js";
import type { ResourceName } from "../../watchers/kube/resources.js";
import { byDesiredKey, type DesiredInfra, type DesiredState } from "../desired/index.js";
import { MANAGED_KINDS, type DesiredObject, type ManagedKind } from "../desired/objects.js";
import type { StatusMemory } from "./status-scope.js";

/** The resource each managed kind the operator watches is listed under (the others are never pruned). */
export const RESOURCE_OF_KIND: Readonly<Record<string, ResourceName>> = {
  ServiceAccount: "serviceaccounts",
  NetworkAttachmentDefinition: "networkattachments",
  ConfigMap: "configmaps",
  PersistentVolumeClaim: "pvcs",
  DHCPServer: "dhcpservers",
  DNSServer: "dnsservers",
  ProxyServer: "proxyservers",
  NetworkPolicy: "networkpolicies",
  Service: "services",
  Deployment: "deployments",
};

/**
 * Resources whose changes a pass scopes by: the managed kinds, and the attachments (their
 * finalizers). A change to an Infra or an attachment that matters to its objects changes them.
 */
const SCOPED: readonly ResourceName[] = [...new Set<ResourceName>([...Object.values(RESOURCE_OF_KIND), "attachments"])];

/** What a finished pass leaves for the next one to compare with. */
export interface PassMemory {
  readonly raw: RawObjects;
  /** Attachments whose cross-namespace objects were held ("<namespace>/<name>"). */
  readonly held: ReadonlySet<string>;
  /**
   * Infras the pass found a problem on while writing (a RoleBinding someone else owns): looked at
   * again, so the problem is found again and stays in their status. (A write changes its object,
   * which the watch brings back as a change; a failed one makes the next pass a full one.)
   */
  readonly unsettled: ReadonlySet<string>;
  /** What its status step was computed from (status-scope.ts); undefined: the next computes every status. */
  readonly status: StatusMemory | undefined;
}

/** A pass limited to what changed. */
export interface PassScope {
  /** Infras ("<namespace>/<name>") whose desired objects are looked at. */
  readonly infras: ReadonlySet<string>;
  /** Whether the cross-namespace objects are looked at. */
  readonly crossNamespace: boolean;
  /** Live objects that may have become prunable, as [resource, "<namespace>/<name>"]; undefined: every one. */
  readonly prune: readonly (readonly [ResourceName, string])[] | undefined;
  /** Attachments ("<namespace>/<name>") whose finalizer is looked at. */
  readonly attachments: ReadonlySet<string>;
}

/** The managed kind listed under each watched resource. */
export const KIND_OF_RESOURCE: ReadonlyMap<ResourceName, ManagedKind> = new Map(
  MANAGED_KINDS.flatMap((k) => {
    const resource = RESOURCE_OF_KIND[k.kind];
    return resource === undefined ? [] : [[resource, k] as const];
  }),
);

/** "<Kind>/<namespace>/<name>": an object's key in the desired keys and the reconciler's records. */
export function keyOf(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}/${namespace ?? ""}/${name}`;
}

const infraKey = (d: DesiredInfra): string => `${d.infra.namespace}/${d.infra.name}`;

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const k of a) if (!b.has(k)) return false;
  return true;
}

/**
 * What a pass over `raw` looks at after the pass that left `last`, given how the desired objects
 * moved since (`desired`, DesiredKeys.update's answer). An Infra is looked at when its desired
 * objects are not the same array (DesiredMemo keeps an unchanged Infra's), when the live object
 * under the name of one of them changed, or when the last pass left it unsettled. Pruning looks at
 * changed live objects and those no longer desired, or at every one when the set of Infras with a
 * desired state or of held attachments moved.
 */
export function passScope(
  last: PassMemory,
  raw: RawObjects,
  desired: DesiredChanges,
  desiredKeys: DesiredKeys,
  held: ReadonlySet<string>,
): PassScope {
  const infras = new Set(last.unsettled);
  let crossNamespace = false;
  const prune: (readonly [ResourceName, string])[] = [...desired.dropped];
  const attachments = new Set<string>();
  const lookAt = (owner: string): void => {
    if (owner === CROSS_NAMESPACE) crossNamespace = true;
    else infras.add(owner);
  };
  for (const owner of desired.changed) lookAt(owner);

  for (const resource of SCOPED) {
    const before = last.raw[resource];
    const now = raw[resource];
    for (const key of changedKeys(before, now)) {
      if (resource === "attachments") {
        attachments.add(key);
        continue;
      }
      // Whoever desires an object under this name looks at it again, whatever the change did to
      // its labels (removed, or the object deleted): the live object alone cannot say.
      for (const owner of desiredKeys.owners(keyOf(KIND_OF_RESOURCE.get(resource)?.kind ?? "", ...split(key))))
        lookAt(owner);
      prune.push([resource, key]);
    }
  }
  const heldMoved = !sameSet(held, last.held);
  if (heldMoved) crossNamespace = true;
  return {
    infras,
    crossNamespace,
    prune: desired.servableMoved || heldMoved ? undefined : distinct(prune),
    attachments,
  };
}

/** "<namespace>/<name>" → [namespace, name]. */
function split(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/** Each [resource, key] once (a changed object may also be one no longer desired). */
function distinct(
  candidates: readonly (readonly [ResourceName, string])[],
): readonly (readonly [ResourceName, string])[] {
  const seen = new Set<string>();
  return candidates.filter(([resource, key]) => {
    const id = `${resource} ${key}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The live objects of `was` that `is` no longer holds (they may be prunable now), as [resource, key]. */
function noLongerDesired(
  was: readonly DesiredObject[],
  is: readonly DesiredObject[],
): (readonly [ResourceName, string])[] {
  const still = new Set(is.map(desiredKey));
  const out: (readonly [ResourceName, string])[] = [];
  for (const o of was) {
    const resource = RESOURCE_OF_KIND[o.kind];
    if (resource !== undefined && !still.has(desiredKey(o)))
      out.push([resource, `${o.metadata.namespace ?? ""}/${o.metadata.name}`]);
  }
  return out;
}

/** Who desires an object: an Infra ("<namespace>/<name>"), or CROSS_NAMESPACE. */
const CROSS_NAMESPACE = "";

/** How the desired objects moved since the update before. */
export interface DesiredChanges {
  /** Who desires objects that are not the same array as before: Infras, and CROSS_NAMESPACE. */
  readonly changed: ReadonlySet<string>;
  /** Objects desired before and no longer (they may be prunable now), as [resource, key]. */
  readonly dropped: readonly (readonly [ResourceName, string])[];
  /** An Infra gained or lost its desired state. */
  readonly servableMoved: boolean;
}

/**
 * Every desired object's key ("<Kind>/<namespace>/<name>") and who desires it, kept from pass to
 * pass: an Infra whose objects are the same array as last time costs nothing.
 */
export class DesiredKeys {
  readonly #byInfra = new Map<string, readonly DesiredObject[]>();
  #cross: readonly DesiredObject[] = [];
  /** Key → who desires it (one owner, unless two Infras' objects were ever to collide). */
  readonly #owners = new Map<string, string[]>();

  /** The desired state of the last update: the same one again moved nothing. */
  #last: DesiredState | undefined;

  /**
   * Brought up to `desired`: how it moved since the update before. Only the Infras whose desired
   * objects are not the ones of the last update are visited (the two lists compared by identity).
   */
  update(desired: DesiredState): DesiredChanges {
    if (desired === this.#last) return { changed: new Set(), dropped: [], servableMoved: false };
    const { removed, added } = changedBetween(this.#last?.infras ?? [], desired.infras, byDesiredKey);
    this.#last = desired;
    const changes = { changed: new Set<string>(), dropped: [] as (readonly [ResourceName, string])[] };
    let servableMoved = false;
    const now = new Map(added.map((d) => [infraKey(d), d.objects]));
    for (const key of new Set([...removed.map(infraKey), ...now.keys()])) {
      const was = this.#byInfra.get(key);
      const is = now.get(key);
      if ((was === undefined) !== (is === undefined)) servableMoved = true;
      this.#swap(key, was ?? [], is ?? [], changes);
      if (is === undefined) this.#byInfra.delete(key);
      else this.#byInfra.set(key, is);
    }
    this.#swap(CROSS_NAMESPACE, this.#cross, desired.crossNamespace, changes);
    this.#cross = desired.crossNamespace;
    return { ...changes, servableMoved };
  }

  has(key: string): boolean {
    return this.#owners.has(key);
  }

  /** Who desires the object with this key. */
  owners(key: string): readonly string[] {
    return this.#owners.get(key) ?? [];
  }

  #swap(
    owner: string,
    was: readonly DesiredObject[],
    is: readonly DesiredObject[],
    changes: { readonly changed: Set<string>; readonly dropped: (readonly [ResourceName, string])[] },
  ): void {
    if (was === is) return;
    changes.changed.add(owner);
    changes.dropped.push(...noLongerDesired(was, is));
    for (const o of was) {
      const k = desiredKey(o);
      const left = (this.#owners.get(k) ?? []).filter((x) => x !== owner);
      if (left.length > 0) this.#owners.set(k, left);
      else this.#owners.delete(k);
    }
    for (const o of is) {
      const k = desiredKey(o);
      this.#owners.set(k, [...(this.#owners.get(k) ?? []).filter((x) => x !== owner), owner]);
    }
  }
}

function desiredKey(o: DesiredObject): string {
  return keyOf(o.kind, o.metadata.namespace, o.metadata.name);
}
