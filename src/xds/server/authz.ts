// Authorization by identity on the xDS port (docs/reference.md "Identity on the xDS port"): the
// client certificate's URI SAN, never what the client declares, decides what it may receive.
// - Discovery streams (ADS and the per-type services): every request that carries a node must name
//   the node group of the certificate (`node.cluster` = `<namespace>/<name>`); anything else ends
//   the stream with PERMISSION_DENIED before the request reaches the session, so a refused client
//   is never recorded, its ACKs and NACKs reach no status, and it receives nothing.
// - Every other service (CSDS, oooi.debug.v1, reflection) needs the administrator identity,
//   except the open ones (gRPC health). Where the server is given a token check (the operator), a
//   call without that identity may instead carry `authorization: Bearer <token>` metadata whose
//   user the cluster allows to debug (TokenReview + SubjectAccessReview, docs/security.md "Who may
//   debug"). Discovery streams never accept a token: Envoys and dhcp-agents keep mTLS.
import type { PeerCertificate } from "node:tls";
import {
  ResponderBuilder,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status as GrpcStatus,
  type Metadata,
  type ServerInterceptor,
} from "@grpc/grpc-js";
import { ADMIN_URI, parseIdentityUri, TRUST_DOMAIN, type Identity } from "../../pki/spiffe.js";
import { NO_IDENTITY } from "../client-status.js";
import { type Logger } from "../../util/logger.js";

/**
 * The oooi identities in a peer certificate's URI SANs. Node reports SANs as
 * `DNS:a, URI:spiffe://…` (tls.PeerCertificate.subjectaltname); a client without a certificate
 * has none.
 */
export function identitiesOf(cert: PeerCertificate | undefined): Identity[] {
  const san = cert?.subjectaltname;
  if (san === undefined || san === "") return [];
  const found: Identity[] = [];
  for (const entry of san.split(", ")) {
    if (!entry.startsWith("URI:")) continue;
    const identity = parseIdentityUri(entry.slice("URI:".length));
    if (identity !== undefined) found.push(identity);
  }
  return found;
}

/**
 * The identity what the server remembers of a client is filed under (client-status.ts clientKey):
 * the oooi URIs of its certificate, or NO_IDENTITY without one — a plaintext port, or TLS without
 * client certificates, where every client shares it and is trusted as it always was there.
 */
export function identityKey(cert: PeerCertificate | undefined): string {
  return keyOf(identitiesOf(cert));
}

function keyOf(identities: readonly Identity[]): string {
  if (identities.length === 0) return NO_IDENTITY;
  return identities
    .map((i) => (i.kind === "admin" ? ADMIN_URI : `spiffe://${TRUST_DOMAIN}/ns/${i.group}`))
    .sort()
    .join(" ");
}

/**
 * The identity key of the calls this module's interceptor let through, filed under the call's own
 * Metadata object (grpc-js hands the handler the very object the interceptor passed on): the stream
 * then reuses the certificate the interceptor read instead of asking the TLS socket again. Keyed by
 * object identity, which nothing a client sends can name.
 */
const admitted = new WeakMap<Metadata, string>();

/** The identity key the interceptor admitted this call's metadata under, or undefined without the interceptor. */
export function admittedIdentityKey(metadata: Metadata): string | undefined {
  return admitted.get(metadata);
}

function describe(identities: readonly Identity[]): string {
  if (identities.length === 0) return "a client without an oooi identity";
  return identities.map((i) => (i.kind === "admin" ? "the administrator" : `node group ${i.group}`)).join(", ");
}

/** Why `identities` may not receive node group `cluster`, or undefined when they may. */
export function nodeGroupDenial(identities: readonly Identity[], cluster: string): string | undefined {
  if (identities.some((i) => i.kind === "group" && i.group === cluster)) return undefined;
  return `${describe(identities)} may not receive node group ${cluster}`;
}

