// How the operator recognises its own writes: every applied object carries the content hash of the
// desired object it was applied from. Comparing hashes (never the server's defaulted fields) is
// what makes an idle operator write nothing and rules out the hot loops of field-by-field diffs.
import { contentHash, type DesiredObject } from "./desired/objects.js";
import type { KubeObject } from "../watchers/kube/rest.js";

/** Annotation holding the content hash of the desired object last applied. */
export const APPLIED_HASH_ANNOTATION = "hostedcluster.densityops.com/applied-hash";

/** Content hash of a desired object (what the annotation will say once it is applied). */
export function desiredHash(o: DesiredObject): string {
  return contentHash(o);
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
