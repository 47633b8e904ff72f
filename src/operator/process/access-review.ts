// Who may read the operator's HTTP port (docs/security.md#the-operators-http-port), and who may call
// the debug services on its xDS port with a token instead of the admin certificate: the request's
// bearer token → TokenReview (authentication.k8s.io/v1) → its user → SubjectAccessReview
// (authorization.k8s.io/v1): may that user `get` the non-resource URL of the path? The checks of
// controller-runtime's secure metrics serving (filters.WithAuthenticationAndAuthorization). Both
// answers are kept briefly in bounded maps, so a scrape every few seconds costs no API call and a
// flood of made-up tokens costs at most MAX_IN_FLIGHT reviews at a time.
import { createHash } from "node:crypto";
import { AuthenticationV1Api, AuthorizationV1Api, type V1SubjectAccessReviewSpec } from "@kubernetes/client-node";
import type { KubeRest } from "../../kube/rest.js";
import type { Logger } from "../../util/logger.js";
import { TtlCache } from "../../util/ttl-cache.js";

/** What the operator tells a client it refuses; `allowed` requests go on. */
export type AccessDecision =
  | { readonly allowed: true; readonly user: string }
  | { readonly allowed: false; readonly status: 401 | 403 | 500 | 503; readonly reason: string };

/** How long an answer of the API server is reused. */
export const ACCESS_REVIEW_TTL_MS = 10_000;
/** Answers kept per map (tokens; user, verb and path). */
export const ACCESS_REVIEW_MAX_ENTRIES = 1_000;
/** Reviews waiting on the API server at once; past it a request not answered from the maps gets 503. */
export const ACCESS_REVIEW_MAX_IN_FLIGHT = 64;

export interface AccessReviewOptions {
  /** Reviews are created as the operator (its ClusterRole grants create on both kinds). */
  readonly rest: Pick<KubeRest, "api">;
  readonly now: () => number;
  readonly logger: Pick<Logger, "warn">;
  readonly ttlMs?: number;
  readonly maxEntries?: number;
  readonly maxInFlight?: number;
}

/** The user a TokenReview authenticated (authentication.k8s.io/v1 UserInfo). */
interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What a SubjectAccessReview asks about: a path, or a resource. */
type ReviewAttributes = Pick<V1SubjectAccessReviewSpec, "nonResourceAttributes" | "resourceAttributes">;

const NO_TOKEN = "Unauthorized: send Authorization: Bearer <token>, a token the cluster's API server accepts";
const unauthenticated = (reason: string): AccessDecision => ({ allowed: false, status: 401, reason });

/** Decides requests to the operator's HTTP port with the API server's TokenReview and SubjectAccessReview. */
export class AccessReview {
  readonly #opts: AccessReviewOptions;
  readonly #maxInFlight: number;
  readonly #users: TtlCache<string, Promise<UserInfo | undefined>>;
  readonly #grants: TtlCache<string, Promise<boolean>>;
  readonly #tokens: AuthenticationV1Api;
  readonly #access: AuthorizationV1Api;
  #inFlight = 0;

  constructor(opts: AccessReviewOptions) {
    this.#opts = opts;
    this.#tokens = opts.rest.api(AuthenticationV1Api);
    this.#access = opts.rest.api(AuthorizationV1Api);
    this.#maxInFlight = opts.maxInFlight ?? ACCESS_REVIEW_MAX_IN_FLIGHT;
    const max = opts.maxEntries ?? ACCESS_REVIEW_MAX_ENTRIES;
    const ttl = opts.ttlMs ?? ACCESS_REVIEW_TTL_MS;
    this.#users = new TtlCache(max, ttl, opts.now);
    this.#grants = new TtlCache(max, ttl, opts.now);
  }

  /** The decision for one request: its Authorization header, method and path (without the query). */
  async decide(authorization: string | undefined, method: string, path: string): Promise<AccessDecision> {
    // HEAD is served as GET; any other method is asked for as itself (the reader role grants only get).
    const verb = method === "HEAD" ? "get" : method.toLowerCase();
    return this.#decide(authorization, { nonResourceAttributes: { path, verb } }, `${verb} ${path}`);
  }

