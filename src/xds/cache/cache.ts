// The snapshot cache: the only link between producers (renderers) and the ADS server. Producers
// set a whole snapshot per node group; the cache refuses inconsistent ones (keeping the previous
// snapshot), encodes each resource once, versions by content and tells its subscribers which
// groups changed. It keeps only the current snapshot per group, never history.
import { compareText } from "../resource/json.js";
import { referencesOf } from "../resource/references.js";
import type { EncodedParts, ResourceInput, ResourceTypeSpec, SnapshotCheck, SnapshotInput } from "../resource/specs.js";
import { CachedResource, contentHash, jsonDigest, setVersion, type Snapshot, type TypeSnapshot } from "./snapshot.js";
import { envoyTypeSpecs } from "./type-specs.js";
import { encodeAny } from "./response-fragments.js";

/** Outcome of setSnapshot: the types whose version changed, or why the snapshot was refused. */
export type SetSnapshotResult =
  | { readonly ok: true; readonly changed: readonly string[]; readonly snapshot: Snapshot }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Called after a group's snapshot changed (undefined: the group's snapshot was removed). */
export type SnapshotListener = (group: string, snapshot: Snapshot | undefined, changedTypes: readonly string[]) => void;

/** Options of a SnapshotCache. */
export interface SnapshotCacheOptions {
  /**
   * The rules a snapshot must meet to be served (Envoy's: src/envoy/snapshot.ts). Required, so a
   * cache never serves what it did not check; tests of the transport alone pass `() => []`.
   */
  readonly check: SnapshotCheck;
  /** Clock in milliseconds (push latencies start at a snapshot's change time). Default Date.now. */
  readonly now?: () => number;
}

/** Versioned, consistency-checked snapshots per node group. */
export class SnapshotCache {
  readonly #specs = envoyTypeSpecs();
  readonly #snapshots = new Map<string, Snapshot>();
  readonly #listeners = new Set<SnapshotListener>();
  readonly #now: () => number;
  readonly #check: SnapshotCheck;

  constructor(options: SnapshotCacheOptions) {
    this.#now = options.now ?? Date.now;
    this.#check = options.check;
  }

  /** Makes a resource type servable (e.g. oooi.dhcp.v1.KeaConfig with its protobuf encoder). */
  registerType(typeUrl: string, spec: ResourceTypeSpec): void {
    this.#specs.set(typeUrl, spec);
  }

  /** The spec of a registered type URL. */
  typeSpec(typeUrl: string): ResourceTypeSpec | undefined {
    return this.#specs.get(typeUrl);
  }

