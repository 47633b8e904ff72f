// The render thread's cache, copied to the ADS server's thread (./worker.ts): per changed group, the
// types that changed, each with its resource names in order and only the resources the other side
// does not hold yet. The render thread checks, encodes and versions; the ADS thread adopts what it is
// given (SnapshotCache.adopt), so an unchanged resource keeps its object there too.
import type { SnapshotCache } from "../cache/cache.js";
import { CachedResource, DecodeLater, type Snapshot, type TypeSnapshot } from "../cache/snapshot.js";
import type { References } from "../resource/references.js";
import { decodeResource, messageType } from "../resource/protos.js";
import { splitAny } from "../introspect/csds.js";

/** One resource the ADS thread does not hold yet. */
export interface ResourceWire {
  readonly name: string;
  readonly version: string;
  /** Its proto3 JSON, only for a type the other side cannot decode from `any` (decodable()). */
  readonly resource?: object;
  readonly any: Uint8Array;
  readonly references: References;
}

/** A type of a snapshot: unchanged since the last message (`kept`), or its names and new resources. */
export type TypeWire =
  | { readonly typeUrl: string; readonly kept: true }
  | {
      readonly typeUrl: string;
      readonly kept: false;
      readonly version: string;
      readonly changedAt: number;
      readonly bytes: number;
      /** Every resource name of the type, in the snapshot's (name) order. */
      readonly names: readonly string[];
      readonly fresh: readonly ResourceWire[];
    };

/** A group's new snapshot, or its removal. */
export type SnapshotWire =
  | { readonly group: string; readonly removed: true }
  | {
      readonly group: string;
      readonly removed: false;
      readonly version: string;
      readonly createdAt: number;
      readonly types: readonly TypeWire[];
      readonly changed: readonly string[];
    };

/**
 * Sends every snapshot `cache` holds now and each one it takes from now on; returns the unsubscribe.
 * What was sent per group is remembered, so a message carries only what changed since.
 */
export function relaySnapshots(cache: SnapshotCache, send: (wire: SnapshotWire) => void): () => void {
  const sent = new Map<string, Snapshot>();
  const relay = (group: string, snapshot: Snapshot | undefined, changed: readonly string[]): void => {
    if (snapshot === undefined) {
      sent.delete(group);
      send({ group, removed: true });
      return;
    }
    send(snapshotWire(snapshot, changed, sent.get(group)));
    sent.set(group, snapshot);
  };
  for (const group of cache.groups()) {
    const snapshot = cache.getSnapshot(group);
    if (snapshot !== undefined) relay(group, snapshot, [...snapshot.types.keys()]);
  }
  return cache.subscribe(relay);
}

/** The message for `snapshot`, given what the other side holds of its group (`before`). */
export function snapshotWire(
  snapshot: Snapshot,
  changed: readonly string[],
  before: Snapshot | undefined,
): SnapshotWire {
  const types: TypeWire[] = [];
  for (const [typeUrl, type] of snapshot.types) {
    const held = before?.types.get(typeUrl);
    types.push(held === type ? { typeUrl, kept: true } : typeWire(type, held));
  }
  return {
    group: snapshot.group,
    removed: false,
    version: snapshot.version,
    createdAt: snapshot.createdAt,
    types,
    changed,
  };
}

function typeWire(type: TypeSnapshot, held: TypeSnapshot | undefined): TypeWire {
  const fresh: ResourceWire[] = [];
  for (const r of type.resources.values()) {
    // The cache keeps an unchanged resource's object: identity says the other side has it.
    if (held?.resources.get(r.name) === r) continue;
    fresh.push({
      name: r.name,
      version: r.version,
      ...(decodable(r.typeUrl) ? {} : { resource: r.resource }),
      any: ownBytes(r.any),
      references: r.references,
    });
  }
  return {
    typeUrl: type.typeUrl,
    kept: false,
    version: type.version,
    changedAt: type.changedAt,
    bytes: type.bytes,
    names: [...type.resources.keys()],
    fresh,
  };
}

const decodableTypes = new Map<string, boolean>();

/**
 * Whether the protos know `typeUrl`, so the ADS thread can make a resource's JSON from its bytes
 * when introspection first asks (the JSON of one Infra's Listener can be tens of MB: cloning it for
 * every change would hold the ADS thread longer than the render saves).
 */
function decodable(typeUrl: string): boolean {
  let known = decodableTypes.get(typeUrl);
  if (known === undefined) {
    try {
      messageType(typeUrl);
      known = true;
    } catch {
      known = false;
    }
    decodableTypes.set(typeUrl, known);
  }
  return known;
}

// A view into a larger buffer would carry that whole buffer across.
function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

/**
 * The snapshot `wire` describes, built on what `cache` holds of its group, adopted by `cache`.
 * Throws when the message names a type or resource the cache does not hold (the two sides diverged).
 */
export function adoptSnapshot(cache: SnapshotCache, wire: SnapshotWire): void {
  if (wire.removed) {
    cache.deleteSnapshot(wire.group);
    return;
  }
  const before = cache.getSnapshot(wire.group);
  const types = new Map<string, TypeSnapshot>();
  for (const t of wire.types) {
    const held = before?.types.get(t.typeUrl);
    if (t.kept) {
      if (held === undefined) throw new Error(`snapshot of ${wire.group}: ${t.typeUrl} kept but never received`);
      types.set(t.typeUrl, held);
      continue;
    }
    const fresh = new Map(t.fresh.map((r) => [r.name, r]));
    const resources = new Map<string, CachedResource>();
    for (const name of t.names) {
      const r = fresh.get(name);
      const resource =
        r === undefined
          ? held?.resources.get(name)
          : new CachedResource(
              t.typeUrl,
              name,
              r.version,
              r.resource ?? decoder(t.typeUrl, r.any),
              r.any,
              r.references,
            );
      if (resource === undefined)
        throw new Error(`snapshot of ${wire.group}: ${t.typeUrl} "${name}" kept but never received`);
      resources.set(name, resource);
    }
    types.set(t.typeUrl, {
      typeUrl: t.typeUrl,
      version: t.version,
      resources,
      changedAt: t.changedAt,
      bytes: t.bytes,
    });
  }
  cache.adopt(wire.group, { group: wire.group, version: wire.version, createdAt: wire.createdAt, types }, wire.changed);
}

/** Makes a resource's proto3 JSON from its Any bytes, when first asked. */
function decoder(typeUrl: string, any: Uint8Array): DecodeLater {
  return new DecodeLater(() => decodeResource(typeUrl, splitAny(any).value));
}
