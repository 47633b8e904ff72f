// Every claim of an incremental build (src/model/incremental.ts) as one map, without copying:
// each Infra's own claims, found by the claim's Infra. A change replaces one Infra's map, so
// the next build's claims cost O(Infras), not O(claims) (50,000 worker claims on one VLAN).
import { claimKey } from "./attachments.js";

/** Prefix of HostedCluster claims; the others ("domain:<infra>:…", "worker:<infra>:…") name their Infra. */
export const HC_CLAIM = claimKey.hostedCluster({ namespace: "", name: "" }).slice(0, -"/".length);

/** The Infra a claim belongs to: named in it, or (HostedCluster claims, cluster-wide) looked up. */
export function claimInfra(key: string, hostedClusterOwners: ReadonlyMap<string, string>): string | undefined {
  // Names and namespaces hold no ":".
  return key.startsWith(HC_CLAIM) ? hostedClusterOwners.get(key) : key.split(":")[1];
}

export class ClaimsView implements ReadonlyMap<string, string> {
  constructor(
    /** Infra "<namespace>/<name>" → its claims. */
    readonly byInfra: ReadonlyMap<string, ReadonlyMap<string, string>>,
    /** HostedCluster claim → the Infra of its holder. */
    readonly hostedClusterOwners: ReadonlyMap<string, string>,
  ) {}

  get(key: string): string | undefined {
    const infra = claimInfra(key, this.hostedClusterOwners);
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
    for (const infra of new Set([...a.byInfra.keys(), ...b.byInfra.keys()])) {
      const [x, y] = [a.byInfra.get(infra) ?? none, b.byInfra.get(infra) ?? none];
      if (x !== y) diff(x, y);
    }
  } else diff(a, b);
  return out;
}
