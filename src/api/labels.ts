// Labels oooi puts on what it applies, read by the watchers (to narrow their lists) and by the
// operator (to prune). Kept in api/ so that reading them needs nothing of the operator.

/** Label on every object oooi applies: the pruning selector is `managed-by=oooi`. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** The value of MANAGED_BY_LABEL on oooi's objects. */
export const MANAGED_BY = "oooi";
/** Label selector matching every object oooi applies. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
