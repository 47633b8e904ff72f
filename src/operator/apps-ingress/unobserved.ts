// Which appsIngressStatus a pass starts from. The attachment's status has two writers (this loop and
// the reconcile pass's conditions), so the cached object can move past the version we read without
// holding our write yet: that cache is older than our write and must not read as a status change
// (it would move lastSyncTime, and a second write would follow). Pure.
import type { AppsIngressStatus } from "../../api/schema.js";

/** Our last status write on one attachment. */
export interface WrittenStatus {
  /** The resourceVersion of the object the write was decided on. */
  readonly readAt: string;
  /** The resourceVersion the write produced. */
  readonly resultRv: string | undefined;
  readonly status: AppsIngressStatus | undefined;
}

/** Whether the cache (at `cachedRv`) is known to be older than our write, so our write is the status. */
export function cacheBehind(cachedRv: string | undefined, mine: WrittenStatus): boolean {
  if (cachedRv === mine.readAt) return true;
  if (cachedRv === undefined || mine.resultRv === undefined || cachedRv === mine.resultRv) return false;
  // Opaque to clients by contract; etcd-backed API servers hand out revisions (decimal integers), which
  // order the versions. Anything else: trust the cache once it moved (the stricter reading).
  if (!DECIMAL.test(cachedRv) || !DECIMAL.test(mine.resultRv)) return false;
  return BigInt(cachedRv) < BigInt(mine.resultRv);
}

const DECIMAL = /^[0-9]{1,30}$/;