  /**
   * Replaces a group's snapshot. Refused, with the previous snapshot kept, when a resource does
   * not encode, a name is repeated or mismatched, or the injected check finds an error.
   * Subscribers hear about it only when some type's version changed.
   */
  setSnapshot(group: string, input: SnapshotInput): SetSnapshotResult {
    const errors: string[] = [];
    for (const typeUrl of input.keys()) {
      if (!this.#specs.has(typeUrl)) errors.push(`resource type ${typeUrl} is not registered`);
    }
    errors.push(...this.#check(input));
    if (errors.length > 0) return { ok: false, errors };

    const previous = this.#snapshots.get(group);
    const now = this.#now();
    const types = new Map<string, TypeSnapshot>();
    const changed: string[] = [];
    for (const [typeUrl, spec] of this.#specs) {
      const items = input.get(typeUrl) ?? [];
      const before = previous?.types.get(typeUrl);
      if (items.length === 0 && !input.has(typeUrl) && before === undefined) continue;
      const built = buildType(typeUrl, spec, items, before, now, errors);
      if (built === undefined) continue;
      types.set(typeUrl, built);
      if (before?.version !== built.version) changed.push(typeUrl);
    }
    for (const typeUrl of previous?.types.keys() ?? []) {
      if (!types.has(typeUrl)) changed.push(typeUrl);
    }
    if (errors.length > 0) return { ok: false, errors };
    if (previous !== undefined && changed.length === 0) return { ok: true, changed, snapshot: previous };

    const snapshot: Snapshot = {
      group,
      version: setVersion([...types.values()].map((t) => ({ name: t.typeUrl, version: t.version }))),
      createdAt: now,
      types,
    };
    this.#snapshots.set(group, snapshot);
    for (const listener of this.#listeners) listener(group, snapshot, changed);
    return { ok: true, changed, snapshot };
  }

  /**
   * Takes a snapshot another cache built and checked (src/xds/thread/: the ADS server's thread
   * serves what the render thread's cache accepted): set as is, `changed` told to subscribers.
   */
  adopt(group: string, snapshot: Snapshot, changed: readonly string[]): void {
    this.#snapshots.set(group, snapshot);
    for (const listener of this.#listeners) listener(group, snapshot, changed);
  }

  /** Removes a group's snapshot; connected streams keep what they have and get nothing new. */
  deleteSnapshot(group: string): boolean {
    if (!this.#snapshots.delete(group)) return false;
    for (const listener of this.#listeners) listener(group, undefined, []);
    return true;
  }

  /** The current snapshot of a group. */
  getSnapshot(group: string): Snapshot | undefined {
    return this.#snapshots.get(group);
  }

  /** Groups that have a snapshot, sorted. */
  groups(): string[] {
    return [...this.#snapshots.keys()].sort();
  }

  /** Calls `listener` after every snapshot change; returns the unsubscribe function. */
  subscribe(listener: SnapshotListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

function buildType(
  typeUrl: string,
  spec: ResourceTypeSpec,
  items: readonly ResourceInput[],
  before: TypeSnapshot | undefined,
  now: number,
  errors: string[],
): TypeSnapshot | undefined {
  const byName = new Map<string, CachedResource>();
  let bytes = 0;
  // Renderers hand their resources over sorted already: checked in one pass, sorted only when not.
  const sorted = sortedByName(items) ? items : [...items].sort((a, b) => compareText(a.name, b.name));
  const whereOf = (name: string): string => `${typeUrl.slice(typeUrl.lastIndexOf("/") + 1)} "${name}"`;
  for (const { name, resource } of sorted) {
    if (name === "") {
      errors.push(`${whereOf(name)}: a resource needs a name`);
      continue;
    }
    if (byName.has(name)) {
      errors.push(`${whereOf(name)}: name used twice`);
      continue;
    }
    const declared = spec.nameOf?.(resource);
    if (declared !== undefined && declared !== name) {
      errors.push(`${whereOf(name)}: the resource calls itself "${declared}"`);
      continue;
    }
    const old = before?.resources.get(name);
    // An unchanged resource keeps its bytes and version without being encoded again: the same
    // object (a producer that keeps unchanged objects), or one of equal content (a producer that
    // renders it again, or hands over a group whose rendering did not change). A type encoded in
    // pieces compares its pieces instead (splice.ts): a JSON text of a whole large listener would
    // cost more than the splice.
    if (
      old !== undefined &&
      (old.resource === resource || (!spec.encodeReusing && sameContent(old.resource, resource)))
    ) {
      byName.set(name, old);
      bytes += old.any.length;
      continue;
    }
    let any: Uint8Array;
    let parts: EncodedParts | undefined;
    try {
      ({ any, parts } = encodeEntry(typeUrl, spec, resource, old?.parts));
    } catch (e) {
      errors.push(`${whereOf(name)}: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    const version = contentHash(any);
    // Same content keeps the same object, so streams compare resources by identity.
    const cached =
      old?.version === version
        ? old
        : new CachedResource(
            typeUrl,
            name,
            version,
            resource,
            any,
            referencesOf(typeUrl, resource, old?.references),
            parts,
          );
    byName.set(name, cached);
    bytes += any.length;
  }
  if (errors.length > 0) return undefined;
  const version = setVersion(byName.values());
  if (before?.version === version) return before;
  return { typeUrl, version, resources: byName, changedAt: now, bytes };
}

function sortedByName(items: readonly ResourceInput[]): boolean {
  for (let i = 1; i < items.length; i++)
    if (compareText(items[i - 1]?.name ?? "", items[i]?.name ?? "") > 0) return false;
  return true;
}

function sameContent(a: object, b: object): boolean {
  return jsonDigest(a) === jsonDigest(b);
}

/** A resource's Any bytes and, when its type encodes in pieces, those pieces as views into them. */
function encodeEntry(
  typeUrl: string,
  spec: ResourceTypeSpec,
  resource: object,
  previous: EncodedParts | undefined,
): { any: Uint8Array; parts: EncodedParts | undefined } {
  if (spec.encodeReusing === undefined) return { any: encodeAny(typeUrl, spec.encode(resource)), parts: undefined };
  const encoded = spec.encodeReusing(resource, previous);
  const any = encodeAny(typeUrl, encoded.bytes);
  // The message is the Any's last field: its bytes end the Any, so the pieces can point into it.
  const base = any.length - encoded.bytes.length;
  const parts = new Map<string, Uint8Array>();
  for (const [digest, [start, end]] of encoded.parts) parts.set(digest, any.subarray(base + start, base + end));
  return { any, parts };
}
