// How the operator recognises its own writes: every applied object carries the content hash of the
// desired object it was applied from. Comparing hashes (never the server's defaulted fields) is
// what makes an idle operator write nothing and rules out the hot loops of field-by-field diffs.
import { contentHash, type DesiredObject } from "../desired/objects.js";
import type { KubeObject } from "../../kube/rest.js";

/** Annotation holding the content hash of the desired object last applied. */
export const APPLIED_HASH_ANNOTATION = "hostedcluster.densityops.com/applied-hash";

/** Hashes by object: desired objects are never mutated, and an unchanged Infra keeps its objects (DesiredMemo). */
const hashes = new WeakMap<DesiredObject, string>();

/** Content hash of a desired object (what the annotation will say once it is applied). */
export function desiredHash(o: DesiredObject): string {
  let hash = hashes.get(o);
  if (hash === undefined) {
    hash = contentHash(o);
    hashes.set(o, hash);
  }
  return hash;
}

/** The hash an observed object was applied from; undefined when not applied by oooi. */
export function observedHash(o: KubeObject | undefined): string | undefined {
  return o?.metadata?.annotations?.[APPLIED_HASH_ANNOTATION];
}

/** The body to server-side-apply: the desired object stamped with its hash. */
export function applyBody(o: DesiredObject, hash: string): DesiredObject {
  return {
    ...o,
    metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash } },
  };
}

/**
 * True when the live object still holds every field oooi applies (values the API server adds are
 * ignored; arrays must match element by element). A hand edit of a managed field, with the hash
 * annotation left in place, makes this false — drift the reconciler repairs.
 */
export function holdsManagedFields(desired: unknown, live: unknown): boolean {
  if (Array.isArray(desired)) {
    return (
      Array.isArray(live) &&
      live.length === desired.length &&
      desired.every((d, i) => holdsManagedFields(d, (live as unknown[])[i]))
    );
  }
  if (typeof desired === "object" && desired !== null) {
    if (typeof live !== "object" || live === null || Array.isArray(live)) return false;
    const l = live as Record<string, unknown>;
    return Object.entries(desired).every(([k, v]) => holdsManagedFields(v, l[k]));
  }
  return desired === live;
}
