// Whether this operator may bind Kea's SCC role itself (deploy/openshift's oooi-kea-scc-binder),
// asked once at start with SelfSubjectAccessReviews, which every authenticated user may create:
// `bind` on that ClusterRole and `create`/`patch` of RoleBindings in every namespace. Asking instead
// of trying keeps the base install quiet: the Infras say which binding to create, and no write is
// refused every pass. A grant added later takes effect when the operator restarts.
import { statusCode, type KubeRest } from "../../kube/rest.js";
import { KEA_SCC_ROLE } from "../desired/scc.js";
import type { KeaSccMode } from "../desired/settings.js";
import type { ApiRetry } from "./api-retry.js";

const RBAC = "rbac.authorization.k8s.io";
const CHECKS = [
  { verb: "bind", group: RBAC, resource: "clusterroles", name: KEA_SCC_ROLE },
  { verb: "create", group: RBAC, resource: "rolebindings" },
  { verb: "patch", group: RBAC, resource: "rolebindings" },
  { verb: "get", group: RBAC, resource: "rolebindings" },
] as const;

/** "bind" when every check is allowed, else "report"; "none" stays "none" (not OpenShift: nothing asked). */
export async function keaSccMode(
  discovered: KeaSccMode,
  rest: Pick<KubeRest, "request">,
  retry: Pick<ApiRetry, "until">,
): Promise<KeaSccMode> {
  if (discovered === "none") return "none";
  for (const resourceAttributes of CHECKS) {
    // An HTTP refusal of the review itself is an answer too (retried: only the API server being away).
    const allowed = await retry
      .until(
        `may ${resourceAttributes.verb} ${resourceAttributes.resource}`,
        () =>
          rest.request<{ status?: { allowed?: boolean } }>({
            method: "POST",
            path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SelfSubjectAccessReview",
              spec: { resourceAttributes },
            },
          }),
        (e) => statusCode(e) !== undefined,
      )
      .then(
        (r) => r.status?.allowed === true,
        (e: unknown) => {
          if (statusCode(e) === undefined) throw e;
          return false;
        },
      );
    if (!allowed) return "report";
  }
  return "bind";
}
