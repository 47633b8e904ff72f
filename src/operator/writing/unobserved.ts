// Whether the watch cache already holds a write of ours. An object can have two writers (an
// attachment's status: the reconcile pass's conditions and the apps ingress loop's
// appsIngressStatus), so the cache can move past the version a write was decided on without
// holding that write yet. Compared with such a cache, our own write would read as a change undone:
// a status written again, a transition time or lastSyncTime moved. Pure.

/** A write of ours: the resourceVersion it was decided on and the one it produced. */
export interface OwnWrite {
  readonly seenRv: string | undefined;
  readonly resultRv?: string | undefined;
}

/** Whether the cache, at `cachedRv`, is known to be older than `write` (so the write is what the object holds). */
export function cacheBehind(cachedRv: string | undefined, write: OwnWrite): boolean {
  // The version the write produced (a write that changed nothing leaves the version it was decided on).
  if (cachedRv === write.resultRv) return false;
  if (cachedRv === write.seenRv) return true;
  if (cachedRv === undefined || write.resultRv === undefined) return false;
  // Opaque to clients by contract; etcd-backed API servers hand out revisions (decimal integers), which
  // order the versions. Anything else: trust the cache once it moved (the stricter reading).
  if (!DECIMAL.test(cachedRv) || !DECIMAL.test(write.resultRv)) return false;
  return BigInt(cachedRv) < BigInt(write.resultRv);
}

const DECIMAL = /^[0-9]{1,30}$/;
