// What one reconcile pass must look at, given what the pass before it saw (issue 30, target 4). A
// pass decides from the desired objects, the live objects and its own records; when none of an
// Infra's changed since a pass that left it settled, a second look would decide the same, so only
// the Infras something changed for are looked at again — a Machine's change costs its Infra, not
// every object of every Infra. Pure: the reconciler keeps the memory (src/operator/writing/reconcile.ts).
import type { KubeObject } from "../../kube/rest.js";
import { changedKeys } from "../../util/overlay-map.js";
import type { RawObjects } from "../../watchers/kube/observed.js";
import type { ResourceName } from "../../watchers/kube/resources.js";
import type { DesiredInfra, DesiredState } from "../desired/index.js";
import { CLEANUP_BY_FINALIZER, CLEANUP_LABEL, INFRA_LABEL, type DesiredObject } from "../desired/objects.js";

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
  /** Each Infra's desired objects as that pass saw them, by "<namespace>/<name>". */
  readonly objects: ReadonlyMap<string, readonly DesiredObject[]>;
  readonly crossNamespace: readonly DesiredObject[];
  /** Attachments whose cross-namespace objects were held ("<namespace>/<name>"). */
  readonly held: ReadonlySet<string>;
  /**
   * Infras the pass found a problem on while writing (a RoleBinding someone else owns): looked at
   * again, so the problem is found again and stays in their status. (A write changes its object,
   * which the watch brings back as a change; a failed one makes the next pass a full one.)
   */
  readonly unsettled: ReadonlySet<string>;
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

/** The Infra ("<namespace>/<name>") a live managed object is labelled with. */
function infraOf(o: KubeObject | undefined): string | undefined {
  const label = o?.metadata?.labels?.[INFRA_LABEL];
  return label === undefined ? undefined : `${o?.metadata?.namespace ?? ""}/${label}`;
}

const isCleanup = (o: KubeObject | undefined): boolean => o?.metadata?.labels?.[CLEANUP_LABEL] === CLEANUP_BY_FINALIZER;

const infraKey = (d: DesiredInfra): string => `${d.infra.namespace}/${d.infra.name}`;

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const k of a) if (!b.has(k)) return false;
  return true;
}

/**
 * What a pass over `raw` and `desired` looks at after the pass that left `last`. An Infra is looked
 * at when its desired objects are not the same array (DesiredMemo keeps an unchanged Infra's), when
 * a live object labelled with it changed, or when the last pass left it unsettled. Pruning looks at changed live objects and those no longer desired,
 * or at every one when the set of Infras with a desired state or of held attachments moved.
 */
export function passScope(
  last: PassMemory,
  raw: RawObjects,
  desired: DesiredState,
  held: ReadonlySet<string>,
): PassScope {
  const infras = new Set(last.unsettled);
  let crossNamespace = desired.crossNamespace !== last.crossNamespace;
  const prune: [ResourceName, string][] = [];
  const attachments = new Set<string>();

  for (const resource of SCOPED) {
    const before = last.raw[resource];
    const now = raw[resource];
    for (const key of changedKeys(before, now)) {
      const was = before.get(key);
      const is = now.get(key);
      if (resource === "attachments") {
        attachments.add(key);
        continue;
      }
      for (const o of [was, is]) {
        const infra = infraOf(o);
        if (infra !== undefined) infras.add(infra);
        if (isCleanup(o)) crossNamespace = true;
      }
      prune.push([resource, key]);
    }
  }

  let servableMoved = desired.infras.length !== last.objects.size;
  for (const d of desired.infras) {
    const key = infraKey(d);
    const was = last.objects.get(key);
    if (was === undefined) servableMoved = true;
    if (was === d.objects) continue;
    infras.add(key);
    // Objects no longer desired may be prunable now.
    const still = new Set(d.objects.map(liveKey));
    for (const o of was ?? []) {
      const k = liveKey(o);
      const resource = RESOURCE_OF_KIND[o.kind];
      if (!still.has(k) && resource !== undefined) prune.push([resource, k]);
    }
  }
  if (crossNamespace && desired.crossNamespace !== last.crossNamespace) {
    const still = new Set(desired.crossNamespace.map(liveKey));
    for (const o of last.crossNamespace)
      if (!still.has(liveKey(o))) prune.push([RESOURCE_OF_KIND[o.kind] ?? "networkpolicies", liveKey(o)]);
  }
  const heldMoved = !sameSet(held, last.held);
  if (heldMoved) crossNamespace = true;
  return { infras, crossNamespace, prune: servableMoved || heldMoved ? undefined : prune, attachments };
}

/** "<namespace>/<name>": the key of an object in a watched resource's map. */
export function liveKey(o: DesiredObject): string {
  return `${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}

/**
 * The keys ("<Kind>/<namespace>/<name>") of every desired object, kept from pass to pass: an
 * Infra whose objects are the same array as last time costs nothing.
 */
export class DesiredKeys {
  readonly #byInfra = new Map<string, readonly DesiredObject[]>();
  #cross: readonly DesiredObject[] = [];
  /** Key → how many desired objects have it (one, unless two Infras' objects were ever to collide). */
  readonly #keys = new Map<string, number>();

  /** The keys of `desired`'s objects. */
  update(desired: DesiredState): { has(key: string): boolean } {
    const seen = new Set<string>();
    for (const d of desired.infras) {
      const key = infraKey(d);
      seen.add(key);
      this.#swap(this.#byInfra.get(key) ?? [], d.objects);
      this.#byInfra.set(key, d.objects);
    }
    for (const [key, objects] of this.#byInfra) {
      if (seen.has(key)) continue;
      this.#swap(objects, []);
      this.#byInfra.delete(key);
    }
    this.#swap(this.#cross, desired.crossNamespace);
    this.#cross = desired.crossNamespace;
    return this.#keys;
  }

  #swap(was: readonly DesiredObject[], is: readonly DesiredObject[]): void {
    if (was === is) return;
    for (const o of was) {
      const k = desiredKey(o);
      const n = (this.#keys.get(k) ?? 0) - 1;
      if (n > 0) this.#keys.set(k, n);
      else this.#keys.delete(k);
    }
    for (const o of is) this.#keys.set(desiredKey(o), (this.#keys.get(desiredKey(o)) ?? 0) + 1);
  }
}

/** "<Kind>/<namespace>/<name>". */
export function desiredKey(o: DesiredObject): string {
  return `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}
