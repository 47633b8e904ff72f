// Every claim of an incremental build (src/model/incremental/rebuild.ts) as one map, without copying:
// each Infra's own claims, found by the claim's Infra. A change replaces one Infra's map, so
// the next build's claims cost O(Infras), not O(claims) (50,000 worker claims on one VLAN).
// Inside one build's claims, each attachment's worker claims are one map of their own
// (LayeredClaims), kept while the attachment's address list is the same array: a change to one
// hosted cluster formats and sets its own 100 worker claims, not the VLAN's 50,000.
import { formatIPv4List } from "../ipv4.js";
import { changedKeys } from "../../util/overlay-map.js";

/**
 * Claim keys; src/pipeline/last-good.ts remembers who held each one (ClusterState.incumbents).
 * A HostedCluster and a domain are claimed across every Infra; a worker address on one.
 */
export const claimKey = {
  hostedCluster: (hc: { namespace: string; name: string }): string => `hostedCluster:${hc.namespace}/${hc.name}`,
  domain: (domain: string): string => `domain:${domain}`,
  worker: (infraKey: string, addr: string): string => `worker:${infraKey}:${addr}`,
};

/** Prefix of HostedCluster claims. */
export const HC_CLAIM = claimKey.hostedCluster({ namespace: "", name: "" }).slice(0, -"/".length);
/** Prefix of domain claims. */
export const DOMAIN_CLAIM = claimKey.domain("");

/** A claim made across every Infra (HostedCluster, domain): its Infra is its holder's, looked up. */
export function isSharedClaim(key: string): boolean {
  return key.startsWith(HC_CLAIM) || key.startsWith(DOMAIN_CLAIM);
}

/** The Infra a claim belongs to: named in it ("worker:<infra>:…"), or (a shared claim) looked up. */
export function claimInfra(key: string, sharedOwners: ReadonlyMap<string, string>): string | undefined {
  // Names and namespaces hold no ":".
  return isSharedClaim(key) ? sharedOwners.get(key) : key.split(":")[1];
}

export class ClaimsView implements ReadonlyMap<string, string> {
  constructor(
    /** Infra "<namespace>/<name>" → its claims. */
    readonly byInfra: ReadonlyMap<string, ReadonlyMap<string, string>>,
    /** Shared (HostedCluster and domain) claim → the Infra of its holder. */
    readonly sharedOwners: ReadonlyMap<string, string>,
  ) {}

  get(key: string): string | undefined {
    const infra = claimInfra(key, this.sharedOwners);
    return infra === undefined ? undefined : this.byInfra.get(infra)?.get(key);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    let n = 0;
    for (const m of this.byInfra.values()) n += m.size;
    return n;
  }

  *entries(): MapIterator<[string, string]> {
    for (const m of this.byInfra.values()) yield* m;
  }

  *keys(): MapIterator<string> {
    for (const m of this.byInfra.values()) yield* m.keys();
  }

  *values(): MapIterator<string> {
    for (const m of this.byInfra.values()) yield* m.values();
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }
}

/**
 * One build's claims: HostedCluster and domain claims in `base`, each holder's worker claims in a
 * layer of their own (holder "<namespace>/<name>" → its claims). No key is in two parts: a worker
 * address is routed to one attachment.
 */
export class LayeredClaims implements ReadonlyMap<string, string> {
  constructor(
    readonly base: ReadonlyMap<string, string>,
    readonly layers: ReadonlyMap<string, ReadonlyMap<string, string>>,
  ) {}

  get(key: string): string | undefined {
    const found = this.base.get(key);
    if (found !== undefined || !key.startsWith(WORKER_CLAIM)) return found;
    // Worker claims are looked up for contested addresses only (rare); a scan of the layers.
    for (const layer of this.layers.values()) {
      const holder = layer.get(key);
      if (holder !== undefined) return holder;
    }
    return undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  get size(): number {
    let n = this.base.size;
    for (const m of this.layers.values()) n += m.size;
    return n;
  }

  *entries(): MapIterator<[string, string]> {
    yield* this.base;
    for (const m of this.layers.values()) yield* m;
  }

  *keys(): MapIterator<string> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): MapIterator<string> {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.entries();
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }
}

/** Where resolveAttachments records the winners: LayeredClaims' two parts, filled. */
export interface ClaimsSink {
  readonly base: Map<string, string>;
  readonly layers: Map<string, ReadonlyMap<string, string>>;
}

export function newClaimsSink(): ClaimsSink {
  return { base: new Map(), layers: new Map() };
}

const WORKER_CLAIM = claimKey.worker("", "").slice(0, -"::".length);

/** The worker claims of one holder's address list, the same map while the list is the same array. */
const workerLayers = new WeakMap<
  readonly number[],
  { infraKey: string; holder: string; claims: Map<string, string> }
>();

export function workerClaims(infraKey: string, holder: string, addrs: readonly number[]): ReadonlyMap<string, string> {
  const kept = workerLayers.get(addrs);
  if (kept !== undefined && kept.infraKey === infraKey && kept.holder === holder) return kept.claims;
  const claims = new Map<string, string>();
  for (const text of formatIPv4List(addrs)) claims.set(claimKey.worker(infraKey, text), holder);
  workerLayers.set(addrs, { infraKey, holder, claims });
  return claims;
}

/**
 * Claims whose holder differs between two maps. Two views share every unchanged Infra's map,
 * so only the Infras that changed are compared.
 */
export function changedClaims(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): Set<string> {
  const out = new Set<string>();
  if (a === b) return out;
  const diff = (x: ReadonlyMap<string, string>, y: ReadonlyMap<string, string>): void => {
    for (const [k, v] of x) if (y.get(k) !== v) out.add(k);
    for (const [k, v] of y) if (x.get(k) !== v) out.add(k);
  };
  if (a instanceof ClaimsView && b instanceof ClaimsView) {
    const none = new Map<string, string>();
    for (const infra of changedKeys(a.byInfra, b.byInfra)) {
      const [x, y] = [a.byInfra.get(infra) ?? none, b.byInfra.get(infra) ?? none];
      if (x === y) continue;
      if (x instanceof LayeredClaims && y instanceof LayeredClaims) diffLayered(x, y, out);
      else diff(x, y);
    }
  } else diff(a, b);
  return out;
}

/** changedClaims of two layered maps: the bases, and only the layers that are not the same map. */
function diffLayered(x: LayeredClaims, y: LayeredClaims, out: Set<string>): void {
  const none = new Map<string, string>();
  for (const [k, v] of x.base) if (y.get(k) !== v) out.add(k);
  for (const [k, v] of y.base) if (x.get(k) !== v) out.add(k);
  for (const holder of new Set([...x.layers.keys(), ...y.layers.keys()])) {
    const [xl, yl] = [x.layers.get(holder) ?? none, y.layers.get(holder) ?? none];
    if (xl === yl) continue;
    // A key in both layers has the same holder (the layer's); others may have moved to another layer.
    for (const [k, v] of xl) if (!yl.has(k) && y.get(k) !== v) out.add(k);
    for (const [k, v] of yl) if (!xl.has(k) && x.get(k) !== v) out.add(k);
  }
}