/** Why `identities` may not use an administrative service, or undefined when they may. */
export function adminDenial(identities: readonly Identity[], path: string): string | undefined {
  if (identities.some((i) => i.kind === "admin")) return undefined;
  return `${describe(identities)} may not call ${path}: it needs the administrator identity (spiffe://oooi/admin) or, on the operator, a bearer token allowed to debug`;
}

/** The answer of a token check: who the token is, or why it is refused (HTTP-like status). */
export type TokenDecision =
  | { readonly allowed: true; readonly user: string }
  | { readonly allowed: false; readonly status: number; readonly reason: string };

/** Checks a call's `authorization` metadata for the administrative services. */
export type TokenCheck = (authorization: string | undefined) => Promise<TokenDecision>;

function grpcCodeOf(status: number): GrpcStatus {
  if (status === 401) return GrpcStatus.UNAUTHENTICATED;
  if (status === 403) return GrpcStatus.PERMISSION_DENIED;
  if (status === 503) return GrpcStatus.RESOURCE_EXHAUSTED;
  return GrpcStatus.INTERNAL;
}

/** Which methods are discovery streams, and how tokens are checked. */
export interface AuthorizationOptions {
  readonly logger: Logger;
  /** gRPC paths (`/package.Service/Method`) of the discovery streams. */
  readonly discoveryPaths: ReadonlySet<string>;
  /** Lets a bearer token stand for the administrator identity on the administrative services. */
  readonly tokens?: TokenCheck;
}

/** The service anyone may call: health checks carry no data. */
const OPEN_SERVICE = "/grpc.health.v1.Health/";

function nodeClusterOf(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const node = (message as { node?: { cluster?: unknown } }).node;
  return typeof node?.cluster === "string" ? node.cluster : undefined;
}

/** A grpc-js server interceptor enforcing the rules above on every call. */
export function identityAuthorization(options: AuthorizationOptions): ServerInterceptor {
  return (method, call) => {
    const path = method.path;
    if (path.startsWith(OPEN_SERVICE)) return new ServerInterceptingCall(call);
    const identities = identitiesOf(call.getAuthContext().sslPeerCertificate);
    const discovery = options.discoveryPaths.has(path);
    let refused = false;
    const refuse = (reason: string, code = GrpcStatus.PERMISSION_DENIED): void => {
      refused = true;
      options.logger.warn({ peer: call.getPeer(), method: path, reason }, "xDS call refused");
      call.sendStatus({ code, details: reason });
    };
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const denial = discovery
          ? identities.some((i) => i.kind === "group")
            ? undefined
            : `${describe(identities)} may not open a discovery stream`
          : adminDenial(identities, path);
        if (denial === undefined) {
          admitted.set(metadata, keyOf(identities));
          next(metadata);
          return;
        }
        const authorization = metadata.get("authorization")[0];
        if (discovery || options.tokens === undefined || authorization === undefined) {
          refuse(denial);
          return;
        }
        options.tokens(typeof authorization === "string" ? authorization : authorization.toString()).then(
          (decision) => {
            if (!decision.allowed) {
              refuse(`${decision.reason} (${path})`, grpcCodeOf(decision.status));
              return;
            }
            options.logger.info({ peer: call.getPeer(), method: path, user: decision.user }, "debug call by token");
            admitted.set(metadata, keyOf(identities));
            next(metadata);
          },
          (e: unknown) => {
            refuse(`token check failed: ${(e as Error).message}`, GrpcStatus.INTERNAL);
          },
        );
      })
      .withOnReceiveMessage((message, next) => {
        if (refused) return;
        const cluster = discovery ? nodeClusterOf(message) : undefined;
        const denial = cluster === undefined ? undefined : nodeGroupDenial(identities, cluster);
        if (denial !== undefined) refuse(denial);
        else next(message);
      })
      .build();
    const responder = new ResponderBuilder()
      .withStart((next) => {
        next(listener);
      })
      .build();
    return new ServerInterceptingCall(call, responder);
  };
}