  /**
   * The decision for a call whose user needs `verb` on a resource of `group` in `namespace`: the
   * debug services on the xDS port ask for `debug` on the operator's resource in its namespace
   * (permissions.ts DEBUG_ACCESS).
   */
  async decideResource(
    authorization: string | undefined,
    attributes: {
      readonly group: string;
      readonly resource: string;
      readonly verb: string;
      readonly namespace: string;
    },
  ): Promise<AccessDecision> {
    const { group, resource, verb, namespace } = attributes;
    return this.#decide(
      authorization,
      { resourceAttributes: { group, resource, verb, namespace } },
      `${verb} ${resource}.${group} in namespace ${namespace}`,
    );
  }

  async #decide(
    authorization: string | undefined,
    attributes: ReviewAttributes,
    what: string,
  ): Promise<AccessDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return unauthenticated(NO_TOKEN);
    try {
      const user = await this.#cached(this.#users, tokenKey(token), () => this.#authenticate(token));
      if (user === undefined) return unauthenticated("Unauthorized: the API server did not accept the token");
      const key = JSON.stringify([
        user.username,
        user.uid ?? "",
        [...(user.groups ?? [])].sort(),
        sortedExtra(user),
        attributes,
      ]);
      const allowed = await this.#cached(this.#grants, key, () => this.#authorize(user, attributes));
      return allowed
        ? { allowed: true, user: user.username }
        : { allowed: false, status: 403, reason: `Forbidden: user "${user.username}" may not ${what}` };
    } catch (e) {
      if (e instanceof Busy) return { allowed: false, status: 503, reason: e.message };
      this.#opts.logger.warn({ err: (e as Error).message, what }, "access review failed; refusing the request");
      return { allowed: false, status: 500, reason: "Access review failed (the operator's log says why)" };
    }
  }

  /** The cached answer for `key`, else `ask`'s, kept unless it fails (concurrent askers share one review). */
  async #cached<T>(cache: TtlCache<string, Promise<T>>, key: string, ask: () => Promise<T>): Promise<T> {
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    if (this.#inFlight >= this.#maxInFlight)
      throw new Busy(`Too many access reviews in flight (${String(this.#maxInFlight)}); retry`);
    this.#inFlight++;
    const answer = ask().finally(() => {
      this.#inFlight--;
    });
    cache.set(key, answer);
    answer.catch(() => {
      if (cache.get(key) === answer) cache.delete(key);
    });
    return answer;
  }

  async #authenticate(token: string): Promise<UserInfo | undefined> {
    const review = await this.#tokens.createTokenReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
    });
    const user = review.status?.user;
    if (review.status?.authenticated !== true || typeof user?.username !== "string" || user.username === "")
      return undefined;
    return {
      username: user.username,
      ...(user.uid === undefined ? {} : { uid: user.uid }),
      ...(user.groups === undefined ? {} : { groups: user.groups }),
      ...(user.extra === undefined ? {} : { extra: user.extra }),
    };
  }

  async #authorize(user: UserInfo, attributes: ReviewAttributes): Promise<boolean> {
    const review = await this.#access.createSubjectAccessReview({
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: user.username,
          ...(user.uid === undefined ? {} : { uid: user.uid }),
          groups: [...(user.groups ?? [])],
          ...(user.extra === undefined
            ? {}
            : { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) }),
          ...attributes,
        },
      },
    });
    return review.status?.allowed === true;
  }
}

class Busy extends Error {}

/** The token of `Authorization: Bearer <token>` (the scheme is case-insensitive, RFC 7235). */
export function bearerToken(header: string | undefined): string | undefined {
  return /^bearer +(\S+) *$/i.exec(header ?? "")?.[1];
}

// Tokens are credentials: the maps hold their hashes only.
function tokenKey(token: string): string {
  return createHash("sha256").update(token).digest("base64");
}

function sortedExtra(user: UserInfo): [string, string[]][] {
  return Object.entries(user.extra ?? {})
    .map(([k, v]): [string, string[]] => [k, [...v].sort()])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
