// Immutable, versioned resource sets: what one node group (Envoy `node.cluster`) is served.
// Every resource is encoded once to protobuf and carries a content hash as its version; a
// type's version is a hash of its resources' names and hashes, so it changes exactly when some
// resource of that type changes.
import { createHash } from "node:crypto";
import type { References } from "../resource/references.js";
import type { EncodedParts } from "../resource/specs.js";
import { deltaEntryAround, sotwEntryHead } from "./response-fragments.js";

/** A resource's proto3 JSON made when first read (CachedResource.resource), not when cached. */
export class DecodeLater {
  constructor(readonly decode: () => object) {}
}

/** One resource of a snapshot, encoded once and shared by every stream that receives it. */
export class CachedResource {
  #sotw: readonly Uint8Array[] | undefined;
  #delta: readonly Uint8Array[] | undefined;
  #lanes: Lanes | undefined;
  #resource: object | undefined;
  readonly #decode: (() => object) | undefined;

  constructor(
    /** xDS type URL, e.g. type.googleapis.com/envoy.config.listener.v3.Listener. */
    readonly typeUrl: string,
    /** Resource name as xDS clients subscribe to it. */
    readonly name: string,
    /** Content hash of the encoded resource: its xDS resource version (Delta `Resource.version`). */
    readonly version: string,
    /**
     * The resource as given to the cache (proto3 JSON), or how to make it once it is first read
     * (a copy of a cache on another thread decodes it from `any` rather than receive it twice).
     */
    resource: object | DecodeLater,
    /** google.protobuf.Any bytes packing the resource. */
    readonly any: Uint8Array,
    /** What a client needs first before it can use this resource (make-before-break). */
    readonly references: References,
    /** Encoded pieces (views into `any`) the next version's encoder may reuse (splice.ts). */
    readonly parts?: EncodedParts,
  ) {
    if (resource instanceof DecodeLater) this.#decode = resource.decode;
    else this.#resource = resource;
  }

  /** The resource as proto3 JSON, for introspection (CSDS and oooi.debug.v1 config dumps). */
  get resource(): object {
    return (this.#resource ??= (this.#decode as () => object)());
  }

  /** Its (name, version) pair's digest, for the type's version (setVersion). */
  get lanes(): Lanes {
    return (this.#lanes ??= pairLanes(this.name, this.version));
  }

  /** The resource as a `DiscoveryResponse.resources` entry, in pieces (tag and length, Any bytes). */
  get sotwEntry(): readonly Uint8Array[] {
    return (this.#sotw ??= [sotwEntryHead(this.any), this.any]);
  }

  /** The resource as a `DeltaDiscoveryResponse.resources` entry (a `Resource` with name and version), in pieces. */
  get deltaEntry(): readonly Uint8Array[] {
    if (this.#delta === undefined) {
      const [before, after] = deltaEntryAround(this.name, this.version, this.any);
      this.#delta = [before, this.any, after];
    }
    return this.#delta;
  }
}

/** All resources of one type in a snapshot. */
export interface TypeSnapshot {
  readonly typeUrl: string;
  /** Hash of every (name, version) of this type: the SotW `version_info`. */
  readonly version: string;
  /** Resources by name, in name order. */
  readonly resources: ReadonlyMap<string, CachedResource>;
  /** Clock time (ms) at which this type's content last changed: the start of push latency. */
  readonly changedAt: number;
  /** Sum of the encoded Any sizes. */
  readonly bytes: number;
}

/** What one node group is served: a type snapshot per type URL. */
export interface Snapshot {
  /** Node group: Envoy `node.cluster`, `<namespace>/<ProxyServer name>` for Envoy fleets. */
  readonly group: string;
  /** Hash of every type version; changes whenever anything in the snapshot changes. */
  readonly version: string;
  /** Clock time (ms) at which this snapshot was set. */
  readonly createdAt: number;
  readonly types: ReadonlyMap<string, TypeSnapshot>;
}

/** A short, stable content hash (64 bits of SHA-256, hex). */
export function contentHash(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

/**
 * Content digests of rendered objects seen before, by object. Rendered resources are immutable
 * and a producer hands back an unchanged object itself, so only new objects pay for a JSON text
 * and a SHA-256 (an equal object keeps one digest: its JSON text is the same).
 */
const jsonDigests = new WeakMap<object, string>();

/** The content digest of a rendered (JSON) object, kept per object. */
export function jsonDigest(o: object): string {
  let digest = jsonDigests.get(o);
  if (digest === undefined) {
    digest = contentHash(JSON.stringify(o));
    jsonDigests.set(o, digest);
  }
  return digest;
}

/** A pair's digest as four 30-bit numbers: small integers, which V8 keeps unboxed in a short array. */
export type Lanes = readonly [number, number, number, number];

const LANE = 0x3fffffff;

/** A (name, version) pair as four 30-bit numbers: 120 bits of its SHA-256. */
export function pairLanes(name: string, version: string): Lanes {
  const digest = createHash("sha256").update(`${name}\u0000${version}`).digest();
  return [
    digest.readUInt32LE(0) & LANE,
    digest.readUInt32LE(4) & LANE,
    digest.readUInt32LE(8) & LANE,
    digest.readUInt32LE(12) & LANE,
  ];
}

/** What setVersion reads of an entry; a CachedResource keeps its lanes, made once. */
export interface VersionedName {
  readonly name: string;
  readonly version: string;
  readonly lanes?: Lanes;
}

/**
 * Version of a set of (name, version) pairs, independent of order: the hash of the sum, lane by
 * lane modulo 2^30, of each pair's 120-bit digest (a multiset hash). A CachedResource makes its
 * digest once, so a set of 20,000 whose entries are mostly the last set's costs 20,000 additions,
 * not a sort and a SHA-256 of every line.
 */
export function setVersion(entries: Iterable<VersionedName>): string {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (const e of entries) {
    const lanes = e.lanes ?? pairLanes(e.name, e.version);
    a = (a + lanes[0]) & LANE;
    b = (b + lanes[1]) & LANE;
    c = (c + lanes[2]) & LANE;
    d = (d + lanes[3]) & LANE;
  }
  return contentHash(`${String(a)}:${String(b)}:${String(c)}:${String(d)}`);
}
